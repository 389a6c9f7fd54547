"""``scripts/bench --converter marker``: CPU seconds per page and memory of marker 2.x's
conversion processes, the runner's own share of a GPU runner's work, measured on the CPU with the
model servers replaced by stubs that answer at once. Writes bench/results/<date>-<label>/."""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import os
import platform
import shlex
import sys
import tempfile
import time
from pathlib import Path

import psutil

from bench.marker import documents
from bench.marker.measure import side_by_side
from bench.marker.models import Case, Machine, MarkerBench
from bench.marker.report import write_results
from bench.marker.stubs import running_servers
from bench.paths import RESULTS
from pagefleet.settings import load_settings


def _ints(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"positive integers separated by commas, not {text!r}")
    return values


def _positive(text: str) -> int:
    """A count of at least one: the report's figures are the warm rounds'."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"at least 1 (the report reads warm rounds), not {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scripts/bench --converter marker", description=__doc__)
    p.add_argument("inputs", nargs="*", type=Path, help="real PDFs: each one's first chunk too")
    p.add_argument("--converter", default="marker", choices=["marker"])
    p.add_argument("--modes", default="balanced,fast", help="marker modes, e.g. balanced,fast")
    p.add_argument("--workers", type=_ints, default=[1, 2], help="W values, e.g. 1,2")
    p.add_argument(
        "--repeat", type=_positive, default=2, help="warm rounds after the first (at least 1)"
    )
    p.add_argument("--chunk-pages", type=int, default=16, help="pages per chunk (the splitter's)")
    p.add_argument(
        "--inference-parallel", type=int, default=8, help="PAGEFLEET_MARKER_INFERENCE_PARALLEL"
    )
    p.add_argument(
        "--convert-threads", type=int, default=0, help="PAGEFLEET_CONVERT_THREADS (0: default)"
    )
    p.add_argument("--label", default="marker-cpu", help="names the results folder")
    p.add_argument("--out", type=Path, help="results folder (default bench/results/DATE-LABEL)")
    return p


def machine(load_before: list[float]) -> Machine:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return Machine(
        cpus=len(os.sched_getaffinity(0)),
        physical_cores=psutil.cpu_count(logical=False),
        cpu_model=model,
        load_average_before=load_before,
        load_average_after=list(os.getloadavg()),
        marker_pdf=importlib.metadata.version("marker-pdf"),
        surya_ocr=importlib.metadata.version("surya-ocr"),
        torch=importlib.metadata.version("torch"),
    )


async def run(args: argparse.Namespace, scratch: Path) -> list[Case]:
    text = documents.text_chunk(scratch, args.chunk_pages)
    chunks = [text, documents.scan_of(text, scratch)]
    chunks += [documents.first_pages(pdf, args.chunk_pages, scratch) for pdf in args.inputs]
    cases = []
    with running_servers() as servers:
        for mode in args.modes.split(","):
            settings = load_settings(
                converter="marker",
                marker_mode=mode,
                marker_inference_url=f"{servers.vlm.url}/v1",
                marker_inference_parallel=args.inference_parallel,
                convert_threads=args.convert_threads,
                # Measured, not enforced: the bench reports what a process needs.
                convert_memory_mb=65536,
                convert_timeout_s=3600,
            )
            for workers in args.workers:
                print(f"marker {mode}, W={workers} ...", file=sys.stderr, flush=True)
                processes = await side_by_side(
                    settings, workers, chunks, args.repeat, servers, scratch / f"{mode}-{workers}"
                )
                cases.append(
                    Case(
                        mode=mode,
                        workers=workers,
                        convert_threads=args.convert_threads,
                        inference_parallel=args.inference_parallel,
                        processes=processes,
                    )
                )
    return cases


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    load_before = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="marker-bench-") as scratch:
        cases = asyncio.run(run(args, Path(scratch)))
    results = MarkerBench(
        command=shlex.join(["scripts/bench", *(sys.argv[1:] if argv is None else argv)]),
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        chunk_pages=args.chunk_pages,
        repeat=args.repeat,
        documents={
            "text": f"generated: A4, a heading and five paragraphs (~3,000 characters) a page, "
            f"text layer; {args.chunk_pages} pages",
            "scan": f"the text chunk rendered at {documents.SCAN_DPI} dpi in grey, one JPEG a "
            "page, no text layer",
            **{pdf.stem: f"first {args.chunk_pages} pages of {pdf.name}" for pdf in args.inputs},
        },
        machine=machine(load_before),
        cases=cases,
    )
    out = args.out or RESULTS / f"{time.strftime('%Y-%m-%d')}-{args.label}"
    for path in write_results(results, out):
        print(path)
    return 0
