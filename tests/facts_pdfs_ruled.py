"""Ruled tables a reader reads at a glance whose grids are not one cell per row and column:
cells merged across rows, a head of two rows, cells whose text wraps inside shaded rules.
Written with fpdf2's built-in fonts; their facts are in bench/quality/facts/generated_ruled.tsv."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

from fpdf import FPDF


def _pdf() -> FPDF:
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_line_width(0.6)
    return pdf


def _text(pdf: FPDF, x0: float, x1: float, y: float, text: str, size: float = 9) -> None:
    """``text`` centred between ``x0`` and ``x1``, its baseline at ``y``."""
    pdf.set_font("Helvetica", "", size)
    pdf.text(x0 + (x1 - x0 - pdf.get_string_width(text)) / 2, y, text)


ROSTER = [
    ("North", [("Tromso", "31", "1998"), ("Bodo", "42", "2004"), ("Narvik", "12", "2011")]),
    ("South", [("Kristiansand", "58", "1995"), ("Arendal", "9", "2019")]),
]


def ruled_roster(folder: Path) -> Path:
    """A table framed with its title in a row the width of the table, and a first column whose
    cells each span the rows of one region (the rules between those rows stop at it)."""
    pdf = _pdf()
    xs = [72, 160, 300, 380, 460]
    top, title, row = 100, 22, 18
    pdf.rect(xs[0], top, xs[-1] - xs[0], title)
    _text(pdf, xs[0], xs[-1], top + 15, "Branch offices by region", 11)
    y = top + title
    for x0, x1, label in zip(xs, xs[1:], ["Region", "City", "Staff", "Opened"], strict=False):
        _text(pdf, x0, x1, y + 13, label)
    pdf.line(xs[0], y + row, xs[-1], y + row)
    y += row
    for region, cities in ROSTER:
        _text(pdf, xs[0], xs[1], y + row * len(cities) / 2 + 3, region)
        for k, cells in enumerate(cities):
            for x0, x1, cell in zip(xs[1:], xs[2:], cells, strict=False):
                _text(pdf, x0, x1, y + 13, cell)
            y += row
            # Between the rows of one region the rule leaves the region's cell whole.
            pdf.line(xs[0] if k == len(cities) - 1 else xs[1], y, xs[-1], y)
    for x in xs:
        pdf.line(x, top + title, x, y)
    pdf.line(xs[0], top, xs[0], top + title)
    pdf.line(xs[-1], top, xs[-1], top + title)
    path = folder / "ruled_roster.pdf"
    pdf.output(str(path))
    return path


SCHOOLS = [
    ("Hillside", "214", "198", "17"),
    ("Lakeview", "150", "163", "12"),
    ("Old Mill", "88", "91", "7"),
]


def ruled_school_head(folder: Path) -> Path:
    """A ruled table whose head is two rows: a label over two columns, under a rule that
    spans those columns only, their own labels below it, the other head cells spanning both."""
    pdf = _pdf()
    xs = [72, 180, 260, 340, 430]
    top, half, row = 100, 16, 18
    pdf.rect(xs[0], top, xs[-1] - xs[0], 2 * half + row * len(SCHOOLS))
    _text(pdf, xs[0], xs[1], top + half + 3, "School")
    _text(pdf, xs[1], xs[3], top + 12, "Pupils")
    _text(pdf, xs[3], xs[4], top + half + 3, "Teachers")
    pdf.line(xs[1], top + half, xs[3], top + half)
    _text(pdf, xs[1], xs[2], top + half + 12, "Girls")
    _text(pdf, xs[2], xs[3], top + half + 12, "Boys")
    pdf.line(xs[2], top + half, xs[2], top + 2 * half + row * len(SCHOOLS))
    for x in (xs[1], xs[3]):
        pdf.line(x, top, x, top + 2 * half + row * len(SCHOOLS))
    y = top + 2 * half
    for cells in SCHOOLS:
        pdf.line(xs[0], y, xs[-1], y)
        for x0, x1, cell in zip(xs, xs[1:], cells, strict=False):
            _text(pdf, x0, x1, y + 13, cell)
        y += row
    path = folder / "ruled_school_head.pdf"
    pdf.output(str(path))
    return path


PAYMENTS = [
    ("AARON, JOSHUA, N", [""], "WEST GROVE, PA", "$310.33"),
    ("AARON, JOSHUA, N", ["REGIONAL PULMONARY &", "SLEEP MEDICINE"], "WEST GROVE, PA", "$4,700.00"),
    ("TOTAL", [""], "", "$5,010.33"),
    ("ABAD, ENZO, L", [""], "MIAMI, FL", "$67.61"),
    ("TOTAL", [""], "", "$67.61"),
]


def ruled_shaded_wraps(folder: Path) -> Path:
    """A disclosure table as a spreadsheet prints it: rules drawn as thin filled boxes, each
    cell of a total row shaded by a box of its own whose edges lie a hair beside the rules,
    and a cell whose text wraps onto a second line."""
    pdf = _pdf()
    xs = [60, 190, 330, 450, 540]
    top, row, line = 100, 12, 9
    heights = [row + line * (len(entity) - 1) for _, entity, _, _ in PAYMENTS]
    ys = [top, top + row]
    for h in heights:
        ys.append(ys[-1] + h)
    pdf.set_fill_color(191, 191, 191)
    for (payee, _, _, _), y0, y1 in zip(PAYMENTS, ys[1:], ys[2:], strict=False):
        if payee == "TOTAL":
            for x0, x1 in pairwise(xs):
                pdf.rect(x0 - 0.05, y0 - 0.05, x1 - x0 + 0.1, y1 - y0 + 0.1, style="F")
    pdf.set_fill_color(0, 0, 0)
    for y in ys:
        pdf.rect(xs[0], y - 0.15, xs[-1] - xs[0], 0.3, style="F")
    for x in xs:
        pdf.rect(x - 0.15, ys[0], 0.3, ys[-1] - ys[0], style="F")
    for x0, x1, label in zip(
        xs, xs[1:], ["Payee", "Related entity", "City / State", "Amount"], strict=False
    ):
        _text(pdf, x0, x1, top + 9, label, 8)
    pdf.set_font("Helvetica", "", 8)
    for (payee, entity, city, amount), y in zip(PAYMENTS, ys[1:], strict=False):
        pdf.text(xs[0] + 2, y + 9, payee)
        for k, part in enumerate(entity):
            pdf.text(xs[1] + 2, y + 9 + k * line, part)
        pdf.text(xs[2] + 2, y + 9, city)
        pdf.text(xs[4] - 2 - pdf.get_string_width(amount), y + 9, amount)
    path = folder / "ruled_shaded_wraps.pdf"
    pdf.output(str(path))
    return path
