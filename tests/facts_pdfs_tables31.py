"""Tables of issue 31 that the text layer's lines alone must rebuild, each a class seen on real
documents: a key of codes and flags beside a description that wraps, under a head whose last
two labels stand closer than the gap the text layer cuts at (an IRS manual's definer table);
a report set all in a monospaced font, its table of figures among lines of titles (a police
department's weekly statistics). Written with fpdf2's built-in fonts; their facts are in
bench/quality/facts/generated_tables31.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

DEFINERS = [
    ("A", "Y", "Y", ["Adjustment transactions including trans", "code, posted date and cycle"]),
    ("B", "Y", "N", ["Re-establishes a retention module", "back to the active file."]),
    ("C", "N", "N", ["Help screen"]),
    ("D", "Y", "N", ["Deposit schedules for 941, CT-1,", "943 and 945."]),
    ("E", "Y", "Y", ["Employer wage information"]),
]


def flag_key_table(folder: Path) -> Path:
    """A table without rules of codes, two Y/N flags and a description that wraps onto more
    lines in its cell: no numbers anywhere, and the head's "Tax Per" and "Result" set one
    font size apart, which the text layer keeps as one line across two columns."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 12)
    pdf.text(72, 80, "Definers of the command")
    xs = (190.0, 235.0, 281.0, 326.0)
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(xs[1], 110, "File")
    pdf.text(xs[2], 110, "MFT &")
    pdf.text(xs[0], 122, "Definer")
    pdf.text(xs[1], 122, "Source")
    pdf.text(xs[2], 122, "Tax Per")
    pdf.text(xs[3], 122, "Result")
    pdf.set_font("Helvetica", "", 10)
    y = 141.0
    for code, source, period, result in DEFINERS:
        for x, text in zip(xs, (code, source, period, result[0]), strict=True):
            pdf.text(x, y, text)
        for k, more in enumerate(result[1:], 1):
            pdf.text(xs[3], y + 12 * k, more)
        y += 12 * len(result) + 7
    pdf.set_xy(72, y + 12)
    pdf.multi_cell(440, 13, "Definers not listed here are not valid for this command.")
    path = folder / "flag_key_table.pdf"
    pdf.output(str(path))
    return path


OFFENCES = [
    ("Murder", "0", "1", "6", "7"),
    ("Robbery", "16", "25", "540", "608"),
    ("Burglary", "20", "29", "621", "736"),
    ("Gr. Larceny", "201", "201", "5,261", "5,750"),
    ("TOTAL", "237", "256", "6,428", "7,101"),
]


def monospaced_report(folder: Path) -> Path:
    """A weekly report set all in Courier, as a plain-text report printed to PDF: title lines,
    a head of group labels centred over the years that label the columns, then rows of a
    label and figures, each one run of text with spaces between its cells."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Courier", "", 10)
    lines = [
        "                     Report Covering the Week",
        "                    7/10/2017 Through 7/16/2017",
        "",
        "                    Week to Date            Year to Date",
        "                  2017      2016          2017      2016",
    ]
    lines += [
        f"{label:>14}{this:>8}{last:>10}{ytd:>14}{ytd_last:>10}"
        for label, this, last, ytd, ytd_last in OFFENCES
    ]
    lines += ["", "  All figures are subject to further analysis and revision."]
    for k, line in enumerate(lines):
        pdf.text(72, 90 + 12 * k, line)
    path = folder / "monospaced_report.pdf"
    pdf.output(str(path))
    return path
