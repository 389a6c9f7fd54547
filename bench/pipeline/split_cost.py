"""The splitter's own cost: open, validate, measure page costs, plan and cut one document, in a
fresh process.

Run as ``python -m bench.pipeline.split_cost FILE``; prints one JSON object. A fresh process, so the
peak RSS is the splitter's (plus the interpreter), not the harness's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import psutil

from bench.pipeline.memory import peak_rss_mb
from pagefleet.costs import measure_pages, plan_policy
from pagefleet.pdf import cut_chunks, open_pdf
from pagefleet.planning import plan_by_cost
from pagefleet.settings import Settings, load_settings


def split_once(path: Path, settings: Settings) -> tuple[float, int, int, float]:
    """Seconds, chunk count, chunk bytes and page-measuring seconds for the splitter's work on
    ``path``.

    The calls of :func:`pagefleet.splitting.split_upload` less the S3 writes and the outline:
    the file is read, opened and checked, its pages' costs measured, planned, and every chunk
    PDF is cut and held once.
    """
    started = time.perf_counter()
    data = path.read_bytes()
    doc = open_pdf(data, max_bytes=settings.max_bytes, max_pages=settings.max_pages)
    written = 0
    try:
        costs = measure_pages(doc, settings)
        plan = plan_by_cost(costs.seconds, plan_policy(settings, costs))
        for _, pdf in cut_chunks(doc, plan):
            written += len(pdf)
    finally:
        doc.close()
    return time.perf_counter() - started, len(plan), written, costs.measure_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.pipeline.split_cost", description=__doc__
    )
    parser.add_argument("file", type=Path)
    parser.add_argument("--chunk-pages", type=int, default=16)
    parser.add_argument("--chunk-min-cost", type=float)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    overrides: dict[str, object] = {"chunk_pages": args.chunk_pages}
    if args.chunk_min_cost is not None:
        overrides["chunk_min_cost_s"] = args.chunk_min_cost
    settings = load_settings(**overrides)
    rss_before = psutil.Process().memory_info().rss
    runs = [split_once(args.file, settings) for _ in range(args.repeat)]
    json.dump(
        {
            "seconds": [r[0] for r in runs],
            "chunks": runs[0][1],
            "chunk_bytes": runs[0][2],
            "measure_s": [r[3] for r in runs],
            "rss_before_mb": rss_before / 2**20,
            "peak_rss_mb": peak_rss_mb(),
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
