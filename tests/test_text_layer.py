"""The text-layer converter: layouts per page, and chunking that cannot show (rule 5)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from pagefleet.layout import render_document
from pagefleet.layout.schema import Line, Page
from pagefleet.settings import Settings
from runner.converters.text_layer import (
    NAME,
    OcrMode,
    TextLayerConverter,
    convert_document,
    extract_pages,
)
from tests import layout_pdfs


def _chunked(pdf: Path, folder: Path, size: int, ocr: OcrMode = "auto") -> list[Page]:
    pages: list[Page] = []
    for chunk, first in layout_pdfs.split(pdf, folder, size):
        pages.extend(extract_pages(chunk, first, ocr=ocr))
    return pages


def test_pages_are_numbered_in_the_whole_document(tmp_path: Path) -> None:
    pdf = layout_pdfs.long_report(tmp_path, pages=4)
    pages = extract_pages(pdf, 17)
    assert [p["number"] for p in pages] == [17, 18, 19, 20]
    assert not any(p["ocr"] for p in pages)
    # Layouts travel through S3 as JSON.
    assert json.loads(json.dumps(pages)) == pages


def test_layout_keeps_font_size_and_weight(tmp_path: Path) -> None:
    page = extract_pages(layout_pdfs.structured(tmp_path), 1)[0]
    first, second = page["blocks"][:2]
    assert "lines" in first and "lines" in second
    title = first["lines"][0]["spans"][0]
    assert title["t"] == "Field Guide to Rivers"
    assert title["s"] == pytest.approx(20, abs=0.5)
    assert title["b"] is True
    body = second["lines"][0]["spans"][0]
    assert body["s"] == pytest.approx(10, abs=0.5)
    assert "b" not in body


def test_only_the_visible_page_is_read(tmp_path: Path) -> None:
    pdf = layout_pdfs.ruler_outside_crop_box(tmp_path)
    md = convert_document(pdf)
    paragraph = (layout_pdfs.LOREM * 3).strip()
    # The ruler's numbers no longer interleave with the text...
    assert paragraph in md
    assert "001" not in md and "002" not in md
    # ...and neither the slug line outside the crop box nor invisible text is read.
    assert "SLUGLINE" not in md
    assert "HIDDENWORDS" not in md
    # The page keeps its visible size: the crop box, not the media box.
    page = extract_pages(pdf, 1)[0]
    assert page["width"] == pytest.approx(595 - 34, abs=1)


@pytest.mark.parametrize("size", [1, 2, 3])
def test_chunks_give_the_same_pages_and_markdown(tmp_path: Path, size: int) -> None:
    pdf = layout_pdfs.long_report(tmp_path, pages=5)
    whole = extract_pages(pdf, 1)
    chunked = _chunked(pdf, tmp_path, size)
    assert chunked == whole
    assert render_document(chunked) == convert_document(pdf)


def test_converter_reports_layouts(tmp_path: Path) -> None:
    pdf = layout_pdfs.long_report(tmp_path, pages=3)
    converter = TextLayerConverter(Settings(ocr="off"))
    assert converter.name == NAME
    pages = converter.convert(pdf, 5, tmp_path / "assets")
    assert [p.number for p in pages] == [5, 6, 7]
    assert [p.layout for p in pages] == extract_pages(pdf, 5, ocr="off")
    assert not any(p.ocr for p in pages)


def _linked_and_turned(folder: Path) -> Path:
    """A page whose lines hold an external link, a link to another page and a link to a place
    on it, each over part of a line; a page turned 90 degrees; a page of text at an angle."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_font("Helvetica", "", 11)
    pdf.add_page()
    back = pdf.add_link()
    pdf.set_link(back, y=40)
    pdf.set_xy(20, 30)
    pdf.write(6, "See the ")
    pdf.write(6, "gauge records", link="https://example.org/gauges")
    pdf.write(6, " and the ")
    pdf.write(6, "appendix", link=back)
    pdf.write(6, " for the flows of every station along the river. ")
    pdf.write(6, layout_pdfs.LOREM)
    pdf.add_page()
    pdf.set_xy(20, 30)
    pdf.write(6, "Back to the ")
    pdf.write(6, "first page", link=1)
    pdf.write(6, " where it starts.")
    pdf.add_page(orientation="L")
    pdf.set_xy(20, 30)
    pdf.write(6, layout_pdfs.LOREM)
    with pdf.rotation(30, 100, 100):
        pdf.text(100, 100, "Turned words at an angle")
    path = folder / "linked.pdf"
    pdf.output(str(path))
    doc = pdfium.PdfDocument(str(path))
    doc[2].set_rotation(90)
    doc.save(str(path) + ".tmp")
    doc.close()
    Path(str(path) + ".tmp").replace(path)
    return path


def test_characters_are_read_as_pdftext_reads_them(tmp_path: Path) -> None:
    # read_chars asks a text object's font once, not per character, through prototypes of its
    # own, and _deduplicate rounds all words' boxes at once: the arrays, fonts and the words
    # dropped must be pdftext's, on every kind of page the tests make.
    from pdftext.pdf.chars import deduplicate_chars, get_chars

    from runner.converters.text_layer.chars import deduplicate as _deduplicate
    from runner.converters.text_layer.chars import read_chars

    pdfs = [
        layout_pdfs.structured(tmp_path),
        layout_pdfs.two_columns(tmp_path),
        layout_pdfs.ruled_table(tmp_path),
        layout_pdfs.slide(tmp_path),
        layout_pdfs.ruler_outside_crop_box(tmp_path),
        layout_pdfs.two_column_form(tmp_path),
        _linked_and_turned(tmp_path),
    ]
    checked = 0
    for path in pdfs:
        doc = pdfium.PdfDocument(str(path))
        for page in doc:
            textpage = page.get_textpage()
            bbox, rotation = page.get_bbox(), page.get_rotation()
            theirs = get_chars(textpage, bbox, rotation)
            ours, _ = read_chars(textpage, bbox, rotation)
            assert ours.text == theirs.text
            assert ours.fonts == theirs.fonts
            for name in ("codes", "rotations", "boxes", "font_ids", "char_indices"):
                assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
            kept, their_kept = _deduplicate(ours), deduplicate_chars(theirs)
            assert kept.text == their_kept.text
            assert np.array_equal(kept.char_indices, their_kept.char_indices)
            checked += len(ours)
            textpage.close()
            page.close()
        doc.close()
    assert checked > 4000


def test_links_cut_spans_as_pdftext_cuts_them(tmp_path: Path) -> None:
    # Links are merged on the open page with the characters of linked spans only; the spans
    # must come out as pdftext's merge_links (all characters, the page opened again) cuts them.
    from pdftext.pdf.chars import deduplicate_chars, get_chars
    from pdftext.pdf.links import merge_links
    from pdftext.pdf.pages import assign_scripts, get_lines, get_spans
    from pdftext.schema import PageReference

    from runner.converters.text_layer.links import merge_links as _merge_links

    path = _linked_and_turned(tmp_path)
    doc = pdfium.PdfDocument(str(path))
    cut = 0
    for index in range(2):
        page = doc[index]
        textpage = page.get_textpage()
        bbox = page.get_bbox()
        chars = deduplicate_chars(get_chars(textpage, bbox, 0))
        results = []
        for need_chars in (True, False):
            lines = get_lines(
                get_spans(chars, superscript_height_threshold=0.7, need_chars=need_chars)
            )
            assign_scripts(lines, height_threshold=0.7)
            if need_chars:
                merge_links({"page": index, "blocks": [{"lines": lines}]}, doc, PageReference())
            else:
                _merge_links(lines, chars, doc, page, index, bbox, 0)
            results.append(
                [[(s["text"], s["url"], s["char_start_idx"]) for s in ln["spans"]] for ln in lines]
            )
        assert results[0] == results[1]
        cut += sum(1 for ln in results[1] for s in ln if s[1])
        textpage.close()
        page.close()
    doc.close()
    assert cut >= 3
    md = convert_document(path)
    assert "[gauge records](https://example.org/gauges)" in md


SCORES = [
    ("Score", "Word pair", "Kind", "Count"),
    ("0.738", "goran klintmalm", "PERSON", "37"),
    ("0.696", "everyday miracles", "noun", "16"),
    ("0.639 particularly agitated", "", "verb", "21"),
    ("0.504", "detective tom", "PERSON", "111"),
    ("0.483", "commander robert", "PERSON", "67"),
    ("0.395", "forestry association ORGANIZATION 73", "", ""),
    ("0.374", "outer banks", "LOCATION", "60"),
    ("0.353", "stanford linear", "PERSON", "12"),
]


def _slide_table(folder: Path) -> Path:
    """A slide whose table has no rules; two of its rows were written as runs that cross
    column borders with one space between cells, and the slide's number stands level with
    the last row at the right edge."""
    from fpdf import FPDF

    pdf = FPDF(orientation="L", unit="pt", format=(600, 800))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 32)
    pdf.text(60, 70, "Word pairs found")
    pdf.set_font("Helvetica", "", 20)
    columns = (90, 220, 480, 650)
    for k, row in enumerate(SCORES):
        y = 150 + 30 * k
        for x, cell in zip(columns, row, strict=True):
            if cell:
                pdf.text(x, y, cell)
    pdf.set_font("Helvetica", "", 12)
    pdf.text(760, 150 + 30 * (len(SCORES) - 1), "26")
    path = folder / "slide_table.pdf"
    pdf.output(str(path))
    return path


def test_unruled_table_with_cells_run_together_and_a_page_number(tmp_path: Path) -> None:
    # nlp2004slides pages 17 and 26: a slide's table came out column by column (the score
    # column, then the words, ...): the slide number beside the last row made a column of its
    # own, and rows whose cells the text layer ran together merged all columns into one.
    md = convert_document(_slide_table(tmp_path))
    assert "| Score | Word pair | Kind | Count |" in md
    assert "| 0.738 | goran klintmalm | PERSON | 37 |" in md
    assert "| 0.639 particularly agitated |  | verb | 21 |" in md
    assert "| 0.395 | forestry association ORGANIZATION 73 |  |  |" in md
    assert "| 0.353 | stanford linear | PERSON | 12 |" in md
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert len(table) == len(SCORES) + 1  # the header's rule
    assert not any("26" in line for line in table)
    assert md.index("goran") < md.index("everyday") < md.index("stanford")


def _stamped_columns(folder: Path) -> Path:
    """Two columns of text beside each other, and a preprint stamp set upright along the left
    margin, tall enough to stand beside most lines of both columns."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    top = 40
    pdf.set_xy(25, top)
    pdf.multi_cell(80, 5, "LEFTSTART " + layout_pdfs.LOREM * 3 + "LEFTEND")
    pdf.set_xy(115, top)
    pdf.multi_cell(80, 5, "RIGHTSTART " + layout_pdfs.LOREM * 3 + "RIGHTEND")
    pdf.set_font("Helvetica", "", 20)
    with pdf.rotation(90, 15, 200):
        pdf.text(15, 200, "STAMP arXiv:2004.04906v3 [cs.CL] 30 Sep 2020")
    path = folder / "stamped_columns.pdf"
    pdf.output(str(path))
    return path


def test_an_upright_stamp_does_not_scramble_the_columns(tmp_path: Path) -> None:
    # dpr-multi-column page 1 and every page of federal-register: a line set upright along
    # the margin has a box as tall as the columns; it joined the lines beside it into rows,
    # so the two columns were read across, line by line, interleaved.
    md = convert_document(_stamped_columns(tmp_path))
    left = md.index("LEFTSTART")
    assert left < md.index("LEFTEND") < md.index("RIGHTSTART") < md.index("RIGHTEND")
    # Each column is one paragraph: no line of the other column inside it.
    left_column = md[left : md.index("LEFTEND")]
    assert "RIGHT" not in left_column
    # The stamp itself is page furniture, as a reader takes it.
    assert "STAMP" not in md


def test_an_upright_stamp_is_not_a_heading(tmp_path: Path) -> None:
    # dpr-multi-column page 1: the arXiv stamp along the margin, set twice the body's size,
    # came out as the page's `#` heading (now it is furniture, and the size it set the body
    # to is not taken for a heading's either).
    md = convert_document(_stamped_columns(tmp_path))
    assert not any(line.startswith("#") for line in md.splitlines())


GAUGES = [
    ("2005-09-21", "Aswan"),
    ("2005-09-23", "Cairo"),
    ("2005-09-25", "Rosetta"),
    ("2005-09-26", "Damietta"),
]


def _rows_between_rules(folder: Path) -> Path:
    """A table framed and split in two columns by rules, with one rule under its head only:
    the head's labels wrap onto two lines in both columns, and the body's four rows sit
    between the same two rules."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    x0, x1, x2 = 30.0, 80.0, 140.0
    top, head, step = 40.0, 52.0, 6.0
    bottom = head + step * len(GAUGES) + 2
    pdf.set_line_width(0.3)
    pdf.rect(x0, top, x2 - x0, bottom - top)
    pdf.line(x1, top, x1, bottom)
    pdf.line(x0, head, x2, head)
    for k, label in enumerate(("Gauging", "date")):
        pdf.text(x0 + 2, top + 5 + 5 * k, label)
    for k, label in enumerate(("Station", "name")):
        pdf.text(x1 + 2, top + 5 + 5 * k, label)
    for k, (day, station) in enumerate(GAUGES):
        y = head + 5 + step * k
        pdf.text(x0 + 2, y, day)
        pdf.text(x1 + 2, y, station)
    path = folder / "rows_between_rules.pdf"
    pdf.output(str(path))
    return path


def test_rows_of_text_between_two_rules_are_rows(tmp_path: Path) -> None:
    # naacl06 pages 7 and 8: a table ruled around and under its head only came out as one
    # body row ("2005-09-21 2005-09-23 ... | Rita Texas Rita New Orleans ..."): each column
    # read down before the next.
    md = convert_document(_rows_between_rules(tmp_path))
    table = [line for line in md.splitlines() if line.startswith("|")]
    assert table == [
        "| Gauging date | Station name |",
        "| --- | --- |",
        *(f"| {day} | {station} |" for day, station in GAUGES),
    ]


def _two_column_index(folder: Path) -> Path:
    """A book's index in two columns set on the same leading, so entries on the left level
    with entries on the right; each column has gaps between its letter groups, at other
    heights in the other column."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    pdf.text(150, 20, "Index")
    for x, prefix, gaps in ((30, "Left", (6, 13, 21)), (115, "Right", (4, 10, 17, 25))):
        y = 35.0
        for k in range(30):
            if k in gaps:
                y += 5
            indent = 6 if k % 5 == 4 else 0
            pdf.text(x + indent, y, f"{prefix}entry{k:02d}, {k + 3}")
            y += 5
    path = folder / "two_column_index.pdf"
    pdf.output(str(path))
    return path


def test_a_two_column_index_is_not_a_table(tmp_path: Path) -> None:
    # GeoTopo pages 115-117: the index's two columns, entries levelled, came out as small
    # two-column tables pairing unrelated entries, read across.
    md = convert_document(_two_column_index(tmp_path))
    assert "|" not in md
    positions = [md.index(f"Leftentry{k:02d}") for k in range(30)]
    positions += [md.index(f"Rightentry{k:02d}") for k in range(30)]
    assert positions == sorted(positions)


def test_a_line_cut_at_a_combining_mark_is_joined_again() -> None:
    # thai-math-exam: pdfium breaks the line before a vowel or tone mark set above its
    # consonant, and the mark's box overlaps the letter before it, so the pieces of one line
    # ("และต" / "ั้" / "งฉาก...") stayed apart and words came out split over paragraphs. No
    # font fpdf2 can embed here sets Thai, and pdfium joins Latin marks itself: these are the
    # page's own lines.
    from pagefleet.layout.lines import line_text
    from pagefleet.layout.segment import page_blocks

    def line(box: list[float], text: str) -> Line:
        return {"bbox": box, "spans": [{"t": text, "s": 13.4, "b": True}]}

    blocks = page_blocks(
        [
            line([164.0, 60.0, 263.0, 78.0], "ในข้อดังกล่าว และต"),
            line([259.0, 62.0, 266.0, 78.0], "ั้"),
            line([262.0, 62.0, 364.0, 78.0], "งฉากกับระนาบที่ผ่าน ij"),
        ]
    )
    assert len(blocks) == 1 and "lines" in blocks[0]
    assert [line_text(ln) for ln in blocks[0]["lines"]] == ["ในข้อดังกล่าว และตั้งฉากกับระนาบที่ผ่าน ij"]


def test_captions_a_few_points_from_the_text_column_are_a_column(tmp_path: Path) -> None:
    # vicksburg-scan-ocr page 3: captions beside an illustration end 4-5 pt from where the
    # body text's column starts, too close for a gutter between lines of one size; the page
    # was read row by row, each caption line between two lines of the body. The opening line,
    # cut in two at the same place, stays one line.
    md = convert_document(layout_pdfs.captions_beside_text(tmp_path))
    paragraphs = md.strip().split("\n\n")
    opening = next(p for p in paragraphs if "OPENSTART" in p)
    assert opening.endswith("OPENEND") and "\n" not in opening
    caption = next(p for p in paragraphs if "CAPSTART" in p)
    assert caption.endswith("CAPEND")
    body = next(p for p in paragraphs if "BODYSTART" in p)
    assert body.endswith("BODYEND") and "CAP" not in body and "tin cylinder" not in body
    assert md.index("OPENEND") < md.index("CAPSTART") < md.index("BODYSTART")


def test_a_table_of_paragraphs_reads_row_by_row(tmp_path: Path) -> None:
    # dpr-multi-column page 13: a table without rules whose cells are paragraphs (a question,
    # the passage each retriever found) was read column by column, every question before
    # any passage.
    md = convert_document(layout_pdfs.paragraph_cells(tmp_path))
    order = ["Question", "keywords", "meaning", "HEADONE", "KEYONE", "MEANONE"]
    order += ["HEADTWO", "KEYTWO", "MEANTWO", "AFTERTABLE"]
    places = [md.index(word) for word in order]
    assert places == sorted(places)


def test_a_footnote_opening_with_a_superscript_is_one_paragraph(tmp_path: Path) -> None:
    # federal-register: a footnote's number, a superscript in the note's font scaled by the
    # text matrix, gave the whole first line its size (5 pt among 7 pt lines), so every
    # footnote was cut after its first line.
    pdf = layout_pdfs.footnote_superscript(tmp_path)
    first = extract_pages(pdf, 1)[0]["blocks"][-1]
    assert "lines" in first
    assert [span["s"] for line in first["lines"] for span in line["spans"]] == [7.0] * 3
    note = next(p for p in convert_document(pdf).split("\n\n") if "Preliminary" in p)
    assert note.startswith("1Preliminary report") and note.rstrip().endswith("NOTEEND")


def test_symbols_beside_their_meanings_read_row_by_row(tmp_path: Path) -> None:
    # GeoTopo's list of symbols: a symbol's line is taller than its meaning's and ends 4 pt
    # before it. A narrow gap between lines of different heights is a gutter only where the
    # two sides' lines also follow at different distances (captions beside body text); here
    # they pair up row by row, and each symbol stays with its meaning.
    md = convert_document(layout_pdfs.symbol_list(tmp_path))
    order = [word for symbol, meaning in layout_pdfs.SYMBOLS for word in (symbol, meaning)]
    places = [md.index(word) for word in order]
    assert places == sorted(places)
