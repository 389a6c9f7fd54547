"""``scripts/bench``: pages/s of the converter alone and of the pipeline, where the seconds go,
and how it scales with W. Writes bench/results/<date>-<label>/."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from bench.paths import RESULTS
from bench.pipeline.config import BenchConfig
from bench.pipeline.report import write_results
from bench.pipeline.run import run_bench


def _ints(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"positive integers separated by commas, not {text!r}")
    return values


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scripts/bench", description=__doc__)
    p.add_argument("inputs", nargs="*", type=Path, help="PDFs or folders of PDFs")
    p.add_argument("--workers", type=_ints, default=[1, 2], help="W values, e.g. 1,2,4")
    p.add_argument("--repeat", type=int, default=3, help="rounds; medians are reported")
    p.add_argument("--converter", default="text-layer", choices=["text-layer", "marker"])
    p.add_argument(
        "--synthetic",
        type=_ints,
        default=[],
        metavar="PAGES",
        help="also measure generated text documents of these page counts, e.g. 2000",
    )
    p.add_argument(
        "--scan",
        type=_ints,
        default=[],
        metavar="PAGES",
        help="also measure generated image-only documents (every page OCR) of these page counts",
    )
    p.add_argument(
        "--no-xargs",
        action="store_true",
        help="skip the `xargs -P W` baseline (one plain converter process per file)",
    )
    p.add_argument(
        "--cold",
        type=int,
        default=0,
        metavar="N",
        help="also N pairs of a cold `pagefleet run` and `xargs -P W` at each W, start-up "
        "counted, each whole process tree's CPU (embedded stack only)",
    )
    p.add_argument("--chunk-pages", type=int, default=16, help="PAGEFLEET_CHUNK_PAGES")
    p.add_argument(
        "--chunk-min-cost", type=float, help="PAGEFLEET_CHUNK_MIN_COST_S (default: its default)"
    )
    p.add_argument(
        "--splitter-pages",
        type=int,
        default=2000,
        help="pages of the synthetic document the splitter is also measured on (0: none)",
    )
    stack = p.add_mutually_exclusive_group()
    stack.add_argument("--endpoint-url", help="a running stack's S3 endpoint (pagefleet up)")
    stack.add_argument(
        "--stack",
        dest="stack_outputs",
        metavar="OUTPUTS_JSON",
        type=Path,
        help="`terraform output -json` of a deployed stack, as `pagefleet --stack` takes it",
    )
    p.add_argument("--bucket", help="the deployed stack's bucket, if not in --stack")
    p.add_argument(
        "--cache-dir", type=Path, help="where synthetic documents are kept (default ~/.cache)"
    )
    p.add_argument("--label", default="run", help="names the results folder")
    p.add_argument("--out", type=Path, help="results folder (default bench/results/DATE-LABEL)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.inputs and not args.synthetic and not args.scan:
        parser().error("give PDFs or folders, or --synthetic PAGES, or --scan PAGES")
    config = BenchConfig(
        inputs=args.inputs,
        synthetic=args.synthetic,
        scans=args.scan,
        xargs=not args.no_xargs,
        cold=args.cold,
        workers=args.workers,
        repeat=args.repeat,
        converter=args.converter,
        chunk_pages=args.chunk_pages,
        chunk_min_cost_s=args.chunk_min_cost,
        splitter_pages=args.splitter_pages,
        endpoint_url=args.endpoint_url,
        stack_outputs=args.stack_outputs,
        bucket=args.bucket,
    )
    if args.cache_dir:
        config.cache_dir = args.cache_dir
    command = shlex.join(["scripts/bench", *(sys.argv[1:] if argv is None else argv)])
    results = run_bench(config, command)
    out = args.out or RESULTS / f"{time.strftime('%Y-%m-%d')}-{args.label}"
    for path in write_results(results, out):
        print(path)
    for row in results.targets:
        print(f"{'met ' if row.met else 'MISS'} {row.name}: {row.value:g} ({row.target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
