"""Scans whose text must come from OCR, and how well, and an article whose outline titles are
set in the body's type: written with fpdf2, the page images drawn with Pillow's own font (no
system font needed); their facts in bench/quality/facts/generated_ocr.tsv.
"""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF
from fpdf.enums import TextMode
from PIL import Image, ImageDraw, ImageFont

from tests.layout_pdfs import LOREM

# The page's words, as the image shows them.
SCAN_LINES = [
    "The river rose two feet overnight and",
    "the lower fields along the bank flooded",
    "before the gauge keepers could warn anyone.",
]
# What a poor recogniser made of them: digits and signs for letters, capitals inside words.
BAD_LAYER = [
    "Tl1e r!ver r0se tw0 fe3t 0vern!ght aud",
    "tHe l0wer f!e1ds a1ong tHe ba^k fl0oded",
    "bef0re tl1e gaugc kccpers c0u1d warn any0ne.",
]
# Set close, as a tight or light typeface sets them: the recogniser scores these word gaps
# low as spaces.
TIGHT_LINES = [
    "All Model AA-1 and AA-1A; Kit No. AK-120A",
    "Ice on the weir was thin at dawn; gone by noon.",
    "Ein kleiner Bach fliesst leise durch den Wald.",
]
_WIDTH, _HEIGHT = 1700, 700  # pixels of the page image
_PAGE = (612.0, 252.0)  # points


def _image(folder: Path, lines: list[str], gap: float, name: str) -> Path:
    """The lines drawn 40 px tall, words ``gap`` font sizes apart."""
    size = 40
    font = ImageFont.load_default(size=size)
    image = Image.new("RGB", (_WIDTH, _HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    for k, line in enumerate(lines):
        x = 60.0
        for word in line.split():
            draw.text((x, 120 + 150 * k), word, fill="black", font=font)
            x += draw.textlength(word, font=font) + gap * size
    path = folder / name
    image.save(path)
    return path


def _scan(folder: Path, image: Path, name: str, layer: list[str] | None = None) -> Path:
    """One page that is ``image``; ``layer``, where given, laid over it drawn invisible, in
    the sizes a recogniser guessed (its first line larger: a heading, were it trusted)."""
    pdf = FPDF(unit="pt", format=_PAGE)
    pdf.add_page()
    pdf.image(str(image), x=0, y=0, w=_PAGE[0], h=_PAGE[1])
    if layer:
        pdf.text_mode = TextMode.INVISIBLE
        for k, line in enumerate(layer):
            pdf.set_font("Helvetica", "B" if k == 0 else "", 18 if k == 0 else 12)
            pdf.text(22, 58 + 54 * k, line)
    path = folder / name
    pdf.output(str(path))
    return path


def bad_ocr_layer(folder: Path) -> Path:
    """A scan with a hidden OCR layer that is mostly not words."""
    image = _image(folder, SCAN_LINES, 0.3, "bad_ocr_layer.png")
    return _scan(folder, image, "bad_ocr_layer.pdf", BAD_LAYER)


def tight_latin_scan(folder: Path) -> Path:
    """A scan of Latin text whose word gaps are narrow, no text layer."""
    image = _image(folder, TIGHT_LINES, 0.15, "tight_latin_scan.png")
    return _scan(folder, image, "tight_latin_scan.pdf")


def centred_section_titles(folder: Path) -> Path:
    """An article whose bookmarked section titles are set as a physics journal sets them:
    centred capitals in the body's size and weight, no space above the text under them."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_margins(72, 72, 72)
    pdf.add_page()
    pdf.set_font("Times", "B", 16)
    pdf.multi_cell(0, 20, "Tidal Currents in Shallow Estuaries", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(8)
    for number, title in (("I.", "Introduction"), ("II.", "Observations of the flow")):
        pdf.start_section(f"{number} {title}", level=0)
        pdf.set_font("Times", "", 10)
        pdf.multi_cell(0, 12, f"{number} {title.upper()}", new_x="LMARGIN", new_y="NEXT", align="C")
        pdf.multi_cell(0, 12, f"SECTION{number[:-1]} " + LOREM * 2, new_x="LMARGIN", new_y="NEXT")
    path = folder / "centred_section_titles.pdf"
    pdf.output(str(path))
    return path


def split_outline_titles(folder: Path) -> Path:
    """A manual whose bookmarked titles are set on two lines that read as two blocks, the
    first holding most of the bookmark's words by itself: a deep section number and its date
    above the bold title, and a title in large type whose last word stands on a line apart."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_margins(72, 72, 72)
    pdf.add_page()
    for number, title in (("2.3.1.4", "Transport"), ("2.3.1.5", "Deposition")):
        pdf.start_section(f"{number} {title}", level=0)
        pdf.set_font("Helvetica", "", 10)
        pdf.multi_cell(0, 12, f"{number} (01-17-2023)", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "B", 10)
        pdf.multi_cell(0, 12, title, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(10)
        pdf.set_font("Helvetica", "", 10)
        pdf.multi_cell(0, 12, LOREM * 2, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(10)
    pdf.add_page()
    pdf.start_section("How to contribute to Surveys", level=0)
    pdf.set_font("Helvetica", "B", 24)
    pdf.cell(0, 28, "How to contribute to", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(12)
    pdf.cell(0, 28, "Surveys", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(20)
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, 12, LOREM * 2, new_x="LMARGIN", new_y="NEXT")
    path = folder / "split_outline_titles.pdf"
    pdf.output(str(path))
    return path
