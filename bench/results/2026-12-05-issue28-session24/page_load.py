"""How much of the splitter's page measuring (pagefleet.costs._look) is pdfium loading the page.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session24/page_load.py \
        /work/shared/corpus/real

Over every page of every PDF in the folder, best of 3 passes of this process's CPU: the pages'
sizes alone (no load), ``FPDF_LoadPage`` and ``FPDF_ClosePage`` alone, those with the frame and
link reads ``_look`` makes, and ``_look`` itself (also walking the objects for an image). The
documents stay open across passes, so pdfium's parsed objects are warm: a first load, as the
splitter's, costs more, and the share of the load more with it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet import costs
from pagefleet.pdf import has_explicit_links, page_frame


def main() -> None:
    docs = [pdfium.PdfDocument(p) for p in sorted(Path(sys.argv[1]).glob("*.pdf"))]

    def each_page(call: Callable[[pdfium.PdfDocument, int], object]) -> Callable[[], None]:
        def run() -> None:
            for doc in docs:
                for index in range(len(doc)):
                    call(doc, index)

        return run

    def load(doc: pdfium.PdfDocument, index: int) -> None:
        pdfium_c.FPDF_ClosePage(pdfium_c.FPDF_LoadPage(doc.raw, index))

    def load_frame_links(doc: pdfium.PdfDocument, index: int) -> None:
        page = pdfium_c.FPDF_LoadPage(doc.raw, index)
        page_frame(page)
        has_explicit_links(page)
        pdfium_c.FPDF_ClosePage(page)

    print(f"{sum(len(d) for d in docs)} pages in {len(docs)} PDFs; CPU s, best of 3:")
    for name, call in (
        ("page sizes, no load", lambda doc, i: doc.get_page_size(i)),
        ("FPDF_LoadPage + FPDF_ClosePage", load),
        ("  + frame and links", load_frame_links),
        ("_look (+ the walk for an image)", lambda doc, i: costs._look(doc, i, count=False)),
    ):
        run = each_page(call)
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            run()
            best = min(best, time.process_time() - started)
        print(f"{name}: {best:.3f}")


if __name__ == "__main__":
    main()
