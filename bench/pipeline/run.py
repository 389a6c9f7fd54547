"""One benchmark run, top to bottom: the splitter alone, then the pipeline at each W, each of
its rounds just after a round of the plain converter and of ``xargs -P W``.

This host's speed drifts by a third over minutes; measured apart, a baseline and the pipeline
would be compared across that drift. Workers are warm before anything is timed
(:meth:`LocalPipeline.wait_ready` plus one untimed warm-up job, see
:mod:`bench.pipeline.pipeline_run`).
"""

from __future__ import annotations

import os
import platform
import time
from collections import defaultdict
from typing import Any

from bench.pipeline.cold import cold_pairs, cold_targets
from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.models import BenchResults, Host, HostInfo, RunSettings
from bench.pipeline.stacks import run_deployed, run_embedded
from bench.pipeline.standalone import (
    PlainRounds,
    XargsRound,
    measure_split_cost,
    xargs_round,
    xargs_run,
)
from bench.pipeline.summary import summarize_pipeline
from bench.pipeline.targets import targets


def host_info() -> HostInfo:
    return HostInfo(
        cpus=os.cpu_count(),
        load_average=[round(x, 2) for x in os.getloadavg()],
        platform=platform.platform(),
        python=platform.python_version(),
    )


def run_bench(config: BenchConfig, command: str) -> BenchResults:
    docs = collect_documents(config)
    if not docs:
        raise ValueError("nothing to measure: give PDFs, a folder or --synthetic PAGES")
    started = time.time()
    host_before = host_info()
    splits = measure_split_cost(docs, config)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_stack = run_deployed if config.deployed else run_embedded
    baselines: dict[int, list[dict[str, Any]]] = defaultdict(list)
    xargs_rounds: dict[int, list[XargsRound]] = defaultdict(list)
    with PlainRounds(docs, config) as plain:

        def before_round(workers: int) -> None:
            baselines[workers].append(plain.round())
            if config.xargs:
                xargs_rounds[workers].append(xargs_round(docs, workers))

        runs = run_stack(docs, config, stamp, before_round)
        baseline = plain.baseline()
    xargs = [xargs_run(docs, w, xargs_rounds[w]) for w in config.workers] if config.xargs else None
    # After the warm rounds, with no stack or baseline process of this one left running.
    cold = None
    if config.cold and not config.deployed:
        cold = cold_pairs([d.path for d in docs], config.workers, config.cold)
    pipeline = [
        summarize_pipeline(
            run,
            docs,
            baseline,
            config.chunk_pages,
            baselines[run.workers],
            xargs_rounds[run.workers] if config.xargs else None,
        )
        for run in runs
    ]
    return BenchResults(
        command=command,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        duration_s=round(time.time() - started, 1),
        host=Host(before=host_before, after=host_info()),
        mode="deployed" if config.deployed else "embedded",
        settings=RunSettings(
            converter=config.converter,
            chunk_pages=config.chunk_pages,
            repeat=config.repeat,
            workers=config.workers,
            warm_workers="timed after every worker loaded its converter and one untimed "
            "warm-up job ran",
        ),
        documents=docs,
        baseline=baseline,
        splitter=splits,
        pipeline=pipeline,
        targets=targets(docs, pipeline, splits, baseline, xargs) + cold_targets(cold),
        xargs=xargs,
        cold=cold,
    )
