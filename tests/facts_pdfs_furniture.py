"""Documents whose page furniture (running heads and feet, page labels) and numbered headings
a reader tells at a glance but that no gap sets off or no repetition shows: written with fpdf2's
built-in fonts, their facts in bench/quality/facts/generated_furniture.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM, pdf_of, stream

FOOT = "Journal of River Studies 12 (2026) 004"
# The article's pages: the one whose body runs down to the running foot.
_CROWDED = 4


def journal_article(folder: Path, pages: int = 6) -> Path:
    """A journal article with a running foot and a page number at the bottom of every page; on
    one page the body runs on down to a display formula set large whose line ends 1.5 pt above
    the foot, closer than the gap between two body lines, so that no gap sets the foot off."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    words = (LOREM * 12).split()
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", "", 11)
        pdf.text(60, 80, f"PAGE{number}START Sediment budgets of the lower reach, part {number}.")
        last = 758 if number == _CROWDED else 730
        for i, y in enumerate(range(94, last + 1, 14)):
            pdf.text(60, y, " ".join(words[i * 11 : (i + 1) * 11]))
        if number == _CROWDED:
            pdf.set_font("Helvetica", "", 20)
            pdf.text(120, 775, "Q = k h^3 / 3 mu")
        pdf.set_font("Helvetica", "", 9)
        pdf.text(60, 787, FOOT)
        pdf.text(510, 787, str(number))
    path = folder / "journal_article.pdf"
    pdf.output(str(path))
    return path


AUTHORS = "Ada Lovelace and Charles Babbage"
TITLE = "Engines of Difference"


def numbered_heads(folder: Path) -> Path:
    """A three-page paper whose running heads alternate, as proceedings set them: the page
    number then the authors on even pages, the short title then the page number on odd ones;
    each head is on one page only, but its number runs with the pages (55, 56, 57). A numbered
    heading in bold opens the second page's body."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    heads = ["", f"56 {AUTHORS}", f"{TITLE} 57"]
    for index, head in enumerate(heads):
        pdf.add_page()
        if head:
            pdf.set_font("Helvetica", "", 10)
            pdf.text(150, 90, head)
        pdf.set_xy(150, 120)
        if index == 0:
            pdf.set_font("Helvetica", "B", 16)
            pdf.multi_cell(310, 20, TITLE, new_x="LMARGIN", new_y="NEXT")
            pdf.set_x(150)
            pdf.set_font("Helvetica", "", 10)
            pdf.multi_cell(310, 14, AUTHORS, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(14)
        if index == 1:
            pdf.set_font("Helvetica", "B", 12)
            pdf.multi_cell(310, 16, "2 Method of Differences", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(6)
        pdf.set_x(150)
        pdf.set_font("Helvetica", "", 10)
        pdf.multi_cell(310, 13, f"BODY{index + 1} The engine tabulates polynomials. " + LOREM)
    path = folder / "numbered_heads.pdf"
    pdf.output(str(path))
    return path


def abstract_book(folder: Path) -> Path:
    """Two pages of a book of abstracts: each page opens with the abstract's label ("GE97"),
    in the body's font, one line above the abstract's title, no wider apart than the body's
    lines."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    for label, title in (
        ("GE97", "Root canal shaping with rotary files"),
        ("GE98", "Sealer penetration into lateral canals"),
    ):
        pdf.add_page()
        pdf.set_font("Helvetica", "", 12)
        pdf.text(72, 84, label)
        pdf.text(72, 100, title)
        pdf.set_xy(72, 106)
        pdf.multi_cell(470, 16, "Teeth were prepared and filled. " + LOREM)
    path = folder / "abstract_book.pdf"
    pdf.output(str(path))
    return path


SECTIONS = ["SURVEY METHODS", "FIELD RESULTS"]


def tab_stop_headings(folder: Path) -> Path:
    """A report whose section numbers stand at the margin and their titles, larger and bold,
    at a tab stop 56 pt to the right, as word processors set them."""
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    y = 100.0
    for number, title in enumerate(SECTIONS, start=1):
        pdf.set_font("Helvetica", "", 12)
        pdf.text(57, y, f"{number}.")
        pdf.set_font("Helvetica", "B", 14)
        pdf.text(113, y, title)
        pdf.set_xy(57, y + 12)
        pdf.set_font("Helvetica", "", 12)
        pdf.multi_cell(480, 14, f"SECTION{number} The gauges were read daily. " + LOREM)
        y = pdf.get_y() + 30
    path = folder / "tab_stop_headings.pdf"
    pdf.output(str(path))
    return path


# Two lines of Arabic, in the order they are read; the first runs a Latin word into the
# Arabic one after it with no space, as a right-to-left line set in a word processor may.
ARABIC = ["حل المشكلات بلغة Pythonمن الأدوات القوية", "وهذا يساعد في تحليل البيانات"]
_ALEFS = "اأإآ"


def _glyphs(line: str) -> list[str]:
    """The line's glyphs left to right as drawn, each as the text its ToUnicode entry gives:
    right to left but a Latin word's letters; a lam and the alef after it are one glyph, its
    text in reading order (lam, alef), as Unicode decomposes the ligature."""
    units: list[str | list[str]] = []
    i = 0
    while i < len(line):
        if line[i].isascii() and line[i].isalpha():
            j = i
            while j < len(line) and line[j].isascii() and line[j].isalpha():
                j += 1
            units.append(list(line[i:j]))
        else:
            j = i + 2 if line[i] == "ل" and line[i + 1 : i + 2] in tuple(_ALEFS) else i + 1
            units.append(line[i:j])
        i = j
    drawn: list[str] = []
    for unit in reversed(units):
        drawn.extend(unit if isinstance(unit, list) else [unit])
    return drawn


def rtl_ligatures(folder: Path) -> Path:
    """A page of Arabic in a Type 3 font of plain boxes whose ToUnicode map gives each glyph
    its text: pdfium reads the lines in logical order, but a lam-alef ligature's two letters
    come out alef first. Written by hand: fpdf2 shapes no Arabic without HarfBuzz."""
    codes: dict[str, int] = {}
    rows = [[codes.setdefault(g, len(codes) + 1) for g in _glyphs(line)] for line in ARABIC]
    widths = [250 if text == " " else 500 for text in codes]
    content = "\n".join(
        f"BT /F1 14 Tf 72 {700 - 22 * i} Td <{''.join(f'{c:02X}' for c in row)}> Tj ET"
        for i, row in enumerate(rows)
    ).encode()
    bfchar = " ".join(
        f"<{code:02X}> <{''.join(f'{ord(c):04X}' for c in text)}>" for text, code in codes.items()
    )
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CIDSystemInfo << "
        "/Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def /CMapName /Adobe-Identity-UCS "
        "def /CMapType 2 def 1 begincodespacerange <00> <FF> endcodespacerange "
        f"{len(codes)} beginbfchar {bfchar} endbfchar endcmap CMapName currentdict /CMap "
        "defineresource pop end end"
    ).encode()
    procs = [f"{w} 0 0 0 {w} 700 d1" + ("" if w == 250 else " 20 0 460 600 re f") for w in widths]
    names = " ".join(f"/g{code}" for code in codes.values())
    charprocs = " ".join(f"/g{code} {6 + code} 0 R" for code in codes.values())
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        stream(content),
        f"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 500 700] /FontMatrix [0.001 0 0 0.001 "
        f"0 0] /CharProcs << {charprocs} >> /Encoding << /Type /Encoding /Differences [1 "
        f"{names}] >> /FirstChar 1 /LastChar {len(codes)} /Widths [{' '.join(map(str, widths))}]"
        " /ToUnicode 6 0 R /Resources << >> >>".encode(),
        stream(cmap),
        *(stream(proc.encode()) for proc in procs),
    ]
    path = folder / "rtl_ligatures.pdf"
    path.write_bytes(pdf_of(objects))
    return path


def statistical_table_page(folder: Path) -> Path:
    """One page of a statistical yearbook: a table set small, its notes, and straight under
    them, no further apart than the notes' lines, the running foot: the page number and the
    chapter's title at the left, set larger than the table, the book's title at the right."""
    pdf = FPDF(unit="pt", format=(420, 660))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 8)
    pdf.text(36, 40, "Table 12. Gauging Stations by District: 2025")
    pdf.set_font("Helvetica", "", 6)
    y = 60.0
    for i in range(80):
        pdf.text(36, y, f"District {i + 1} ....................")
        pdf.text(250, y, f"{(i * 37) % 500 + 20}")
        pdf.text(320, y, f"{(i * 53) % 900 + 100}")
        y += 6.5
    pdf.text(36, y + 2, "1 Stations read at least once a week.")
    pdf.text(36, y + 8.5, "Source: River Survey Office, annual returns.")
    pdf.set_font("Helvetica", "B", 8)
    pdf.text(36, y + 16.5, "206 Water, Rivers, and Floods")
    pdf.set_font("Helvetica", "", 6)
    pdf.text(200, y + 22, "River Survey Office, Statistical Yearbook: 2026")
    path = folder / "statistical_table_page.pdf"
    pdf.output(str(path))
    return path
