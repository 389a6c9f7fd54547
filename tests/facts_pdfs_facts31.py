"""Documents for the facts the text layer got wrong in issue 31: written with fpdf2's built-in
fonts, their facts in bench/quality/facts/generated_facts31.tsv."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

from tests.layout_pdfs import LOREM

# Names with accents: text, and (letter, accent, whether the accent comes first) where TeX
# sets the accent as a glyph of its own, a spacing character in the text layer, over or under
# its letter: before the letter in the text (acute) or after it (cedilla).
Piece = str | tuple[str, str, bool]
AUTHORS: list[list[Piece]] = [
    ["Pierre-Fran", ("c", "\u00b8", False), "ois Dutot"],
    ["Gr", ("e", "\u00b4", True), "gory Mouni", ("e", "\u00b4", True), " and Denis Trystram"],
]
REFERENCE: list[Piece] = [
    "[7] P.-F. Dutot, G. Mouni",
    ("e", "\u00b4", True),
    ", and D. Trystram. Handbook.",
]
# Entries of a data dictionary: a bold variable name, its title in capitals in the body's
# weight, and the description right under it, no space between.
ENTRIES = [
    ("PS", "PERIOD OF SERVICE RECODE", "Description/Analysis: this is a recode variable for "),
    ("POV", "PURPOSE OF VISIT", "Description/Analysis: the administrative reason for the visit, "),
    ("SEX", "GENDER OF CLIENT", "Description/Analysis: the gender the patient gave at intake, "),
]


def _accented(pdf: FPDF, x: float, y: float, pieces: list[Piece]) -> None:
    """One line at (x, y), each accent drawn over (or under) its letter as a glyph of its own."""
    for piece in pieces:
        if isinstance(piece, str):
            pdf.text(x, y, piece)
            x += pdf.get_string_width(piece)
            continue
        letter, accent, accent_first = piece
        centred = x + (pdf.get_string_width(letter) - pdf.get_string_width(accent)) / 2
        for text, at in [(accent, centred), (letter, x)][:: 1 if accent_first else -1]:
            pdf.text(at, y, text)
        x += pdf.get_string_width(letter)


def tex_accents(folder: Path) -> Path:
    """A paper's author line and a reference whose accents are glyphs of their own."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 14)
    pdf.text(72, 90, "Scheduling Malleable Tasks on Clusters")
    pdf.set_font("Helvetica", "", 12)
    _accented(pdf, 72, 120, AUTHORS[0])
    _accented(pdf, 72, 140, AUTHORS[1])
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(72, 170)
    pdf.multi_cell(460, 13, LOREM)
    _accented(pdf, 72, pdf.get_y() + 20, REFERENCE)
    path = folder / "tex_accents.pdf"
    pdf.output(str(path))
    return path


def data_dictionary(folder: Path) -> Path:
    """Entries of a data dictionary (see ENTRIES), a paragraph of description under each."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    y = 90.0
    for name, title, description in ENTRIES:
        pdf.set_font("Helvetica", "B", 10)
        pdf.text(72, y, name + " ")
        pdf.set_font("Helvetica", "", 10)
        pdf.text(72 + pdf.get_string_width(name + " ") + 2, y, "- " + title)
        pdf.set_xy(72, y + 4)
        pdf.multi_cell(460, 13, description + LOREM[:300], new_x="LMARGIN", new_y="NEXT")
        y = pdf.get_y() + 30
    path = folder / "data_dictionary.pdf"
    pdf.output(str(path))
    return path


# A flyer's text: a line across the page, two columns set a narrow gutter apart right under
# it, and a list across the page right under them, each column's text its own.
FLYER_INTRO = "The River Board reports on the spring survey of the lower valley and its weirs."
FLYER_LEFT = (
    "To survey a reach, walk the left bank from the upper weir down to the ford and note "
    "each gauge reading in the field book with the time it was taken and the weather seen. "
    "The crew then crosses at the ford and walks the right bank back up to the weir again, "
    "noting where the bank has slipped, where trees have fallen into the water and where "
    "cattle come down to drink, since each of these changes how the river carries its load."
)
FLYER_RIGHT = (
    "Samples of the silt are bagged every hundred paces along both banks and labelled with "
    "the reach and the pace count, then kept cool in the van until the laboratory opens. "
    "Results come back within a week and are entered in the register beside the readings, "
    "so that the office can compare each reach with the year before and with the reaches "
    "above and below it, and send a crew back wherever the figures do not agree."
)
FLYER_LIST = [
    "- Field books are handed in at the depot every Friday before noon, signed by the crew.",
    "- Gauges found damaged are reported to the works office at once, with their number.",
]
_FLYER_PX = (1700, 2200)  # a Letter page at 200 dpi
_FLYER_FONT_PX = 24
_FLYER_PITCH_PX = 30


def _justified(draw: ImageDraw.ImageDraw, font: Any, text: str, x: int, y: int, width: int) -> int:
    """``text`` set in lines ``width`` pixels wide from (x, y), each line but the last spread to
    the full width; the y under the last line."""
    words = text.split()
    while words:
        line = [words.pop(0)]
        while words and draw.textlength(" ".join([*line, words[0]]), font=font) <= width:
            line.append(words.pop(0))
        ink = sum(draw.textlength(w, font=font) for w in line)
        space = (width - ink) / (len(line) - 1) if words and len(line) > 1 else font.size / 3
        at = float(x)
        for word in line:
            draw.text((at, y), word, fill="black", font=font)
            at += draw.textlength(word, font=font) + space
        y += _FLYER_PITCH_PX
    return y


def columns_flyer_scan(folder: Path) -> Path:
    """A scanned flyer (see FLYER_INTRO), small type, the columns' gutter about a line's height:
    no gap above or below the columns sets them apart from the lines across the page."""
    font = ImageFont.load_default(size=_FLYER_FONT_PX)
    image = Image.new("RGB", _FLYER_PX, "white")
    draw = ImageDraw.Draw(image)
    left, right, gutter = 160, 1540, 40
    column = (right - left - gutter) // 2
    y = _justified(draw, font, FLYER_INTRO, left, 200, right - left)
    bottom = max(
        _justified(draw, font, FLYER_LEFT, left, y, column),
        _justified(
            draw, font, FLYER_RIGHT, left + column + gutter, y + _FLYER_PITCH_PX // 2, column
        ),
    )
    for item in FLYER_LIST:
        bottom = _justified(draw, font, item, left, bottom, right - left)
    png = folder / "columns_flyer_scan.png"
    image.save(png)
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.image(str(png), x=0, y=0, w=612, h=792)
    path = folder / "columns_flyer_scan.pdf"
    pdf.output(str(path))
    return path
