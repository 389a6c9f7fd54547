"""The converter and the splitter measured alone, each in a fresh interpreter.

:mod:`bench.baseline` and :mod:`bench.split_cost` run as ``python -m`` children, so their time
and peak RSS are their own, not this harness's; this module starts them and reads their JSON.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.config import BenchConfig
from bench.documents import synthetic_document
from bench.models import Baseline, BaselineDocument, Document, SplitCost, XargsDocument, XargsRun
from bench.targets import SPLIT_TARGET_S, split_rss_budget_mb


def run_json(args: list[str]) -> dict[str, Any]:
    """A bench module in a fresh interpreter; its stdout is one JSON object."""
    done = subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {done.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure_baseline(docs: list[Document], config: BenchConfig) -> Baseline:
    raw = run_json(
        [
            "bench.baseline",
            "--converter",
            config.converter,
            "--repeat",
            str(config.repeat),
            *(str(d.path) for d in docs),
        ]
    )
    per_document = {}
    for doc in docs:
        seconds = raw["seconds"][str(doc.path)]
        median = statistics.median(seconds)
        per_document[doc.name] = BaselineDocument(
            seconds=[round(s, 4) for s in seconds],
            median_s=round(median, 4),
            cpu_s=round(statistics.median(raw["cpu_seconds"][str(doc.path)]), 4),
            pages_per_s=round(doc.pages / median, 3) if median else 0.0,
        )
    total_s = sum(d.median_s for d in per_document.values())
    pages = sum(d.pages for d in docs)
    return Baseline(
        what="the converter on each whole document in one fresh process (plain invocation); "
        "median of the rounds",
        per_document=per_document,
        pages=pages,
        total_s=round(total_s, 4),
        pages_per_s=round(pages / total_s, 3) if total_s else 0.0,
        import_s=round(raw["import_s"], 3),
        peak_rss_mb=round(raw["peak_rss_mb"], 1),
    )


def measure_split_cost(docs: list[Document], config: BenchConfig) -> list[SplitCost]:
    """Time and peak RSS of the splitter on the largest input and the big synthetic one."""
    measured = sorted(docs, key=lambda d: d.pages)[-1:]
    if config.splitter_pages:
        big = synthetic_document(config.splitter_pages, config)
        if all(d.path != big.path for d in measured):
            measured.append(big)
    rows = []
    for doc in measured:
        raw = run_json(
            [
                "bench.split_cost",
                str(doc.path),
                "--chunk-pages",
                str(config.chunk_pages),
                *(
                    ["--chunk-min-cost", str(config.chunk_min_cost_s)]
                    if config.chunk_min_cost_s is not None
                    else []
                ),
                "--repeat",
                str(config.repeat),
            ]
        )
        seconds = statistics.median(raw["seconds"])
        budget_mb = split_rss_budget_mb(doc.bytes)
        rows.append(
            SplitCost(
                name=doc.name,
                pages=doc.pages,
                bytes=doc.bytes,
                chunks=raw["chunks"],
                seconds=round(seconds, 4),
                peak_rss_mb=round(raw["peak_rss_mb"], 1),
                rss_before_mb=round(raw["rss_before_mb"], 1),
                rss_budget_mb=round(budget_mb, 1),
                time_target_met=seconds <= SPLIT_TARGET_S,
                rss_target_met=raw["peak_rss_mb"] <= budget_mb,
            )
        )
    return rows


def measure_xargs(docs: list[Document], workers: int, config: BenchConfig) -> XargsRun:
    """``xargs -P W``: a fresh plain converter process per file, W side by side, each with
    cores // W OCR threads; the makespan over every file (median of the rounds)."""
    threads = max(1, (os.cpu_count() or 1) // workers)
    root = Path(__file__).resolve().parents[1]
    command = (
        f"xargs -0 -n 1 -P {workers} {shlex.quote(sys.executable)} -m bench.plain "
        f"--ocr-threads {threads}"
    )
    files = b"".join(str(d.path).encode() + b"\0" for d in docs)
    makespans: list[float] = []
    lines: dict[str, list[dict[str, Any]]] = {str(d.path): [] for d in docs}
    for _ in range(config.repeat):
        started = time.perf_counter()
        done = subprocess.run(
            ["bash", "-c", command], input=files, capture_output=True, check=False, cwd=root
        )
        makespans.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise RuntimeError(f"xargs failed: {done.stderr.decode()[-2000:]}")
        for line in done.stdout.decode().splitlines():
            row = json.loads(line)
            lines[row["file"]].append(row)
    makespan = statistics.median(makespans)
    pages = sum(d.pages for d in docs)
    return XargsRun(
        workers=workers,
        command=f"printf '%s\\0' FILES... | {command}",
        ocr_threads=threads,
        makespan_s=[round(m, 3) for m in makespans],
        makespan_median_s=round(makespan, 3),
        pages_per_s=round(pages / makespan, 3) if makespan else 0.0,
        per_document={
            d.name: XargsDocument(
                seconds=round(statistics.median(r["seconds"] for r in lines[str(d.path)]), 3),
                cpu_s=round(statistics.median(r["cpu_s"] for r in lines[str(d.path)]), 3),
            )
            for d in docs
        },
    )
