"""Text-only PDFs of any length, for scaling runs without the corpus.

Lines are placed with ``FPDF.text`` rather than ``multi_cell``: 2,000 pages take about 3 s
instead of 40 s. Seeded, so the same page count gives the same bytes.
"""

from __future__ import annotations

import random
from pathlib import Path

from fpdf import FPDF

from pagefleet.local.demo import sentence

_LINES_PER_PAGE = 44
_WORDS_PER_LINE = 14


def synthetic_pdf(path: Path, pages: int, *, seed: int = 0) -> Path:
    """``pages`` A4 pages, each a numbered heading, 44 lines of text and a page number."""
    if pages < 1:
        raise ValueError("a synthetic document has at least one page")
    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 14)
        pdf.text(20, 25, f"{number}. {sentence(rng, 4)[:-1]}")
        pdf.set_font("Helvetica", "", 10)
        y = 35.0
        for _ in range(_LINES_PER_PAGE):
            pdf.text(20, y, sentence(rng, _WORDS_PER_LINE))
            y += 5.5
        pdf.text(103, 287, str(number))
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


def cached_synthetic(pages: int, cache_dir: Path) -> Path:
    """The synthetic document of ``pages`` pages, generated once per cache folder."""
    path = cache_dir / f"synthetic-{pages}p.pdf"
    if not path.exists():
        # Written under a temporary name: an interrupted run leaves no half-written cache entry.
        partial = synthetic_pdf(cache_dir / f".synthetic-{pages}p.partial.pdf", pages)
        partial.replace(path)
    return path
