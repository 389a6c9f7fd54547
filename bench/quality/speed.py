"""CPU seconds of the text-layer converter next to pdftext's plain text, paired per document.

``python -m bench.quality.speed [--repeats N] PDF...``: each document is converted as
:mod:`bench.quality.child` times it (pages, outline, Markdown) and read by
``pdftext.plain_text_output``, alternately (A B A B ...), in this one process, the least CPU
seconds of each kept: the machine is shared, and what other work takes from one run it takes
from its pair alike. Documents with a page to OCR are left out, as the report's speed ratio
leaves them out (OCR is not what this times). Prints one row per document and the overall
ratio (sum of pdftext's seconds over sum of ours, as the report's overall row).

To compare two trees one after the other, run this file by its path with ``PYTHONPATH`` set
to the tree to time (``python -m`` would put the working directory's tree first).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pdftext.extraction import plain_text_output

from pagefleet.layout import render_document
from pagefleet.layout.outline import read_outline
from runner.converters.text_layer import extract_pages
from runner.converters.text_layer import page as page_module


def _cpu(fn: Callable[[], Any]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def _needs_ocr(pdf: Path) -> bool:
    """Whether the converter would OCR a page of ``pdf`` (found without running OCR)."""
    asked: list[int] = []

    def no_ocr(*args: Any) -> list[Any]:
        asked.append(1)
        return []

    real = page_module.ocr_lines
    page_module.ocr_lines = no_ocr  # type: ignore[assignment]
    try:
        extract_pages(pdf, 1)
    finally:
        page_module.ocr_lines = real
    return bool(asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdfs", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, least kept")
    args = parser.parse_args()
    ours_total = floor_total = 0.0
    print(f"{'document':48} {'ours s':>8} {'pdftext s':>9} {'ratio':>6}")
    for pdf in args.pdfs:
        if _needs_ocr(pdf):
            print(f"{pdf.name[:48]:48} (OCR: left out)")
            continue

        def convert(pdf: Path = pdf) -> None:
            render_document(extract_pages(pdf, 1), read_outline(pdf))

        def plain(pdf: Path = pdf) -> None:
            plain_text_output(str(pdf))

        ours = floor = float("inf")
        for _ in range(args.repeats):
            ours = min(ours, _cpu(convert))
            floor = min(floor, _cpu(plain))
        ours_total += ours
        floor_total += floor
        print(f"{pdf.name[:48]:48} {ours:8.3f} {floor:9.3f} {floor / ours:6.2f}", flush=True)
    ratio = floor_total / ours_total if ours_total else 0.0
    print(f"{'overall':48} {ours_total:8.3f} {floor_total:9.3f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
