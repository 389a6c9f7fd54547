"""A statistical abstract's table of issue 31 (tabula__12s0324, "Arrests by Sex and Age"):
row labels with dot leaders, a label wrapped onto a second line whose leader ends it, and
three groups of three numeric columns under a head of two rows (a group's label over its
columns' own labels, each wrapped onto two lines). Rules run across the whole table above the
head, under the groups' labels (the groups only), under the head and under the body, and
between the groups from top to bottom; none before the labels or after the last group. Each
number is its own text object, as in the real table (pdfium's FPDFText objects of it: "11,062",
".", "6" apiece), the columns a little more than two digits' width apart as there (the gap
at which the text layer cuts a line into cells). Written with fpdf2's built-in fonts; the
facts are in bench/quality/facts/generated_table31c.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

GROUPS = ("Total", "Resident", "Visitor")
# Each column's label, its lines.
SUBHEADS = (("", "Total"), ("Under 18", "years"), ("18 years", "and over"))
# (label lines, indent, the nine values: each group's total, under 18, 18 and over)
ROWS = [
    (["All licences"], 0, "8,412.5 1,310.2 7,102.3 6,020.8 901.4 5,119.4 2,391.7 408.8 1,982.9"),
    (["Angling"], 0, "5,230.6 1,020.4 4,210.2 3,804.1 702.5 3,101.6 1,426.5 317.9 1,108.6"),
    (
        ["Salmon, grilse and migratory", "sea trout"],
        4,
        "612.3 40.7 571.6 455.0 31.2 423.8 157.3 9.5 147.8",
    ),
    (["Coarse fish"], 4, "4,618.3 979.7 3,638.6 3,349.1 671.3 2,677.8 1,269.2 308.4 960.8"),
    (["Netting"], 0, "96.4 – 96.1 88.0 – 87.8 8.4 – 8.3"),
    (["Bait digging"], 0, "42.7 12.9 29.8 30.5 9.6 20.9 12.2 3.3 8.9"),
    (["Day tickets"], 0, "3,042.8 276.9 (X) 2,098.2 189.3 (X) 944.6 87.6 (X)"),
]
_SIZE = 6.0
_LABEL_END = 132.0  # where the leaders end, a few points before the values
_RULES_X = (137.7, 219.6, 301.5)  # rules between the label column and the groups
_RIGHT = 384.0
# Each group's columns: their right ends this far apart.
_COLUMN = 27.3
_PITCH = 6.5


def licence_table(folder: Path) -> Path:
    """The table, a title and a note above it, a source line under it."""
    pdf = FPDF(unit="pt", format=(420, 400))
    pdf.core_fonts_encoding = "windows-1252"  # has the en dash of a nil
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 9)
    pdf.text(36, 36, "Table 7. Licences Issued by Kind and Age: 2011")
    pdf.set_font("Helvetica", "", _SIZE)
    pdf.text(36, 48, "[In thousands. Licences sold at offices and by agents during the year]")
    top = 56.0
    _rule(pdf, 36, top, _RIGHT)
    for g, group in enumerate(GROUPS):
        x0 = _RULES_X[g]
        pdf.text(x0 + (3 * _COLUMN - pdf.get_string_width(group)) / 2, top + 7, group)
    _rule(pdf, _RULES_X[0], top + 9, _RIGHT)
    pdf.text(60, top + 18, "Kind of licence")
    for g in range(3):
        for s, lines in enumerate(SUBHEADS):
            right = _RULES_X[g] + _COLUMN * (s + 1) - 2
            for k, line in enumerate(lines):
                if line:
                    pdf.text(right - pdf.get_string_width(line), top + 15 + 7 * k, line)
    head_end = top + 26
    _rule(pdf, 36, head_end, _RIGHT)
    y = head_end + 8
    for lines, indent, values in ROWS:
        for k, line in enumerate(lines):
            x = 36 + indent + (2 if k else 0)
            if k == len(lines) - 1:
                # Top-level labels leave a space before their leader, indented ones none.
                line = _leader(pdf, line, x, " " if not indent else "")
            pdf.text(x, y, line)
            if k < len(lines) - 1:
                y += _PITCH
        for n, value in enumerate(values.split()):
            g, s = divmod(n, 3)
            right = _RULES_X[g] + _COLUMN * (s + 1) - 2
            pdf.text(right - pdf.get_string_width(value), y, value)
        y += _PITCH
    bottom = y - 5
    _rule(pdf, 36, bottom, _RIGHT)
    for x in _RULES_X:
        pdf.rect(x - 0.4, top, 0.8, bottom - top, style="F")
    pdf.text(36, bottom + 10, "– Represents zero. X Not applicable.")
    pdf.text(36, bottom + 18, "Source: Licensing Office, annual returns.")
    path = folder / "licence_table.pdf"
    pdf.output(str(path))
    return path


def _rule(pdf: FPDF, x0: float, y: float, x1: float) -> None:
    pdf.rect(x0, y - 0.4, x1 - x0, 0.8, style="F")


def _leader(pdf: FPDF, label: str, x: float, space: str) -> str:
    """``label`` (then ``space``) with dots, a space apart, up to the leaders' end."""
    text = f"{label}{space}"
    while x + pdf.get_string_width(f"{text}. ") < _LABEL_END:
        text += ". "
    return text.rstrip()
