"""Pages whose reading order a reader sees at a glance: columns with a narrow gutter, a grid
of cards, a slide of two boxes, a form of labels and values, letter enumerations. Written with
fpdf2's built-in fonts; their facts are in bench/quality/facts/generated_order.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM


def _letter() -> FPDF:
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    return pdf


def narrow_gutter(folder: Path) -> Path:
    """A title over two justified columns of 10 pt text whose gutter is under 5 pt wide
    (fpdf2 pads a cell's text by 2.8 pt), less than half a line's height, the lines of both
    columns on the same rows."""
    pdf = _letter()
    pdf.set_font("Helvetica", "B", 16)
    pdf.set_xy(60, 60)
    pdf.cell(492, 20, "Notes on the Delta Survey", align="C")
    pdf.set_font("Helvetica", "", 10)
    for x, tag in ((60, "NGLEFT"), (302, "NGRIGHT")):
        pdf.set_xy(x, 100)
        pdf.multi_cell(243, 12, f"{tag}START " + LOREM * 3 + f"{tag}END", align="J")
    path = folder / "narrow_gutter.pdf"
    pdf.output(str(path))
    return path


CARDS = [
    ("Upper Valley", "CARDONE"),
    ("Main Stem", "CARDTWO"),
    ("Lower Reach", "CARDTHREE"),
    ("Delta Front", "CARDFOUR"),
]


def card_grid(folder: Path) -> Path:
    """A title over a 2x2 grid of cards, each a bold 14 pt title over a short paragraph of
    10 pt text; the cards' titles and paragraphs stand level across the two columns."""
    pdf = _letter()
    pdf.set_font("Helvetica", "B", 20)
    pdf.set_xy(60, 60)
    pdf.cell(0, 24, "Four Reaches of the River")
    for k, (title, tag) in enumerate(CARDS):
        x, y = 60 + 260 * (k % 2), 120 + 200 * (k // 2)
        pdf.rect(x - 8, y - 8, 240, 180)
        pdf.set_xy(x, y)
        pdf.set_font("Helvetica", "B", 14)
        pdf.cell(224, 18, title)
        pdf.set_xy(x, y + 26)
        pdf.set_font("Helvetica", "", 10)
        pdf.multi_cell(224, 12, f"{tag}START " + LOREM[:260] + f" {tag}END")
    path = folder / "card_grid.pdf"
    pdf.output(str(path))
    return path


SLIDE_BOXES = [
    ("Causes", ["Snowmelt arrives early", "Rain falls on frozen ground", "BOXONEEND"]),
    ("Remedies", ["Clear the culverts", "Raise the levees", "BOXTWOEND"]),
]


def slide_boxes(folder: Path) -> Path:
    """A landscape slide: a centred title over two framed boxes side by side, each a heading
    and three bullets."""
    pdf = FPDF(orientation="L", unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 32)
    pdf.set_xy(0, 50)
    pdf.cell(792, 40, "Spring Flood Risk", align="C")
    for k, (head, bullets) in enumerate(SLIDE_BOXES):
        x = 60 + 350 * k
        pdf.rect(x, 130, 320, 300)
        pdf.set_font("Helvetica", "B", 22)
        pdf.text(x + 20, 170, head)
        pdf.set_font("Helvetica", "", 18)
        for j, bullet in enumerate(bullets):
            pdf.text(x + 20, 220 + 40 * j, "-")
            pdf.text(x + 40, 220 + 40 * j, bullet)
    path = folder / "slide_boxes.pdf"
    pdf.output(str(path))
    return path


FORM_FIELDS = [
    ("Name of applicant:", "Margaret Okafor"),
    ("Date of birth:", "12 March 1961"),
    ("Address:", "14 Weir Lane\nMillbank MB4 2RT"),
    ("Licence number:", "RB-20417"),
    ("Vessel:", "Heron, a flat-bottomed punt"),
    ("Signature:", "M. Okafor"),
]


def label_value_form(folder: Path) -> Path:
    """A completed form: a title, then rows of a field label ending in a colon at the left
    margin and its value in a column of its own to the right, one field a row (the address
    on two lines)."""
    pdf = _letter()
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(72, 80, "Fishing Licence Application")
    y = 120
    for label, value in FORM_FIELDS:
        pdf.set_font("Helvetica", "B", 10)
        pdf.text(72, y, label)
        pdf.set_font("Helvetica", "", 10)
        for part in value.split("\n"):
            pdf.text(220, y, part)
            y += 12
        y += 10
    path = folder / "label_value_form.pdf"
    pdf.output(str(path))
    return path


def letter_enumeration(folder: Path) -> Path:
    """A lettered list ("a)", "b)", "c)") under a paragraph, then a paragraph whose sentence
    names two places "(a)" and "(b)" in its run, its second line starting with "(b)", and one
    whose second line starts with a person's initial."""
    pdf = _letter()
    pdf.set_font("Helvetica", "", 11)
    pdf.text(72, 90, "The survey asks the observer three things:")
    for k, item in enumerate(
        ("a) how deep the water stands", "b) how fast it flows", "c) how much silt it holds")
    ):
        pdf.text(90, 110 + 16 * k, item)
    pdf.text(72, 180, "Samples were taken in the same week at two places, (a) the weir and")
    pdf.text(72, 194, "(b) the mouth of the river, where the water is brackish.")
    pdf.text(72, 222, "The gauges were read each morning by the two observers, J. Okafor and")
    pdf.text(72, 236, "A. Smith, who kept the log.")
    pdf.text(72, 264, "The results follow in the next section.")
    path = folder / "letter_enumeration.pdf"
    pdf.output(str(path))
    return path
