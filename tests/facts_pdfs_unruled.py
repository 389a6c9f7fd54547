"""Tables without rules that the text layer's lines alone must rebuild, each a class seen on
real documents: a label that wraps to a second line, a head of two rows (group labels over
their columns), a statement's column heads set apart from its body, a table whose upper
rows leave a column empty, a total row set apart below the body, numbers with a magnitude
suffix set close. Written with fpdf2's built-in fonts; their facts are in
bench/quality/facts/generated_unruled.tsv."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fpdf import FPDF


def _row(
    pdf: FPDF, y: float, x: float, widths: Sequence[float], texts: Sequence[str], height: float
) -> None:
    """One row of cells from ``x``: the first left-aligned, the others right-aligned."""
    pdf.set_xy(x, y)
    for k, (width, text) in enumerate(zip(widths, texts, strict=True)):
        pdf.cell(width, height, text, align="L" if k == 0 else "R")


def _document(name: str, title: str) -> tuple[FPDF, str]:
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 12)
    pdf.text(72, 80, title)
    return pdf, name


def _close(pdf: FPDF, name: str, folder: Path, y: float) -> Path:
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(72, y + 24)
    pdf.multi_cell(440, 13, "The table ends here; the figures are provisional.")
    path = folder / name
    pdf.output(str(path))
    return path


WRAPPED = [
    (["Aswan High Dam", "tailwater gauge"], "2610", "88", "12.4"),
    (["Esna barrage"], "2450", "91", "11.8"),
    (["Naga Hammadi barrage", "upstream pool"], "2390", "95", "11.2"),
    (["Asyut barrage"], "2310", "97", "10.9"),
    (["Delta barrage at", "El Qanater"], "2205", "102", "10.1"),
]


def wrapped_cell_table(folder: Path) -> Path:
    """A table whose station names wrap to a second line inside their cell, the values level
    with the name's first line, as a narrow label column sets them."""
    pdf, name = _document("wrapped_cell_table.pdf", "Gauging stations of the Nile")
    widths = (120, 80, 80, 80)
    pdf.set_font("Helvetica", "B", 9)
    _row(pdf, 110, 72, widths, ("Station", "Flow m3/s", "Silt mg/l", "Depth m"), 12)
    pdf.set_font("Helvetica", "", 9)
    y = 128.0
    for lines, *values in WRAPPED:
        _row(pdf, y, 72, widths, (lines[0], *values), 11)
        for k, more in enumerate(lines[1:], 1):
            pdf.set_xy(72, y + 11 * k)
            pdf.cell(120, 11, more)
        y += 11 * len(lines) + 5
    return _close(pdf, name, folder, y)


TWO_ROW_BODY = [
    ("Agriculture", "22260.55", "48.45", "342.51", "0.74", "22652.25"),
    ("Fisheries", "2154.93", "19.07", "91.19", "1.11", "2266.30"),
    ("Forests", "3715.00", "25.10", "2429.39", "3.20", "6172.69"),
    ("Water", "1921.50", "304.50", "3628.00", "7.25", "5861.25"),
]


def _spaced(pdf: FPDF, x: float, labels: Sequence[tuple[str, float]]) -> str:
    """One run of text from ``x`` that sets each label (text, the x its middle stands at)
    by spaces alone, as many producers write a row of a table's head."""
    out = ""
    space = pdf.get_string_width(" ")
    for text, middle in labels:
        gap = middle - pdf.get_string_width(text) / 2 - x - pdf.get_string_width(out)
        out += " " * max(round(gap / space), 1) + text
    return out


def two_row_header_table(folder: Path) -> Path:
    """A table whose head has two rows, each set as one run of text with spaces between its
    labels: "Plan" and "Non-Plan" each centred over its two columns, the columns' own labels
    centred over them."""
    pdf, name = _document("two_row_header_table.pdf", "Budget by department")
    widths = (110, 70, 70, 70, 70, 80)
    rights = [72 + sum(widths[: k + 1]) for k in range(len(widths))]
    middles = [right - 18 for right in rights]
    pdf.set_font("Helvetica", "B", 9)
    groups = [("Plan", (middles[1] + middles[2]) / 2), ("Non-Plan", (middles[3] + middles[4]) / 2)]
    pdf.text(72, 118, _spaced(pdf, 72, groups))
    labels = ("Revenue", "Capital", "Revenue", "Capital", "Total")
    pdf.text(
        74,
        129,
        "Department"
        + _spaced(
            pdf,
            74 + pdf.get_string_width("Department"),
            list(zip(labels, middles[1:], strict=True)),
        ),
    )
    pdf.set_font("Helvetica", "", 9)
    y = 138.0
    for row in TWO_ROW_BODY:
        _row(pdf, y, 72, widths, row, 11)
        y += 13
    return _close(pdf, name, folder, y)


STATEMENT_BODY = [
    # (Notes out of sequence: a column of evenly stepped numbers reads as a plot's axis.)
    ("Revenue from charges", "2", "459,210", "401,877"),
    ("Grants received", "7", "88,000", "92,500"),
    ("Staff costs", "9", "(210,330)", "(198,004)"),
    ("Maintenance", "15", "(97,415)", "(90,120)"),
    ("Surplus for the year", "", "239,465", "206,253"),
]


def statement_column_heads(folder: Path) -> Path:
    """A financial statement whose column heads, in bold and wrapped over two lines ("Year
    ended" over "31 March 2026"), stand a few lines above the body, as a statement's heads
    do."""
    pdf, name = _document("statement_column_heads.pdf", "Statement of income and expenditure")
    widths = (170, 50, 100, 100)
    pdf.set_font("Helvetica", "B", 9)
    _row(pdf, 110, 72, widths, ("", "", "Year ended", "Year ended"), 11)
    _row(pdf, 121, 72, widths, ("", "Notes", "31 March 2026", "31 March 2025"), 11)
    pdf.set_font("Helvetica", "", 9)
    y = 160.0
    for row in STATEMENT_BODY:
        _row(pdf, y, 72, widths, row, 11)
        y += 14
    return _close(pdf, name, folder, y)


UPPER_HALF = [
    ("Region", "Wells", "Springs", "Boreholes"),
    ("Northfield", "12", "4", "-"),
    ("Eastbrook", "9", "7", "-"),
    ("Millbank", "-", "-", "-"),
    ("Southgate", "11", "5", "3"),
    ("Westmoor", "8", "6", "9"),
    ("Highcliff", "14", "3", "4"),
]


def upper_half_lacks_column(folder: Path) -> Path:
    """A table whose upper rows leave their last column nil ("-", boreholes only the lower
    regions have), and one row nil throughout: the rows above it are the same table's, under
    the same head."""
    pdf, name = _document("upper_half_lacks_column.pdf", "Water sources by region")
    widths = (110, 70, 70, 70)
    pdf.set_font("Helvetica", "", 9)
    y = 110.0
    for row in UPPER_HALF:
        _row(pdf, y, 72, widths, row, 11)
        y += 13
    return _close(pdf, name, folder, y)


TOTAL_APART = [
    ("Operations", "120,400", "88,100", "208,500"),
    ("Capital", "310,000", "45,250", "355,250"),
    ("Reserve", "75,000", "3,900", "78,900"),
]


def total_row_apart(folder: Path) -> Path:
    """A statement whose total row stands a line's space below the body, as totals are set
    apart (under a rule that is left out here)."""
    pdf, name = _document("total_row_apart.pdf", "Statement of funds")
    widths = (110, 90, 90, 90)
    pdf.set_font("Helvetica", "B", 9)
    _row(pdf, 110, 72, widths, ("Fund", "Opening", "Receipts", "Closing"), 11)
    pdf.set_font("Helvetica", "", 9)
    y = 124.0
    for row in TOTAL_APART:
        _row(pdf, y, 72, widths, row, 11)
        y += 13
    pdf.set_font("Helvetica", "B", 9)
    y += 26
    _row(pdf, y, 72, widths, ("Total", "505,400", "137,250", "642,650"), 11)
    return _close(pdf, name, folder, y + 11)


SUFFIXED = [
    ("Company", "Market cap", "Revenue", "Staff"),
    ("Northwind", "459B", "78.7M", "12K"),
    ("Contoso", "1.2T", "310.4B", "221K"),
    ("Fabrikam", "88.5B", "9.9B", "40K"),
    ("Tailspin", "7.4B", "512.0M", "3K"),
]


def suffixed_numbers_table(folder: Path) -> Path:
    """A table of numbers with a magnitude suffix ("459B", "78.7M") in columns that stand as
    close as a statement's: a few characters apart."""
    pdf, name = _document("suffixed_numbers_table.pdf", "Companies by size")
    widths = (90, 52, 50, 40)
    pdf.set_font("Helvetica", "", 9)
    y = 110.0
    for row in SUFFIXED:
        _row(pdf, y, 72, widths, row, 11)
        y += 13
    return _close(pdf, name, folder, y)
