"""The chunks the marker bench converts: text pages, and the same pages scanned.

A text page is what most of a fleet's input is: a heading and about 3,000 characters of prose
in a text layer. Its scan is that page rasterised at 200 dpi in grey and put back as one JPEG per
page with no text layer, as a scanner writes it, so marker must OCR it. Both are generated,
seeded, so every run converts the same bytes; a real PDF's first pages can be measured beside
them.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the bench's other paths do without them
    import pypdfium2
    from fpdf import FPDF

SCAN_DPI = 200
WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no will "
    "more can out up who them some into time only new other could these two may first then do "
    "any like my now over such our man me even most made after also did many before must through "
    "back years where much your way well down should because each just those people how too "
    "little state good very make world still own see men work long get here between both life "
    "being under never day same another know while last might us great old year off come since "
    "against go came right used take three report system section agency program service public"
).split()


@dataclass(frozen=True)
class Chunk:
    """One chunk to convert: its kind (``text``, ``scan`` or an input's name), file and pages."""

    kind: str
    path: Path
    pages: int


def _paragraph(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def text_chunk(folder: Path, pages: int, seed: int = 28) -> Chunk:
    """``pages`` A4 pages of prose with a text layer, a heading and five paragraphs each."""
    from fpdf import FPDF

    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.set_margins(20, 20, 20)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_y(30)  # a line near the top edge would be taken for a running header
        pdf.set_font("helvetica", style="B", size=15)
        pdf.cell(text=f"Section {number}. {_paragraph(rng, 5)[:-1]}")
        pdf.ln(12)
        pdf.set_font("helvetica", size=10.5)
        for _ in range(5):
            # Leading wider than the font's box, as a typeset page has: marker reads lines that
            # overlap their neighbours as a garbled text layer and OCRs them.
            pdf.multi_cell(w=0, h=6, text=_paragraph(rng, 95))
            pdf.ln(4)
    path = folder / f"text-{pages}p.pdf"
    pdf.output(str(path))
    return Chunk("text", path, pages)


def add_scan(pdf: FPDF, page: pypdfium2.PdfPage, dpi: int = SCAN_DPI) -> None:
    """``page`` as a scanner writes it into ``pdf``: rendered at ``dpi`` in grey, one JPEG filling
    an A4 page, no text layer."""
    image = page.render(scale=dpi / 72).to_pil().convert("L")
    jpeg = io.BytesIO()
    image.save(jpeg, format="JPEG", quality=75)
    pdf.add_page()
    pdf.image(jpeg, x=0, y=0, w=pdf.w, h=pdf.h)


def scan_of(chunk: Chunk, folder: Path) -> Chunk:
    """The same pages as images only: each rendered at 200 dpi in grey, one JPEG a page."""
    import pypdfium2
    from fpdf import FPDF

    source = pypdfium2.PdfDocument(str(chunk.path))
    pdf = FPDF(format="A4")
    for index in range(len(source)):
        add_scan(pdf, source[index])
    source.close()
    path = folder / f"scan-{chunk.pages}p.pdf"
    pdf.output(str(path))
    return Chunk("scan", path, chunk.pages)


def first_pages(pdf: Path, pages: int, folder: Path) -> Chunk:
    """A real PDF's first ``pages`` pages (fewer if it is shorter), as the splitter cuts a chunk."""
    import pypdfium2

    source = pypdfium2.PdfDocument(str(pdf))
    count = min(pages, len(source))
    chunk = pypdfium2.PdfDocument.new()
    chunk.import_pages(source, list(range(count)))
    path = folder / f"{pdf.stem}-{count}p.pdf"
    chunk.save(str(path))
    chunk.close()
    source.close()
    return Chunk(pdf.stem, path, count)
