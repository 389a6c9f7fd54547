"""Documents for the facts the text layer got wrong in issue 31: written with fpdf2's built-in
fonts, their facts in bench/quality/facts/generated_facts31.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM

# Names with accents: text, and (letter, accent, whether the accent comes first) where TeX
# sets the accent as a glyph of its own, a spacing character in the text layer, over or under
# its letter: before the letter in the text (acute) or after it (cedilla).
Piece = str | tuple[str, str, bool]
AUTHORS = [
    ["Pierre-Fran", ("c", "\u00b8", False), "ois Dutot"],
    ["Gr", ("e", "\u00b4", True), "gory Mouni", ("e", "\u00b4", True), " and Denis Trystram"],
]
REFERENCE = ["[7] P.-F. Dutot, G. Mouni", ("e", "\u00b4", True), ", and D. Trystram. Handbook."]
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
