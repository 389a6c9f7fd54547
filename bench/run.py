"""One benchmark run, top to bottom: the plain converter, the splitter, the pipeline at each W.

Workers are warm before anything is timed (:meth:`LocalPipeline.wait_ready` plus one untimed
warm-up job, see :mod:`bench.pipeline_run`).
"""

from __future__ import annotations

import os
import platform
import time

from bench.config import BenchConfig
from bench.documents import collect_documents
from bench.models import BenchResults, Host, HostInfo, RunSettings
from bench.stacks import run_deployed, run_embedded
from bench.standalone import measure_baseline, measure_split_cost, measure_xargs
from bench.targets import targets


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
    baseline = measure_baseline(docs, config)
    xargs = [measure_xargs(docs, w, config) for w in config.workers] if config.xargs else None
    splits = measure_split_cost(docs, config)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    run_stack = run_deployed if config.deployed else run_embedded
    pipeline = run_stack(docs, config, baseline, stamp)
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
        targets=targets(docs, pipeline, splits, baseline, xargs),
        xargs=xargs,
    )
