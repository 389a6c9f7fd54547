"""Pages whose reading order a reader sees at a glance (issue 31): a ruled table filling the
left column of a two-column page, read before the right column's prose. Written with fpdf2's
built-in fonts; their facts are in bench/quality/facts/generated_order31.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM

STATIONS = (
    "Alder Ford,Birch Weir,Cole Bridge,Dun Mill,Elm Lock,Fen Sluice,Gorse Bend,Hale Ferry,Ivy Quay,"
    "Juniper Dam,Kestrel Run,Larch Pool,Moss Gate,Nettle Reach,Oak Staithe,Pike Shoal,Quill Cut,"
    "Rush Holm"
).split(",")
# Code, station, stage: G06 Fen Sluice stands at 3.00 m.
GAUGES = [(f"G{k:02d}", name, f"{1.5 + 0.25 * k:.2f}") for k, name in enumerate(STATIONS, 1)]


def column_table(folder: Path) -> Path:
    """Two columns under a title: the left one a ruled table of gauges from the column's top
    to its foot, nothing else in that column; the right one two paragraphs, then a small
    ruled table of its own lower down. Paper layouts set a long table this way (grobid's
    test_Grobid_1_05452615, page 3): the table's last row is read before the prose beside it.
    """
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_line_width(0.6)
    pdf.set_font("Helvetica", "B", 16)
    pdf.set_xy(60, 50)
    pdf.cell(492, 20, "Gauges of the Upper Basin", align="C")
    pdf.set_font("Helvetica", "", 9)
    widths, row = (40, 130, 60), 34
    top = 90
    rows = [("Code", "Station", "Stage m"), *GAUGES]
    for r, cells in enumerate(rows):
        x = 60.0
        for w, cell in zip(widths, cells, strict=True):
            pdf.rect(x, top + r * row, w, row)
            pdf.text(x + 4, top + r * row + 20, cell)
            x += w
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(316, 90)
    pdf.multi_cell(236, 12, "RIGHTSTART " + LOREM * 2, align="J")
    pdf.set_xy(316, pdf.get_y() + 8)
    pdf.multi_cell(236, 12, LOREM + "RIGHTEND", align="J")
    y = pdf.get_y() + 16
    pdf.set_font("Helvetica", "", 9)
    for r, peaks in enumerate((("Month", "Peak m"), ("March", "4.10"), ("April", "3.85"))):
        for c, cell in enumerate(peaks):
            pdf.rect(316 + 118 * c, y + r * 20, 118, 20)
            pdf.text(320 + 118 * c, y + r * 20 + 14, cell)
    path = folder / "column_table.pdf"
    pdf.output(str(path))
    return path


AUTHORS = [
    ("Ada Brennan", "Department of Hydrology Sciences,", "ada@weir.example"),
    ("Tomas Keane", "Department of Hydrology Sciences,", "tomas@ford.example"),
    ("Lin Okoro", "Department of Hydrology Sciences,", "lin@delta.example"),
]


def author_row(folder: Path) -> Path:
    """A paper's title, three authors side by side (name, department, city, address), each
    centred over a third of the page, the middle one across the gutter of the two columns of
    10 pt prose below, as a conference paper sets them (grobid's test_Grobid_1_05452615,
    page 1): author by author, not names first, then departments."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Times", "B", 16)
    pdf.set_xy(60, 60)
    pdf.cell(492, 20, "Sediment Budgets of Small Rivers", align="C")
    for centre, (name, place, mail) in zip((140, 307, 474), AUTHORS, strict=True):
        for r, (style, text) in enumerate(
            (("", name), ("I", place), ("I", "Delta City"), ("I", mail))
        ):
            pdf.set_font("Times", style, 11)
            pdf.text(centre - pdf.get_string_width(text) / 2, 110 + 13 * r, text)
    pdf.set_font("Times", "", 10)
    for x, tag in ((60, "LEFT"), (314, "RIGHT")):
        pdf.set_xy(x, 170)
        pdf.multi_cell(238, 11, f"{tag}START " + LOREM * 10, align="J")
    path = folder / "author_row.pdf"
    pdf.output(str(path))
    return path


BRANCHES = [
    ("Sources", [("Glaciers", "meltwater in spring"), ("Springs", "groundwater all year")]),
    ("Transport", [("Bedload", "rolled along the bed"), ("Suspension", "carried in the flow")]),
    ("Deposits", [("Levees", "built at each flood"), ("Deltas", "grown at the mouth")]),
]


def mind_map(folder: Path) -> Path:
    """A mind map as xmind exports one (mineru's introduction.pdf): the root on two lines at
    the left, halfway down; to its right three branches, each centred on its two children;
    each child with a note of two lines to its right. Read depth first, each branch whole
    before the next, not level by level."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 14)
    pdf.text(40, 394, "River")
    pdf.text(40, 412, "Sediment")
    for b, (branch, children) in enumerate(BRANCHES):
        centre = 160 + 240 * b
        pdf.set_font("Helvetica", "B", 11)
        pdf.text(180, centre, branch)
        for c, (child, note) in enumerate(children):
            y = centre - 50 + 100 * c
            pdf.set_font("Helvetica", "", 10)
            pdf.text(300, y, child)
            pdf.set_font("Helvetica", "", 9)
            pdf.text(420, y - 5, f"{child} sediment is")
            pdf.text(420, y + 6, note)
    path = folder / "mind_map.pdf"
    pdf.output(str(path))
    return path
