"""Grids of cards (issue 31): boxes side by side and row under row, each a record of several
lines of labels and values, read card by card (each card top to bottom, the cards row by row),
not line by line across the cards of a row. Written with fpdf2's built-in fonts; their facts
are in bench/quality/facts/generated_grid31.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

# Serial, card number, name, relation, relative's name, house, age, sex.
VOTERS = [
    (1, "KRW1000101", "Mira Sethi", "Father's", "Harish Sethi", "4", 41, "Female"),
    (2, "KRW1000218", "Tarun Bedi", "Father's", "Om Prakash Bedi", "9", 58, "Male"),
    (3, "KRW1000325", "Lata Bedi", "Husband's", "Tarun Bedi", "9", 52, "Female"),
    (4, "KRW1000432", "Gopal Rana", "Father's", "Devraj Rana", "12", 36, "Male"),
    (5, "KRW1000549", "Nisha Rana", "Husband's", "Gopal Rana", "12", 33, "Female"),
    (6, "KRW1000656", "Kiran Pal", "Father's", "Suresh Pal", "17", 27, "Male"),
    (7, "KRW1000763", "Anju Kohli", "Father's", "Ved Kohli", "21", 24, "Female"),
    (8, "KRW1000870", "Ravi Kohli", "Father's", "Ved Kohli", "21", 29, "Male"),
    (9, "KRW1000987", "Usha Kohli", "Husband's", "Ved Kohli", "21", 61, "Female"),
]


def voter_cards(folder: Path) -> Path:
    """An electoral roll's page (camelot's electoral_roll.pdf): a title, then voter cards
    three across and three down, ruled boxes that touch, each one record: the serial number in
    a small box at the top left with the card number at the right, "Name :" and the name, the
    relation's label wrapped over two lines ("Father's" above "Name :") beside its value,
    "House No :" and the house, then "Age :" and "Sex :" on one line; two notes under the grid.
    Each label and each value is a text object of its own, set as the roll sets them."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    pdf.text(23, 24, "Electoral Roll of the Riverside Ward, Part No - 12")
    pdf.set_line_width(0.5)
    for k, (serial, card, name, relation, relative, house, age, sex) in enumerate(VOTERS):
        x, y = 17.5 + 187.2 * (k % 3), 60 + 71 * (k // 3)
        pdf.rect(x, y, 187, 70.5)
        pdf.rect(x - 0.5, y - 0.5, 50, 15.3)
        pdf.set_font("Helvetica", "", 7)
        pdf.text(x + 38, y + 9, str(serial))
        pdf.set_font("Helvetica", "", 8)
        pdf.text(x + 128.7, y + 12, card)
        pdf.text(x + 4.3, y + 27, "Name :")
        pdf.text(x + 37.3, y + 27, name)
        pdf.text(x + 4.1, y + 40, relation)
        pdf.text(x + 4.1, y + 47, "Name")
        pdf.text(x + 41.7, y + 44, ":")
        pdf.text(x + 44.5, y + 45, relative)
        pdf.text(x + 3.3, y + 59, "House No :")
        pdf.text(x + 47, y + 58, house)
        pdf.text(x + 4.1, y + 68, f"Age : {age}")
        pdf.text(x + 57.5, y + 68, f"Sex : {sex}")
    pdf.set_font("Helvetica", "", 8)
    pdf.text(18, 280, "Age as on 01-01-2027")
    pdf.text(18, 292, "Issued by the Ward Registration Officer")
    path = folder / "voter_cards.pdf"
    pdf.output(str(path))
    return path


PERMITS = [
    ("P-2041", "Alder Hayes", "Heron", "North Quay 4", "31 May 2027"),
    ("P-2042", "Bea Morrow", "Kingfisher", "North Quay 9", "30 June 2027"),
    ("P-2043", "Cyril Vance", "Dabchick", "Mill Steps 2", "31 July 2027"),
    ("P-2044", "Dora Quill", "Moorhen", "Weir Basin 7", "31 August 2027"),
]


def permit_cards(folder: Path) -> Path:
    """Mooring permits two across and two down, framed boxes set apart, each five lines of a
    label and its value ("Holder: Alder Hayes"), the labels in bold: the lines of the two
    cards of a row stand level, so that they look like the rows of a table of two columns."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(60, 70, "Mooring Permits Issued in May")
    for k, fields in enumerate(PERMITS):
        x, y = 60 + 250 * (k % 2), 100 + 120 * (k // 2)
        pdf.rect(x, y, 230, 100)
        labels = ("Permit:", "Holder:", "Vessel:", "Mooring:", "Expires:")
        for j, (label, value) in enumerate(zip(labels, fields, strict=True)):
            pdf.set_font("Helvetica", "B", 10)
            pdf.text(x + 10, y + 20 + 16 * j, label)
            pdf.set_font("Helvetica", "", 10)
            pdf.text(x + 70, y + 20 + 16 * j, value)
    path = folder / "permit_cards.pdf"
    pdf.output(str(path))
    return path
