"""Short documents whose page furniture a reader sees at a glance but repetition cannot show:
written with fpdf2's built-in fonts, their facts in bench/quality/facts/generated.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM

HEAD = "Riverside Water Board - Bulletin No. 7 - March 2026"
STAMP = "DRAFT - internal review copy, not for distribution"
BODY = [
    "OUTLOOKSTART The spring flood outlook rests on the snow that lies in the upper valleys "
    "and on the rain the next six weeks bring. " + LOREM,
    "Gauges on the main stem read above their long-term median for the whole of February. " + LOREM,
    "Crews will clear the culverts below the weir before the thaw begins in earnest. "
    + "OUTLOOKEND",
]


def _page(pdf: FPDF, number: int, paragraphs: list[str]) -> None:
    """A Letter page with wide margins: the running head 100 pt down (below the fixed top
    band), a rotated stamp in the left margin, the body, and the page number just under the
    body, far above the bottom margin."""
    pdf.add_page()
    pdf.set_font("Helvetica", "", 8)
    pdf.text(90, 100, HEAD)
    with pdf.rotation(90, 40, 600):
        pdf.set_font("Helvetica", "", 9)
        pdf.text(40, 600, STAMP)
    pdf.set_xy(90, 140)
    if number == 1:
        pdf.set_font("Helvetica", "B", 16)
        pdf.cell(0, 20, "Spring Flood Outlook", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(6)
    for text in paragraphs:
        pdf.set_x(90)
        pdf.set_font("Helvetica", "", 10)
        pdf.multi_cell(400, 13, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(6)
    pdf.set_font("Helvetica", "", 9)
    pdf.text(300, pdf.get_y() + 30, str(number))


def short_bulletin(folder: Path, pages: int = 1) -> Path:
    """A one- or two-page bulletin (see :func:`_page`); the body is split across the pages."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.set_margins(90, 72, 90)
    per_page = -(-len(BODY) // pages)
    for n in range(pages):
        _page(pdf, n + 1, BODY[n * per_page : (n + 1) * per_page])
    path = folder / ("short_bulletin.pdf" if pages == 1 else "two_page_bulletin.pdf")
    pdf.output(str(path))
    return path


def two_page_bulletin(folder: Path) -> Path:
    return short_bulletin(folder, pages=2)


STATEMENT = [
    ("District", "2024", "2025", "2026"),
    ("Northfield", "1,204,330", "1,310,772", "1,402,118"),
    ("Eastbrook", "987,654", "1,001,200", "1,115,090"),
    ("Millbank", "2,450,001", "2,398,440", "2,512,606"),
    ("Total", "4,641,985", "4,710,412", "5,029,814"),
]


def numeric_statement(folder: Path) -> Path:
    """A financial statement without rules whose numeric columns stand about one digit pair
    apart, as printed statements set them: numbers right-aligned in columns 60 pt wide, the
    gap between two numbers narrower than two character heights."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 13)
    pdf.text(72, 90, "Statement of Water Charges (in dollars)")
    pdf.set_font("Helvetica", "", 9)
    y = 120.0
    for row in STATEMENT:
        pdf.set_xy(72, y)
        pdf.cell(90, 12, row[0])
        for value in row[1:]:
            pdf.cell(52, 12, value, align="R")
        y += 14
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(72, y + 20)
    pdf.multi_cell(400, 13, "Charges are billed quarterly; the totals include late fees.")
    path = folder / "numeric_statement.pdf"
    pdf.output(str(path))
    return path


SURVEY = [
    ("District", "Total", "Rural", "Urban"),
    ("Barpeta", "88.8", "88.6", "91.1"),
    ("Cachar", "85.3", "84.9", "86.8"),
    ("Dhemaji", "92.9", "92.8", "94.1"),
    ("Nalbari", "90.2", "89.9", "93.0"),
]


def table_beside_upright_label(folder: Path) -> Path:
    """A table without rules with a label set upright in the margin beside it, as tall as the
    table (a survey's name along the page's edge)."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 12)
    pdf.text(90, 90, "Children Attending School (%)")
    pdf.set_font("Helvetica", "", 10)
    y = 120.0
    for row in SURVEY:
        pdf.set_xy(90, y)
        pdf.cell(110, 14, row[0])
        for value in row[1:]:
            pdf.cell(70, 14, value, align="R")
        y += 16
    with pdf.rotation(90, 60, y):
        pdf.set_font("Helvetica", "", 11)
        pdf.text(60, y, "Annual Health Survey 2010-11")
    path = folder / "table_beside_upright_label.pdf"
    pdf.output(str(path))
    return path


TOTALS = [
    ("Fund", "Opening balance", "Receipts in year", "Transfers made", "Closing balance"),
    ("Operations", "120,400", "88,100", "", "208,500"),
    ("Capital", "310,000", "45,250", "", "355,250"),
    ("Reserve", "75,000", "3,900", "", "78,900"),
    ("Total", "505,400", "137,250", "(12,000)", "630,650"),
]


def total_row_statement(folder: Path) -> Path:
    """A statement without rules whose total row fills a column the body leaves empty (a
    transfer only the total shows), as the closing row of a fund statement does; its head's
    labels fill their columns, so that the text layer sets them as one line."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 12)
    pdf.text(72, 90, "Statement of Funds")
    y = 120.0
    for row in TOTALS:
        pdf.set_font("Helvetica", "", 9 if row[0] == "Fund" else 10)
        pdf.set_xy(72, y)
        pdf.cell(100, 14, row[0])
        for value in row[1:]:
            pdf.cell(80, 14, value, align="L" if row[0] == "Fund" else "R")
        y += 16
    path = folder / "total_row_statement.pdf"
    pdf.output(str(path))
    return path


def article_with_title_head(folder: Path) -> Path:
    """A three-page article whose running head repeats its title, small, on the pages after
    the first, where the title stands large at the top of the first page; the first page
    also has a row of numbered choices set wide apart, as an exam sets them."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    title = "Sediment Budgets of Small Rivers"
    for n in range(3):
        pdf.add_page()
        y = 140.0
        if n == 0:
            pdf.set_font("Helvetica", "B", 18)
            pdf.text(72, 110, title)
            pdf.set_font("Helvetica", "", 10)
            for k, choice in enumerate(("1. 49 cm", "2. 56 cm", "3. 63 cm", "4. 70 cm")):
                pdf.text(72 + 100 * k, 140, choice)
            y = 170.0
        else:
            pdf.set_font("Helvetica", "", 8)
            pdf.text(200, 110, title)
        pdf.set_font("Helvetica", "", 10)
        pdf.set_xy(72, y)
        pdf.multi_cell(450, 13, f"PAGE{n + 1}START " + LOREM * 4)
    path = folder / "article_with_title_head.pdf"
    pdf.output(str(path))
    return path


INDICATORS = [
    ("Children age 0-5 months exclusively breastfed", "76.9", "80.0", "NA", "NA"),
    ("Children age 6-9 months given solid food and breast milk", "78.6", "75.0", "85.9", "89.3"),
    ("Children under 3 years breastfed within one hour of birth", "42.9", "46.5", "50.6", "52.9"),
    ("Women who know what to do when a child gets diarrhoea", "96.3", "96.2", "94.4", "94.2"),
    ("Women aware of the danger signs of respiratory infection", "55.9", "59.7", "32.8", "34.7"),
    ("Children below age 5 years having birth registration done", "40.6", "44.3", "NA", "NA"),
]


def indicator_sheet(folder: Path) -> Path:
    """A key-indicators sheet: each row one run of text, a long label with a dot leader and
    its four values set wide apart by spaces ("... 76.9     80.0     NA     NA"), as a
    survey's district sheet prints them. The labels are too long for a table's cells."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 12)
    pdf.text(60, 80, "District Key Indicators")
    pdf.set_font("Helvetica", "", 9)
    y = 110.0
    for label, *values in INDICATORS:
        leader = " " + "." * max(70 - len(label), 4) + " "
        pdf.text(60, y, label + leader + (" " * 12).join(values))
        y += 14
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(60, y + 10)
    pdf.multi_cell(450, 13, "NA: not available for the rural districts in this round.")
    path = folder / "indicator_sheet.pdf"
    pdf.output(str(path))
    return path
