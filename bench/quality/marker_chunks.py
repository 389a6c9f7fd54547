"""``scripts/quality --converter marker``: each PDF converted by the real marker whole and in
chunks (:mod:`bench.quality.marker_runs`, the model servers deterministic stubs), and where the
two Markdown texts differ (:mod:`bench.quality.chunk_diff`). A structural check of chunking and
assembly, not of the models' quality. Run by the runner image's Python (``$MARKER_PYTHON``, or
.venv-marker's)."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.quality.chunk_diff import ChunkDiff, DocResult, report
from bench.quality.marker_runs import (
    chunked_markdown,
    settings_values,
    stub_servers,
    whole_markdown,
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scripts/quality --converter marker", description=__doc__)
    p.add_argument("paths", nargs="*", type=Path, help="PDFs or folders of PDFs")
    p.add_argument("--converter", choices=["marker"], default="marker")
    p.add_argument("--chunk-pages", type=int, default=16, help="pages per chunk (the splitter's)")
    p.add_argument(
        "--max-pages", type=int, default=100, help="leave out longer documents (0: none)"
    )
    p.add_argument("--out", type=Path, help="also write the report to this file")
    p.add_argument("--keep", type=Path, help="write each document's two Markdown texts here")
    return p


def pdfs_of(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found += sorted(path.glob("*.pdf")) if path.is_dir() else [path]
    return found


def page_count(pdf: Path) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return len(doc)
    finally:
        doc.close()


def compare(pdf: Path, vlm_url: str, chunk_pages: int, keep: Path | None) -> DocResult:
    from pagefleet.settings import load_settings

    pages = page_count(pdf)
    chunks = -(-pages // chunk_pages)
    # A whole document converts in one process: a long one may take long on a busy CPU.
    values = settings_values(vlm_url, convert_timeout_s=max(300, 20 * chunk_pages))
    started = time.monotonic()
    try:
        whole = whole_markdown(pdf, values, timeout_s=max(600, 20 * pages))
    except subprocess.CalledProcessError as e:  # a row of the report, not the end of it
        error = (e.stderr or "").strip().splitlines()[-1:] or [repr(e)]
        return DocResult(pdf.name, pages, chunks, time.monotonic() - started, 0, None, error[0])
    whole_s = time.monotonic() - started
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="marker-chunks-") as work:
        try:
            chunked = asyncio.run(
                chunked_markdown(pdf, load_settings(**values), chunk_pages, Path(work))
            )
        except Exception as e:
            return DocResult(
                pdf.name, pages, chunks, whole_s, time.monotonic() - started, None, repr(e)
            )
    chunked_s = time.monotonic() - started
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{pdf.stem}.whole.md").write_text(whole)
        (keep / f"{pdf.stem}.chunked-{chunk_pages}.md").write_text(chunked)
    return DocResult(pdf.name, pages, chunks, whole_s, chunked_s, ChunkDiff.of(whole, chunked))


def main(argv: list[str] | None = None) -> int:
    from bench.quality.cli import DEFAULT_FOLDER

    args = parser().parse_args(argv)
    pdfs = pdfs_of([p.resolve() for p in args.paths or [DEFAULT_FOLDER]])
    if not pdfs:
        print("no PDFs", file=sys.stderr)
        return 2
    counts = {pdf: page_count(pdf) for pdf in pdfs}
    skipped = [(p.name, n) for p, n in counts.items() if args.max_pages and n > args.max_pages]
    results = []
    with stub_servers() as vlm_url:
        for pdf, pages in counts.items():
            if args.max_pages and pages > args.max_pages:
                continue
            result = compare(pdf, vlm_url, args.chunk_pages, args.keep)
            results.append(result)
            print(
                f"compared {pdf.name}: {result.whole_s + result.chunked_s:.0f} s", file=sys.stderr
            )
    text = report(results, skipped, args.chunk_pages)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0
