"""Small PDFs with known structure, written with fpdf2's built-in fonts (no font files needed).

Each generator writes one file under the given folder and returns its path. The texts are
plain English so word-level assertions stay readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pypdfium2 as pdfium
from fpdf import FPDF

LOREM = (
    "Rivers carry sediment from the mountains to the sea, and the speed of the water decides "
    "how much of it stays suspended. Slow water drops sand first and silt later, which is why "
    "deltas grow in layers that a careful observer can read like the pages of a book. "
)


class _Report(FPDF):
    """A document whose every page has the same running header and a page-number footer."""

    header_text = ""

    def header(self) -> None:
        if self.header_text:
            self.set_font("Helvetica", "", 8)
            self.set_y(12)
            self.cell(0, 5, self.header_text, align="R")
            self.set_y(30)

    def footer(self) -> None:
        if self.header_text:
            self.set_y(-15)
            self.set_font("Helvetica", "", 8)
            self.cell(0, 5, f"Page {self.page_no()}", align="C")


def _new(header: str = "") -> _Report:
    pdf = _Report(format="A4")
    pdf.header_text = header
    pdf.set_auto_page_break(auto=True, margin=25)
    pdf.set_margins(20, 30, 20)
    pdf.add_page()
    return pdf


def _heading(pdf: FPDF, text: str, size: int) -> None:
    pdf.set_font("Helvetica", "B", size)
    pdf.multi_cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def _para(pdf: FPDF, text: str) -> None:
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, 5, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def structured(folder: Path) -> Path:
    """Two heading levels, a bulleted and a numbered list, a hyphen at a line break."""
    pdf = _new()
    _heading(pdf, "Field Guide to Rivers", 20)
    _para(pdf, LOREM)
    _heading(pdf, "Sediment Transport", 14)
    _para(pdf, LOREM)
    pdf.set_font("Helvetica", "", 10)
    for item in ("- gravel rolls along the bed", "- sand hops in short jumps", "- silt floats"):
        pdf.cell(0, 5, item, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    for n, item in enumerate(("measure the depth", "sample the water", "weigh the residue"), 1):
        pdf.cell(0, 5, f"{n}. {item}", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    # A word broken at the line end by a hyphen, the way a typesetter would.
    pdf.cell(0, 5, "The measurements were taken at regular intervals and carefully docu-")
    pdf.ln(5)
    pdf.cell(0, 5, "mented in the field notebook before the flood season began.")
    pdf.ln(8)
    _heading(pdf, "Deltas", 14)
    _para(pdf, LOREM)
    path = folder / "structured.pdf"
    pdf.output(str(path))
    return path


def long_report(folder: Path, pages: int = 5) -> Path:
    """Running header and page numbers on every page; paragraphs run across page breaks."""
    pdf = _new(header="Annual River Survey 2026")
    _heading(pdf, "Annual River Survey", 18)
    section = 0
    while pdf.page_no() < pages:
        section += 1
        _heading(pdf, f"Section {section}: Observations", 13)
        # Long paragraphs that fpdf breaks across pages wherever the page fills up.
        _para(pdf, (LOREM * 6).strip())
    path = folder / "long_report.pdf"
    pdf.output(str(path))
    return path


def split(pdf_path: Path, folder: Path, size: int) -> list[tuple[Path, int]]:
    """Cut a PDF into chunk PDFs of ``size`` pages as the splitter does (its own
    :func:`pagefleet.pdf.cut_chunk`).

    Returns (chunk path, 1-based number of its first page in the whole document).
    """
    from pagefleet.models import ChunkSpec
    from pagefleet.pdf import cut_chunk

    src = pdfium.PdfDocument(str(pdf_path))
    try:
        chunks = []
        for index, first in enumerate(range(1, len(src) + 1, size)):
            spec = ChunkSpec(
                index=index, first_page=first, last_page=min(len(src), first + size - 1)
            )
            path = folder / f"{pdf_path.stem}-{first}.pdf"
            path.write_bytes(cut_chunk(src, spec))
            chunks.append((path, first))
        return chunks
    finally:
        src.close()


def two_columns(folder: Path) -> Path:
    """A full-width title over two columns whose lines sit side by side on the same rows."""
    pdf = _new()
    _heading(pdf, "Two Column Notes", 18)
    top = pdf.get_y()
    pdf.set_font("Helvetica", "", 10)
    left = "LEFTSTART " + LOREM * 2 + "LEFTEND"
    right = "RIGHTSTART " + LOREM * 2 + "RIGHTEND"
    pdf.set_xy(20, top)
    pdf.multi_cell(80, 5, left)
    pdf.set_xy(110, top)
    pdf.multi_cell(80, 5, right)
    path = folder / "two_columns.pdf"
    pdf.output(str(path))
    return path


TABLE = [
    ("River", "Length km", "Outflow"),
    ("Nile", "6650", "Mediterranean"),
    ("Amazon", "6400", "Atlantic"),
]


def _ruled_table(pdf: FPDF) -> None:
    """TABLE with every cell ruled, and a paragraph after it."""
    pdf.set_font("Helvetica", "", 10)
    with pdf.table() as table:
        for values in TABLE:
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.ln(4)
    _para(pdf, "The table ends here.")


def ruled_table(folder: Path) -> Path:
    """A paragraph, a table with every cell ruled, and a paragraph after it."""
    pdf = _new()
    _para(pdf, "Rivers by length, from the survey.")
    _ruled_table(pdf)
    path = folder / "ruled_table.pdf"
    pdf.output(str(path))
    return path


def with_outline(folder: Path) -> Path:
    """Chapters and sections in the outline whose headings are all in one plain style."""
    pdf = _new()
    for chapter in ("Sources", "Mouths"):
        pdf.start_section(chapter, level=0)
        _para(pdf, chapter)
        for section in ("Gauging", "Sampling"):
            pdf.start_section(f"{chapter} {section}", level=1)
            _para(pdf, f"{chapter} {section}")
            _para(pdf, LOREM)
    path = folder / "with_outline.pdf"
    pdf.output(str(path))
    return path


def scanned(folder: Path, texts: list[str]) -> Path:
    """One image-only page per text: the text drawn with Pillow, no text layer at all."""
    from PIL import Image, ImageDraw, ImageFont

    pdf = FPDF(unit="pt", format=(420, 200))
    font = ImageFont.load_default(size=36)
    for i, text in enumerate(texts):
        image = Image.new("RGB", (1200, 400), "white")
        ImageDraw.Draw(image).text((60, 150), text, fill="black", font=font)
        image_path = folder / f"scan-{i}.png"
        image.save(image_path)
        pdf.add_page()
        pdf.image(str(image_path), x=0, y=0, w=420, h=140)
    path = folder / "scanned.pdf"
    pdf.output(str(path))
    return path


def outline_destinations(folder: Path) -> Path:
    """Bookmarks whose destinations point at headings that say more than the bookmark does.

    Page 1 has a short caption with the words of a bookmark above the heading the bookmark
    points at; the heading carries a number and a date the bookmark lacks. Page 2 has a part
    title set on two lines in two styles, one bookmark for both.
    """
    pdf = _new()
    _para(pdf, "Gauging Stations")  # a caption, not the heading
    _para(pdf, LOREM)
    pdf.start_section("3-1 Gauging Stations", level=0)
    _para(pdf, "Exhibit 3-1 (07-01-2019) Gauging Stations")
    _para(pdf, LOREM)
    pdf.start_section("Sampling", level=1)
    _para(pdf, "3.1.1 Sampling")
    _para(pdf, LOREM)
    pdf.add_page()
    pdf.start_section("II The Deltas", level=0)
    _heading(pdf, "Part II", 12)
    pdf.set_font("Helvetica", "", 18)
    pdf.cell(0, 10, "The Deltas", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    _para(pdf, LOREM)
    path = folder / "outline_destinations.pdf"
    pdf.output(str(path))
    return path


def ruler_outside_crop_box(folder: Path) -> Path:
    """A page whose line-number ruler and printer's slug line lie outside its crop box, and a
    line of text drawn invisible (render mode 3) over no image."""
    from fpdf.enums import TextMode

    pdf = _new()
    pdf.set_font("Helvetica", "", 10)
    top = pdf.get_y()
    pdf.multi_cell(0, 5, (LOREM * 3).strip(), new_x="LMARGIN", new_y="NEXT")
    bottom = pdf.get_y()
    pdf.set_font("Helvetica", "", 7)
    for n, y in enumerate(range(int(top), int(bottom), 5), 1):
        pdf.text(4, y + 3.5, f"{n:03d}")  # the ruler, left of the crop box
    pdf.text(20, 292, "SLUGLINE job 4711 plate cyan 2026-12-01")  # below the crop box
    pdf.set_font("Helvetica", "", 10)
    pdf.text_mode = TextMode.INVISIBLE
    pdf.text(20, bottom + 10, "HIDDENWORDS nobody can see")
    pdf.text_mode = TextMode.FILL
    path = folder / "ruler_uncropped.pdf"
    pdf.output(str(path))
    doc = pdfium.PdfDocument(str(path))
    try:
        page = doc[0]
        width, height = page.get_size()
        # fpdf works in mm: the crop box leaves out the 12 mm left strip and 12 mm at the foot.
        page.set_cropbox(12 * 72 / 25.4, 12 * 72 / 25.4, width, height)
        page.close()
        out = folder / "ruler_outside_crop_box.pdf"
        doc.save(str(out))
    finally:
        doc.close()
    return out


SLIDE_BULLETS = (
    "Rivers carry sand and silt down to the coast, where the waves sort it",
    "Deltas grow where the sea cannot carry the sediment away",
)


def slide(folder: Path) -> Path:
    """A landscape slide: a title, bullets whose text wraps (the bullet glyph larger and not
    bold, the text bold), a nested bullet, and a plot with its axes' tick labels below."""
    pdf = FPDF(orientation="L", unit="pt", format=(600, 800))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 32)
    pdf.text(60, 70, "Sediment Budget")
    y = 120.0
    for depth, text in enumerate(SLIDE_BULLETS):
        x = 80 + 40 * depth
        pdf.set_font("Helvetica", "", 26)
        pdf.text(x, y + 2, "-")
        pdf.set_font("Helvetica", "B", 18)
        pdf.set_xy(x + 22, y - 16)
        pdf.multi_cell(340, 24, text)
        y = pdf.get_y() + 30
    # The plot: y ticks right-aligned on the axis, x ticks on one row, axis titles, a legend.
    pdf.set_font("Helvetica", "", 10)
    for k, value in enumerate(("40", "30", "20", "10", "0")):
        pdf.text(150 - pdf.get_string_width(value), 330 + 36 * k, value)
    pdf.line(155, 320, 155, 478)
    pdf.line(155, 478, 600, 478)
    for k, year in enumerate(("1990", "2000", "2010", "2020")):
        pdf.text(160 + 130 * k, 492, year)
    pdf.text(90, 400, "Tonnes")
    pdf.text(360, 512, "Year")
    pdf.text(520, 340, "NILE")
    pdf.text(520, 354, "AMAZON")
    path = folder / "slide.pdf"
    pdf.output(str(path))
    return path


UNRULED = [
    ("Station", "Depth m", "Flow m3/s", "Silt mg/l"),
    ("Aswan", "12.4", "2830", "41"),
    ("Cairo", "8.1", "2610", "57"),
    ("Rosetta", "4.9", "1150", "88"),
]


def unruled_table(folder: Path) -> Path:
    """A paragraph, a table of statistics with no rules at all (columns set apart by
    whitespace only, numbers right-aligned), and a paragraph after it."""
    pdf = _new()
    _para(pdf, "Gauging results for the lower Nile, from the survey.")
    pdf.set_font("Helvetica", "", 10)
    widths = (45, 30, 30, 30)
    for row in UNRULED:
        for k, (value, width) in enumerate(zip(row, widths, strict=True)):
            pdf.cell(width, 6, value, align="L" if k == 0 else "R")
        pdf.ln(6)
    pdf.ln(4)
    _para(pdf, "The table ends here.")
    path = folder / "unruled_table.pdf"
    pdf.output(str(path))
    return path


FORM_LEFT = [
    "A) Name of the gauging station",
    "B) River and bank",
    "C) Nearest town or village",
    "D) Observer in charge",
    "E) Telephone of the observer",
]
FORM_RIGHT = [
    "I) Date of the survey",
    "J) Water level at noon",
    "K) Weather on the day",
    "L) Boat or wading",
    "M) Signature of the observer",
]


def two_column_form(folder: Path) -> Path:
    """A form: a title, then two columns of lettered field labels side by side on the same
    rows, each followed by a blank line to write on."""
    pdf = _new()
    _heading(pdf, "Gauging Station Report", 16)
    pdf.set_font("Helvetica", "", 9)
    top = pdf.get_y() + 4
    for k, (left, right) in enumerate(zip(FORM_LEFT, FORM_RIGHT, strict=True)):
        y = top + 14 * k
        pdf.text(20, y, left)
        pdf.line(20, y + 6, 95, y + 6)
        pdf.text(110, y, right)
        pdf.line(110, y + 6, 190, y + 6)
    path = folder / "two_column_form.pdf"
    pdf.output(str(path))
    return path


CAPTION = (
    "CAPSTART Canister shot is a tin cylinder with iron heads, filled with balls packed in "
    "sawdust; the heads are movable and the edges of the tin are turned over them. CAPEND"
)


def captions_beside_text(folder: Path) -> Path:
    """A column of body text whose left side holds captions in a smaller font, justified,
    ending a few points short of where the body text starts (an illustrated book's page:
    pypdf's vicksburg-scan-ocr page 3), under an opening line that runs across both sides,
    written in two pieces (an OCR layer cuts it at the illustration's edge): its left piece
    first, its right piece last, after the body text."""
    pdf = _new()
    pdf.set_font("Helvetica", "", 10)
    top = pdf.get_y()
    # fpdf2 keeps a 1 mm cell margin inside each cell: the captions' text ends at 78 mm and
    # the body's starts at 79.5 mm, 4 pt apart; the opening line's pieces are as far apart.
    first = "OPENSTART The opening line runs"
    pdf.text(78 - pdf.get_string_width(first), top + 4, first)
    pdf.set_font("Helvetica", "", 7)
    pdf.set_xy(20, top + 30)
    pdf.multi_cell(59, 3.2, CAPTION, align="J")
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(78.5, top + 8)
    pdf.multi_cell(110, 5.5, "BODYSTART " + LOREM * 3 + "BODYEND", align="J")
    pdf.text(79.5, top + 4.4, "across the page in two pieces OPENEND")
    path = folder / "captions_beside_text.pdf"
    pdf.output(str(path))
    return path


PARAGRAPH_CELLS = [
    ("Question", "Passage found by keywords", "Passage found by meaning"),
    (
        "HEADONE Which sea lies between England and Ireland?",
        "KEYONE " + LOREM,
        "MEANONE " + LOREM,
    ),
    (
        "HEADTWO Who measured the delta's layers?",
        "KEYTWO " + LOREM,
        "MEANTWO " + LOREM,
    ),
]


def paragraph_cells(folder: Path) -> Path:
    """A table without rules whose cells are paragraphs of several lines (dpr-multi-column
    page 13: a question, the passage one retriever found, the passage the other found), a
    header row of one line per cell, and a paragraph under the table."""
    pdf = _new()
    pdf.set_font("Helvetica", "", 8)
    widths = (40, 60, 60)
    y = pdf.get_y()
    for row in PARAGRAPH_CELLS:
        bottom = y
        x = 20.0
        for text, width in zip(row, widths, strict=True):
            pdf.set_xy(x, y)
            pdf.multi_cell(width - 4, 3.5, text)
            bottom = max(bottom, pdf.get_y())
            x += width
        y = bottom + 4
    pdf.set_xy(20, y + 6)
    _para(pdf, "AFTERTABLE " + LOREM)
    path = folder / "paragraph_cells.pdf"
    pdf.output(str(path))
    return path


FOOTNOTE = [
    "Preliminary report of the accident investigation,",
    "dated November 2018, and the final report, dated",
    "October 2019, can be found in the docket. NOTEEND",
]


def footnote_superscript(folder: Path) -> Path:
    """A paragraph, then a footnote of three lines whose number is a superscript in the same
    font, set the way many producers set text (federal-register): font size 1, each run
    scaled by its text matrix, the number to 5 pt and the note's words to 7 pt."""
    pdf = _new()
    _para(pdf, LOREM)
    x, y = 20 * 72 / 25.4, 842 - 100 * 72 / 25.4  # PDF points, from the bottom
    runs = [f"BT /F1 1 Tf 5 0 0 5 {x:.2f} {y + 2:.2f} Tm (1) Tj"]
    for k, text in enumerate(FOOTNOTE):
        runs.append(f"7 0 0 7 {x + (3 if k == 0 else 0):.2f} {y - 8 * k:.2f} Tm ({text}) Tj")
    pdf._out(" ".join(runs) + " ET")  # fpdf2 has no text matrix of its own to scale with
    path = folder / "footnote_superscript.pdf"
    pdf.output(str(path))
    return path


SYMBOLS = [
    ("Perm(X)", "SYMONE permutations of X"),
    ("Sym(X)", "SYMTWO symmetric group"),
    ("Aut(G)", "SYMTHREE automorphisms"),
    ("Hom(A)", "SYMFOUR homomorphisms"),
    ("Iso(M)", "SYMFIVE isometries of M"),
]


def symbol_list(folder: Path) -> Path:
    """A list of symbols, each set larger than what it means beside it, 4 pt to the left of
    the meaning (a book's list of symbols: GeoTopo, where a formula's tall box makes the
    symbol's line the taller one), one symbol and its meaning to a row. The symbols are
    written first, then the meanings, each a little off the other's baseline."""
    pdf = _new()
    top = pdf.get_y() + 5
    pdf.set_font("Helvetica", "", 14)
    for k, (symbol, _) in enumerate(SYMBOLS):
        pdf.text(50 - pdf.get_string_width(symbol), top + 8 * k + 0.8, symbol)
    pdf.set_font("Helvetica", "", 9)
    for k, (_, meaning) in enumerate(SYMBOLS):
        pdf.text(51.4, top + 8 * k, meaning)
    path = folder / "symbol_list.pdf"
    pdf.output(str(path))
    return path


# The colour of the charts' bars: a rendered crop of the chart must show it.
BAR = (200, 30, 30)
# A listing and its indents, the way the tests expect it back.
LISTING = [
    "def flow(depth, width):",
    "    area = depth * width",
    "    if area > 10:",
    '        return "wide"',
    '    return "narrow"',
]


def photo(folder: Path, size: tuple[int, int] = (120, 90)) -> Path:
    """A PNG of ``size`` pixels with a pattern no two pixels rows share (quadrants, a ramp)."""
    from PIL import Image

    width, height = size
    image = Image.new("RGB", size)
    image.putdata(
        [
            (
                (x * 255) // width,
                (y * 255) // height,
                255 if (x < width // 2) == (y < height // 2) else 0,
            )
            for y in range(height)
            for x in range(width)
        ]
    )
    path = folder / f"photo-{width}x{height}.png"
    image.save(path)
    return path


def images_by_channels(folder: Path) -> Path:
    """A page of three images, each between paragraphs: the colour photo, a grey one, and a
    stencil (one colour, its shape all in its alpha, as scanned forms are often drawn)."""
    from PIL import Image

    colour = photo(folder)
    with Image.open(colour) as image:
        grey, stencil = folder / "grey.png", folder / "stencil.png"
        image.convert("L").save(grey)
        shape = image.convert("L")
    mask = Image.new("RGBA", shape.size, (20, 20, 20, 0))
    mask.putalpha(shape)
    mask.save(stencil)
    pdf = _new()
    for image_path in (colour, grey, stencil):
        _para(pdf, "The stations were read every morning before the gauges were cleaned.")
        pdf.image(str(image_path), x=20, y=pdf.get_y(), w=60)
        pdf.set_y(pdf.get_y() + 50)
    path = folder / "images.pdf"
    pdf.output(str(path))
    return path


def stream(data: bytes, extra: str = "") -> bytes:
    """A PDF stream object's body: its dictionary (``extra``'s entries and the length) and
    ``data``."""
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), extra.encode(), data)


def pdf_of(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1, the catalog first) with its cross-reference
    table, for what fpdf2 cannot write."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def image_masks(folder: Path) -> Path:
    """A page of three image masks (one-bit stencils painted in the fill colour, as scanned
    forms and screenshots are stored), written by hand: fpdf2 writes none. Each is a triangle,
    so a flip shows: red with the default /Decode, blue with an inverted one, green placed
    upside down (a negative vertical scale)."""
    width, height = 64, 48
    rows = [
        sum(1 << (width - 1 - x) for x in range(width) if x < y * width // height).to_bytes(
            width // 8, "big"
        )
        for y in range(height)
    ]
    data = b"".join(rows)
    masks = [
        ("[0 1]", b"1 0 0 rg 128 0 0 96 72 560 cm"),
        ("[1 0]", b"0 0 1 rg 128 0 0 96 72 400 cm"),
        ("[0 1]", b"0 0.5 0 rg 128 0 0 -96 72 336 cm"),
    ]
    text = b"BT /F1 11 Tf 72 740 Td (Each form below was scanned and stored as a stencil.) Tj ET"
    content = b"\n".join([text, *(b"q %s /Im%d Do Q" % (cm, k) for k, (_, cm) in enumerate(masks))])
    xobjects = b" ".join(b"/Im%d %d 0 R" % (k, 5 + k) for k in range(len(masks)))
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 "
        + font
        + b" >> /XObject << "
        + xobjects
        + b" >> >> /Contents 4 0 R >>",
        stream(content),
        *(
            stream(
                data,
                f" /Type /XObject /Subtype /Image /Width {width} /Height {height} /ImageMask true"
                f" /BitsPerComponent 1 /Decode {decode}",
            )
            for decode, _ in masks
        ),
    ]
    path = folder / "image-masks.pdf"
    path.write_bytes(pdf_of(objects))
    return path


def _bar_chart(pdf: FPDF, x: float, y: float) -> None:
    """A bar chart drawn with paths: axes, ticks, five bars, a line through them, its labels
    set in small type along the axes and a legend."""
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.3)
    pdf.line(x, y, x, y + 50)  # y axis
    pdf.line(x, y + 50, x + 90, y + 50)  # x axis
    pdf.set_font("Helvetica", "", 6)
    for k in range(5):
        tick = y + 50 - 10 * k
        pdf.line(x - 1.5, tick, x, tick)
        pdf.text(x - 7, tick + 1, str(10 * k))
    pdf.set_fill_color(*BAR)
    heights = (12, 30, 22, 41, 17)
    for k, h in enumerate(heights):
        pdf.rect(x + 6 + 17 * k, y + 50 - h, 10, h, style="F")
        pdf.text(x + 9 + 17 * k, y + 54, "ABCDE"[k])
    pdf.polyline([(x + 11 + 17 * k, y + 45 - h) for k, h in enumerate(heights)])
    pdf.text(x + 60, y + 4, "Rain (mm)")


def figures(folder: Path) -> Path:
    """Page 1: a paragraph, a photo (and an icon too small to keep), a paragraph, a bar chart
    drawn with paths and its caption, a paragraph. Page 2: a ruled table inside a page
    border, with a rule under the heading."""
    pdf = _new()
    _heading(pdf, "Gauging Stations", 16)
    _para(pdf, LOREM)
    pdf.image(str(photo(folder)), x=20, y=pdf.get_y(), w=60)
    pdf.image(str(photo(folder, (16, 16))), x=150, y=pdf.get_y(), w=8)
    pdf.set_y(pdf.get_y() + 50)
    _para(pdf, "The stations were read every morning before the gauges were cleaned.")
    top = pdf.get_y() + 4
    _bar_chart(pdf, 40, top)
    pdf.set_y(top + 60)
    _para(pdf, "Figure 1: Rain at five stations.")
    _para(pdf, LOREM)
    pdf.add_page()
    pdf.rect(10, 10, 190, 277)  # the page's border
    _heading(pdf, "Rivers", 14)
    pdf.line(20, pdf.get_y(), 190, pdf.get_y())
    pdf.ln(4)
    _ruled_table(pdf)
    path = folder / "figures.pdf"
    pdf.output(str(path))
    return path


def code_listing(folder: Path) -> Path:
    """A paragraph, a listing in Courier (the first two lines indented by spaces, the rest by
    their place on the line), a paragraph that names code in Courier on a line of its own."""
    pdf = _new()
    _para(pdf, "The helper below tells wide rivers from narrow ones:")
    pdf.set_font("Courier", "", 10)
    for k, line in enumerate(LISTING):
        if k < 2:
            pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
        else:
            code = line.lstrip(" ")
            pdf.set_x(pdf.l_margin + pdf.get_string_width(" ") * (len(line) - len(code)))
            pdf.cell(0, 5, code, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(
        0,
        5,
        "Each call of the helper reads the depth and width it is given, and the",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.set_font("Courier", "", 10)
    pdf.cell(0, 5, "flow_of_the_river_at_the_gauge(depth, width)", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(
        0,
        5,
        "helper names the result after the width of the channel it measured.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    path = folder / "code_listing.pdf"
    pdf.output(str(path))
    return path


def junk_labels(folder: Path) -> Path:
    """A paragraph, then what a chart set in a subset font without a Unicode map yields: its
    labels in Times, whose codes on the page run !, ", # as first used, and a large one."""
    pdf = _new()
    _para(pdf, LOREM)
    pdf.set_font("Times", "", 8)
    pdf.cell(0, 5, '!"# $!"# %!"# &!"#', new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Times", "", 20)
    pdf.cell(0, 10, '#"', new_x="LMARGIN", new_y="NEXT")
    _para(pdf, "The survey ends with the delta.")
    path = folder / "junk_labels.pdf"
    pdf.output(str(path))
    return path


def logo_pages(folder: Path, pages: int = 3) -> Path:
    """A logo in the corner of every page, a paragraph under it, and a photo on page 2."""
    pdf = _new()
    logo = str(photo(folder, (64, 64)))
    for number in range(1, pages + 1):
        if number > 1:
            pdf.add_page()
        pdf.image(logo, x=180, y=8, w=15)
        _para(pdf, f"Page {number} of the survey. " + LOREM)
        if number == 2:
            pdf.image(str(photo(folder)), x=20, y=pdf.get_y(), w=60)
    path = folder / "logo_pages.pdf"
    pdf.output(str(path))
    return path


def deck_with_a_figure(folder: Path, shown: Sequence[int], pages: int = 10) -> Path:
    """A logo in the corner of every page and a big figure (half the page wide) on the pages
    ``shown``, as a slide deck shows its pipeline diagram again where it speaks of it."""
    pdf = _new()
    logo = str(photo(folder, (64, 64)))
    figure = str(photo(folder))
    for number in range(1, pages + 1):
        if number > 1:
            pdf.add_page()
        pdf.image(logo, x=180, y=8, w=15)
        _para(pdf, f"Slide {number} of the survey. " + LOREM)
        if number in shown:
            pdf.image(figure, x=20, y=pdf.get_y(), w=120)
    path = folder / f"deck_{len(shown)}_of_{pages}.pdf"
    pdf.output(str(path))
    return path


def plot_on_grid(folder: Path) -> Path:
    """Page 1: a plot of two series over ruled gridlines, a legend in one cell. Page 2: a form's
    ruled grid, its head row filled and its rows empty."""
    pdf = _new()
    _para(pdf, "Water levels at the two gauges.")
    x, y = 30.0, pdf.get_y() + 5
    pdf.set_line_width(0.2)
    for k in range(6):
        pdf.line(x, y + 12 * k, x + 150, y + 12 * k)
    for k in range(6):
        pdf.line(x + 30 * k, y, x + 30 * k, y + 60)
    for series in ((50, 30, 42, 12, 20), (55, 48, 35, 40, 22)):
        pdf.polyline([(x + 15 + 30 * k, y + v) for k, v in enumerate(series)])
    pdf.set_font("Helvetica", "", 7)
    pdf.text(x + 122, y + 7, "upper gauge")
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    with pdf.table() as table:
        for values in (("Station", "Depth", "Signed"), *(("", "", "") for _ in range(6))):
            row = table.row()
            for value in values:
                row.cell(value)
    path = folder / "plot_on_grid.pdf"
    pdf.output(str(path))
    return path


def courier_table(folder: Path) -> Path:
    """A table without rules, its head in Helvetica and its rows in Courier."""
    pdf = _new()
    _para(pdf, "Gauges by station.")
    rows = [("Station", "Depth", "Kind")] + [(f"G{k}", f"{k * 1.5:.1f}", "river") for k in range(5)]
    for r, row in enumerate(rows):
        pdf.set_font("Helvetica" if r == 0 else "Courier", "B" if r == 0 else "", 10)
        y = pdf.get_y()
        for c, cell in enumerate(row):
            pdf.set_xy(20 + 40 * c, y)
            pdf.cell(30, 5, cell)
        pdf.ln(6)
    path = folder / "courier_table.pdf"
    pdf.output(str(path))
    return path
