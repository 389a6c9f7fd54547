"""Resident memory and CPU of each OCR page over 28 varied scans, twice, with the heap handed
back after every page (``every``), kept up to the OCR module's bound (``keep``), or never handed
back (``never``).

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session19/ocr_heap.py MODE

The scans: pages of six shared-corpus documents rendered at 150, 200 or 250 dpi into grey JPEGs,
one a page (made once, into SCANS).
"""

import resource
import sys
import time
from pathlib import Path

import pypdfium2
from fpdf import FPDF

import runner.converters.ocr as ocr
from bench.marker.documents import add_scan
from runner.converters.text_layer import extract_pages

SCANS = Path("/work/tmp19/varied-scan.pdf")
PAGES = {
    "unstructured__irs-irm-400p": range(3, 400, 40),
    "pymupdf__mupdf_explored": range(5, 285, 60),
    "samplefiles__GeoTopo-komprimiert": range(2, 117, 30),
    "pdfminer__i1040nr": range(0, 50, 20),
    "unstructured__fr_olap": range(0, 12, 5),
    "pdfjs__tracemonkey": range(0, 14, 6),
}


def make_scans() -> None:
    pdf = FPDF(format="A4")
    for name, pages in PAGES.items():
        source = pypdfium2.PdfDocument(f"/work/shared/corpus/real/{name}.pdf")
        for index in pages:
            add_scan(pdf, source[index], dpi=150 + 50 * (index % 3))
        source.close()
    pdf.output(str(SCANS))


def main(mode: str) -> None:
    if not SCANS.exists():
        make_scans()
    trim = ocr._trim
    pages, clock = 0, time.process_time()

    def after_page(keep_mb: int = ocr._KEEP_HEAP_MB) -> None:  # in place of the module's trim
        nonlocal pages, clock
        if mode == "every":
            trim(keep_mb=-1)
        elif mode == "keep":
            trim(keep_mb)
        pages += 1
        now = time.process_time()
        print(mode, pages, f"rss {ocr._resident_mb():.0f} MB cpu {now - clock:.2f}", flush=True)
        clock = now

    ocr._trim = after_page
    for _ in range(2):
        extract_pages(SCANS, 1, ocr_threads=1)
    print(mode, "peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10, "MB")


if __name__ == "__main__":
    main(sys.argv[1])
