"""Text-only PDFs of any length, for scaling runs without the corpus, and image-only scans.

Lines are placed with ``FPDF.text`` rather than ``multi_cell``: 2,000 pages take about 3 s
instead of 40 s. Seeded, so the same page count gives the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

from embedded.demo import sentence

_LINES_PER_PAGE = 44
_WORDS_PER_LINE = 14
# fpdf2 stamps the time of writing into the file; a fixed one keeps "same seed, same bytes"
# true across a second's boundary.
_CREATED = datetime(2026, 1, 1, tzinfo=UTC)


def _document() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(_CREATED)
    return pdf


def synthetic_pdf(path: Path, pages: int, *, seed: int = 0) -> Path:
    """``pages`` A4 pages, each a numbered heading, 44 lines of text and a page number."""
    if pages < 1:
        raise ValueError("a synthetic document has at least one page")
    rng = random.Random(seed)
    pdf = _document()
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
    return _cached(cache_dir / f"synthetic-{pages}p.pdf", synthetic_pdf, pages)


def _cached(path: Path, make: Callable[[Path, int], Path], pages: int) -> Path:
    if not path.exists():
        # Written under a temporary name: an interrupted run leaves no half-written cache entry.
        partial = make(path.with_name(f".{path.stem}.partial.pdf"), pages)
        partial.replace(path)
    return path


# An image-only page: this many lines drawn into a bitmap at about 150 dpi, no text layer.
_SCAN_LINES = 16
_SCAN_PX = (1240, 1754)  # A4 at 150 dpi


def scanned_pdf(path: Path, pages: int, *, seed: int = 0) -> Path:
    """``pages`` A4 pages, each only a grey-scale image of text lines: every page needs OCR."""
    import io

    from PIL import Image, ImageDraw, ImageFont

    if pages < 1:
        raise ValueError("a scanned document has at least one page")
    rng = random.Random(seed)
    font = ImageFont.load_default(size=26)
    pdf = _document()
    for number in range(1, pages + 1):
        image = Image.new("L", _SCAN_PX, 255)
        draw = ImageDraw.Draw(image)
        draw.text((120, 120), f"{number}. {sentence(rng, 4)[:-1]}", fill=0, font=font)
        for line in range(_SCAN_LINES):
            draw.text((120, 220 + 80 * line), sentence(rng, 9), fill=0, font=font)
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=80)
        pdf.add_page()
        pdf.image(buffer, x=0, y=0, w=210, h=297)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


def cached_scan(pages: int, cache_dir: Path) -> Path:
    """The image-only document of ``pages`` pages, generated once per cache folder."""
    return _cached(cache_dir / f"scan-{pages}p.pdf", scanned_pdf, pages)
