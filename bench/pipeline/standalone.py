"""The converter and the splitter measured alone, each in an interpreter of its own.

:mod:`bench.pipeline.baseline`, :mod:`bench.pipeline.plain` (under ``xargs``) and
:mod:`bench.pipeline.split_cost` run as ``python -m`` children from the repository root, so their
time and peak RSS are their own, not this harness's; this module starts them and reads their
JSON.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from bench.paths import ROOT
from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import synthetic_document
from bench.pipeline.models import (
    Baseline,
    BaselineDocument,
    Document,
    SplitCost,
    XargsDocument,
    XargsRun,
)
from bench.pipeline.targets import SPLIT_TARGET_S, split_rss_budget_mb


def run_json(args: list[str]) -> dict[str, Any]:
    """A bench module in a fresh interpreter; its stdout is one JSON object."""
    done = subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {done.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


class PlainRounds:
    """The plain converter in a process of its own (:mod:`bench.pipeline.baseline`), asked for one
    round over every document at a time: ``with PlainRounds(docs, config) as plain:``."""

    def __init__(self, docs: list[Document], config: BenchConfig) -> None:
        self.docs = docs
        self.rounds: list[dict[str, Any]] = []
        # A file, not a pipe: nothing reads the child's stderr until it fails.
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed in __exit__)
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.pipeline.baseline",
                "--converter",
                config.converter,
                *(str(d.path) for d in docs),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=ROOT,
            text=True,
        )

    @property
    def pid(self) -> int:
        return self._process.pid

    def round(self) -> dict[str, Any]:
        """One round: each document's seconds and CPU seconds, by path."""
        process = self._process
        assert process.stdin and process.stdout
        process.stdin.write("\n")
        process.stdin.flush()
        line = process.stdout.readline()
        if not line:
            process.wait()
            self._stderr.seek(0)
            raise RuntimeError(f"bench.pipeline.baseline failed: {self._stderr.read()[-2000:]}")
        raw: dict[str, Any] = json.loads(line)
        self.rounds.append(raw)
        return raw

    def baseline(self) -> Baseline:
        """Every round so far, as the report's baseline (medians of the rounds)."""
        per_document = {}
        for doc in self.docs:
            seconds = [r["seconds"][str(doc.path)] for r in self.rounds]
            cpu = [r["cpu_seconds"][str(doc.path)] for r in self.rounds]
            median = statistics.median(seconds)
            per_document[doc.name] = BaselineDocument(
                seconds=[round(s, 4) for s in seconds],
                median_s=round(median, 4),
                cpu_s=round(statistics.median(cpu), 4),
                pages_per_s=round(doc.pages / median, 3) if median else 0.0,
            )
        total_s = sum(d.median_s for d in per_document.values())
        pages = sum(d.pages for d in self.docs)
        return Baseline(
            what="the converter on each whole document in one long-lived process (plain "
            "invocation), a round over every document before each round of the pipeline; "
            "median of the rounds",
            per_document=per_document,
            pages=pages,
            total_s=round(total_s, 4),
            pages_per_s=round(pages / total_s, 3) if total_s else 0.0,
            import_s=round(self.rounds[0]["import_s"], 3),
            peak_rss_mb=round(max(r["peak_rss_mb"] for r in self.rounds), 1),
        )

    def __enter__(self) -> PlainRounds:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()  # the child's loop ends on EOF
        try:
            self._process.wait(30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._stderr.close()


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
                "bench.pipeline.split_cost",
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


@dataclass
class XargsRound:
    makespan_s: float
    rows: list[dict[str, Any]]  # bench.pipeline.plain's line per file


def xargs_ocr_threads(workers: int) -> int:
    """Each of W plain processes' OCR threads: the same share of the cores as a worker's."""
    return max(1, (os.cpu_count() or 1) // workers)


def xargs_command(workers: int) -> str:
    """``xargs -P W``: a fresh plain converter process per file, W side by side."""
    return (
        f"xargs -0 -n 1 -P {workers} {shlex.quote(sys.executable)} -m bench.pipeline.plain "
        f"--ocr-threads {xargs_ocr_threads(workers)}"
    )


def xargs_round(docs: list[Document], workers: int) -> XargsRound:
    """One ``xargs -P W`` pass over every file: its makespan."""
    files = b"".join(str(d.path).encode() + b"\0" for d in docs)
    started = time.perf_counter()
    done = subprocess.run(
        ["bash", "-c", xargs_command(workers)],
        input=files,
        capture_output=True,
        check=False,
        cwd=ROOT,
    )
    makespan = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"xargs failed: {done.stderr.decode()[-2000:]}")
    return XargsRound(makespan, [json.loads(line) for line in done.stdout.decode().splitlines()])


def xargs_run(docs: list[Document], workers: int, rounds: list[XargsRound]) -> XargsRun:
    """The rounds of ``xargs -P W`` as the report's row: the median makespan."""
    makespan = statistics.median(r.makespan_s for r in rounds)
    pages = sum(d.pages for d in docs)
    lines: dict[str, list[dict[str, Any]]] = {str(d.path): [] for d in docs}
    for r in rounds:
        for row in r.rows:
            lines[row["file"]].append(row)
    return XargsRun(
        workers=workers,
        command=f"printf '%s\\0' FILES... | {xargs_command(workers)}",
        ocr_threads=xargs_ocr_threads(workers),
        makespan_s=[round(r.makespan_s, 3) for r in rounds],
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
