"""Where the splitter's page measuring (pagefleet.costs.measure_pages) spends its CPU on the
shared corpus: the whole measuring, and pdfium's page loads, object walks and text pages on
their own. Each figure is the best of 5 passes over every document, in this one process.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session20/measure_parts.py \
        /work/shared/corpus/real
"""

import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet import costs
from pagefleet.settings import load_settings

DOCS = [pdfium.PdfDocument(p.read_bytes()) for p in sorted(Path(sys.argv[1]).glob("*.pdf"))]
SETTINGS = load_settings(bucket="measure-parts")


def best(work: Callable[[], object]) -> float:
    times = []
    for _ in range(5):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def sampled(doc: pdfium.PdfDocument) -> set[int]:
    """The pages whose characters measure_pages counts (its _CHAR_SAMPLE spread)."""
    return set(range(0, len(doc), -(-len(doc) // costs._CHAR_SAMPLE)))


def measuring() -> None:
    for doc in DOCS:
        costs.measure_pages(doc, SETTINGS)


def loads(pages: Callable[[pdfium.PdfDocument], Iterable[int]], text: bool = False) -> None:
    for doc in DOCS:
        for index in pages(doc):
            page = pdfium_c.FPDF_LoadPage(doc.raw, index)
            if text:
                textpage = pdfium_c.FPDFText_LoadPage(page)
                pdfium_c.FPDFText_CountChars(textpage)
                pdfium_c.FPDFText_ClosePage(textpage)
            pdfium_c.FPDF_ClosePage(page)


def object_walks() -> None:
    for doc in DOCS:
        for index in range(len(doc)):
            page = pdfium_c.FPDF_LoadPage(doc.raw, index)
            objects = pdfium_c.FPDFPage_CountObjects(page)
            if objects <= costs._SCAN_MAX_OBJECTS:
                any(
                    pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(page, i))
                    == pdfium_c.FPDF_PAGEOBJ_IMAGE
                    for i in range(objects)
                )
            pdfium_c.FPDF_ClosePage(page)


def every(doc: pdfium.PdfDocument) -> range:
    return range(len(doc))


print(f"{sum(len(d) for d in DOCS)} pages, {sum(len(sampled(d)) for d in DOCS)} sampled")
print(f"measure_pages, every document:            {best(measuring):.3f} CPU s")
print(f"load and close every page:                {best(lambda: loads(every)):.3f}")
print(f"  and walk the objects of pages of few:   {best(object_walks):.3f}")
print(f"load and close the sampled pages:         {best(lambda: loads(sampled)):.3f}")
print(f"  and count their characters (text page): {best(lambda: loads(sampled, True)):.3f}")
