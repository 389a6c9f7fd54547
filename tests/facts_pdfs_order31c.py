"""Pages whose reading order a reader sees at a glance (issue 31, session 15): tables without
rules set in one column of a two-column page, beside the other column's prose or beside a
table of their own. Written with fpdf2's built-in fonts; their facts are in
bench/quality/facts/generated_order31c.tsv."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM

# Station, flow, stage, rain: each a row of a table without rules.
READINGS = [
    ("Alder Ford", "12.4", "1.75", "31"),
    ("Birch Weir", "8.9", "2.10", "27"),
    ("Cole Bridge", "15.2", "1.60", "35"),
    ("Dun Mill", "6.1", "2.45", "22"),
    ("Elm Lock", "9.8", "1.95", "29"),
    ("Fen Sluice", "11.3", "3.00", "33"),
    ("Gorse Bend", "7.7", "2.20", "25"),
]
# Site, area, depth: the second table's rows.
SITES = [
    ("Hale Ferry", "140", "0.8"),
    ("Ivy Quay", "95", "1.2"),
    ("Juniper Dam", "210", "0.6"),
    ("Kestrel Run", "60", "1.9"),
    ("Larch Pool", "175", "1.1"),
    ("Moss Gate", "88", "1.4"),
    ("Nettle Reach", "132", "0.9"),
    ("Oak Staithe", "51", "2.3"),
    ("Pike Shoal", "99", "1.7"),
    ("Quill Cut", "163", "1.0"),
]

LEFT, RIGHT, WIDTH = 60.0, 316.0, 236.0


def _table(
    pdf: FPDF, x: float, y: float, rows: Sequence[tuple[str, ...]], pitch: float, step: float = 46
) -> float:
    """Rows set at ``pitch`` from ``y``, the first column left at ``x``, the others 92 pt
    on, ``step`` apart and flush right (numbers); the head in bold. Returns the y under it."""
    for r, cells in enumerate(rows):
        pdf.set_font("Times", "B" if r == 0 else "", 9)
        base = y + r * pitch + 9
        pdf.text(x, base, cells[0])
        for c, cell in enumerate(cells[1:]):
            right = x + 92 + step * (c + 1)
            pdf.text(right - pdf.get_string_width(cell), base, cell)
    return y + len(rows) * pitch


def _page(title: str) -> FPDF:
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Times", "B", 16)
    pdf.set_xy(LEFT, 50)
    pdf.cell(492, 20, title, align="C")
    return pdf


def table_beside_prose(folder: Path) -> Path:
    """Two columns of 10 pt prose on 12 pt, the right one opening with a table without rules
    (9 pt rows on 11 pt, the left column's lines level with some of them), its caption under
    it, then prose. A paper sets its small tables so (mineru's demo3.pdf, page 5): the table
    is the right column's, the left column's prose is read whole, line after line, not as
    the table's first column."""
    pdf = _page("Gauges of the Upper Basin")
    pdf.set_font("Times", "", 10)
    pdf.set_xy(LEFT, 90)
    pdf.multi_cell(WIDTH, 12, "LEFTSTART " + LOREM * 4 + "LEFTEND", align="J")
    rows = [("Station", "Flow", "Stage", "Rain"), *READINGS]
    y = _table(pdf, RIGHT, 92, rows, 11)
    pdf.set_font("Times", "", 9)
    pdf.set_xy(RIGHT, y + 10)
    pdf.multi_cell(WIDTH, 11, "Table 1: Readings at the gauges of the upper basin in May.")
    pdf.set_font("Times", "", 10)
    pdf.set_xy(RIGHT, pdf.get_y() + 12)
    pdf.multi_cell(WIDTH, 12, "RIGHTSTART " + LOREM * 2 + "RIGHTEND", align="J")
    path = folder / "table_beside_prose.pdf"
    pdf.output(str(path))
    return path


def tables_side_by_side(folder: Path) -> Path:
    """Two tables without rules side by side at the top of a two-column page, one a column,
    their rows on different pitches (11 pt and 9 pt) so that only some stand level, each
    with its caption under it, then two columns of prose. A paper sets its tables so
    (mineru's demo3.pdf, pages 7 and 8): each table is read whole, then its caption, not one
    table whose rows pair lines of the two."""
    pdf = _page("Gauges and Sites of the Upper Basin")
    y_left = _table(pdf, LEFT, 92, [("Station", "Flow", "Stage", "Rain"), *READINGS], 11)
    y_right = _table(pdf, RIGHT, 92, [("Site", "Area", "Depth"), *SITES], 9)
    pdf.set_font("Times", "", 9)
    pdf.set_xy(LEFT, y_left + 10)
    pdf.multi_cell(WIDTH, 11, "Table 1: Readings at the gauges of the upper basin in May.")
    pdf.set_xy(RIGHT, y_right + 10)
    pdf.multi_cell(WIDTH, 11, "Table 2: Catchment area and mean soil depth of the sites.")
    top = max(y_left, y_right) + 60
    pdf.set_font("Times", "", 10)
    pdf.set_xy(LEFT, top)
    pdf.multi_cell(WIDTH, 12, "LEFTSTART " + LOREM * 3 + "LEFTEND", align="J")
    pdf.set_xy(RIGHT, top)
    pdf.multi_cell(WIDTH, 12, "RIGHTSTART " + LOREM * 3 + "RIGHTEND", align="J")
    path = folder / "tables_side_by_side.pdf"
    pdf.output(str(path))
    return path


def sideways_table(folder: Path) -> Path:
    """A portrait page with a title and a paragraph set flat, then a table without rules
    turned a quarter to the left (a landscape table on a portrait page, its caption at the
    left, its rows reading upwards), as a journal sets a wide table (mineru's demo1.pdf,
    page 5): the table reads as a table, row by row, its caption before it, after the flat
    text; not a word a paragraph."""
    # Drawn as on a landscape page whose top-left corner stands at the page's bottom-left
    # (x 60, y 740): turned a quarter to the left about that corner. The flat text is
    # indented, so that the caption stands in the left margin outside every flat line, as a
    # stamp would: it is the table's caption all the same.
    return _sideways(folder / "sideways_table.pdf", 90, 60, 740, LEFT + 50)


def sideways_table_downwards(folder: Path) -> Path:
    """The same table turned a quarter to the right, its rows reading downwards, its caption
    at the right edge: read the same way."""
    return _sideways(folder / "sideways_table_downwards.pdf", -90, 550, 300, LEFT)


def _sideways(path: Path, angle: float, x: float, y: float, indent: float) -> Path:
    pdf = _page("Gauges of the Upper Basin")
    pdf.set_font("Times", "", 10)
    pdf.set_xy(indent, 90)
    pdf.multi_cell(442, 12, "FLATSTART " + LOREM * 2 + "FLATEND", align="J")
    with pdf.rotation(angle=angle, x=x, y=y):
        pdf.set_font("Times", "B", 10)
        pdf.text(x, y + 10, "Table 3: Readings at the gauges of the upper basin in May.")
        rows = [("Station", "Flow", "Stage", "Rain"), *READINGS, *((*s, "30") for s in SITES)]
        _table(pdf, x, y + 22, rows, 14, step=100)
    pdf.output(str(path))
    return path
