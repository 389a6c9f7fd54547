"""Markdown from layouts: the structural rules, on PDFs the tests make themselves."""

from __future__ import annotations

from pathlib import Path

from pagefleet.keys import ASSET_LINK_PREFIX
from pagefleet.layout import render_document
from pagefleet.layout.outline import read_outline
from pagefleet.layout.schema import ImageBlock, Line, Page, TextBlock
from runner.converters.text_layer import convert_document, extract_pages
from tests import layout_pdfs


def test_headings_ranked_by_font_size(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.structured(tmp_path))
    lines = md.splitlines()
    assert "# Field Guide to Rivers" in lines
    assert "## Sediment Transport" in lines
    assert "## Deltas" in lines


def test_lists(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.structured(tmp_path))
    assert "- gravel rolls along the bed\n- sand hops in short jumps\n- silt floats\n" in md
    assert "1. measure the depth\n2. sample the water\n3. weigh the residue\n" in md


def test_hyphen_at_line_break_is_repaired(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.structured(tmp_path))
    assert "carefully documented in the field notebook" in md
    assert "docu-" not in md


def test_repeated_header_and_page_numbers_removed(tmp_path: Path) -> None:
    pdf = layout_pdfs.long_report(tmp_path, pages=4)
    pages = extract_pages(pdf, 1)
    raw = " ".join(
        span["t"]
        for p in pages
        for b in p["blocks"]
        if "lines" in b
        for ln in b["lines"]
        for span in ln["spans"]
    )
    assert raw.count("Annual River Survey 2026") == 4  # in the layouts...
    md = render_document(pages)
    assert "Annual River Survey 2026" not in md  # ...but not in the Markdown
    assert "Page 2" not in md
    assert "# Annual River Survey" in md.splitlines()


def test_paragraph_runs_across_page_breaks(tmp_path: Path) -> None:
    pdf = layout_pdfs.long_report(tmp_path, pages=4)
    md = convert_document(pdf)
    paragraph = (layout_pdfs.LOREM * 6).strip()
    sections = md.count("## Section ")
    assert sections >= 3
    # Every section's paragraph comes out whole, including those fpdf broke across pages.
    assert md.count(paragraph) == sections


def test_empty_document_renders_empty() -> None:
    assert render_document([]) == ""
    assert (
        render_document([{"number": 1, "ocr": False, "width": 1, "height": 1, "blocks": []}]) == ""
    )


def test_two_columns_read_column_by_column(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.two_columns(tmp_path))
    left = ("LEFTSTART " + layout_pdfs.LOREM * 2 + "LEFTEND").replace("  ", " ")
    assert "# Two Column Notes" in md.splitlines()
    # The left column comes whole, before the right one, although their lines share rows.
    assert left in md
    assert md.index("LEFTEND") < md.index("RIGHTSTART")


def test_ruled_table(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.ruled_table(tmp_path))
    rows = ["| " + " | ".join(row) + " |" for row in layout_pdfs.TABLE]
    table = "\n".join([rows[0], "| --- | --- | --- |", *rows[1:]])
    assert f"Rivers by length, from the survey.\n\n{table}\n\nThe table ends here.\n" in md


def test_unruled_table(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.unruled_table(tmp_path))
    rows = ["| " + " | ".join(row) + " |" for row in layout_pdfs.UNRULED]
    table = "\n".join([rows[0], "| --- | --- | --- | --- |", *rows[1:]])
    assert (
        f"Gauging results for the lower Nile, from the survey.\n\n{table}\n\nThe table ends here.\n"
    ) in md


def test_two_columns_of_running_text_are_no_table(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.two_columns(tmp_path))
    assert "|" not in md


def test_two_column_form_keeps_each_column_together(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.two_column_form(tmp_path))
    lines = md.splitlines()
    labels = layout_pdfs.FORM_LEFT + layout_pdfs.FORM_RIGHT
    # Each label is a line of its own: the label beside it is not merged into it...
    found = [next(ln for ln in lines if label in ln) for label in labels]
    assert all(sum(label in ln for label in labels) == 1 for ln in found)
    # ...the left column is read before the right one, and the right column's items are
    # not nested under the left column's last one.
    assert [lines.index(ln) for ln in found] == sorted(lines.index(ln) for ln in found)
    assert all(not ln.startswith(" ") for ln in found)


def test_outline_confirms_headings(tmp_path: Path) -> None:
    pdf = layout_pdfs.with_outline(tmp_path)
    outline = read_outline(pdf)
    assert [(e["title"], e["level"]) for e in outline[:2]] == [
        ("Sources", 1),
        ("Sources Gauging", 2),
    ]
    pages = extract_pages(pdf, 1)
    # In plain body type these are not headings by style...
    assert "# Sources" not in render_document(pages)
    md = render_document(pages, outline).splitlines()
    # ...but the outline says they are, and at which depth.
    for heading in ("# Sources", "## Sources Gauging", "## Sources Sampling", "# Mouths"):
        assert heading in md


def test_outline_destinations_pick_the_heading_and_keep_its_words(tmp_path: Path) -> None:
    pdf = layout_pdfs.outline_destinations(tmp_path)
    outline = read_outline(pdf)
    assert [(e["title"], e["level"], e["page"]) for e in outline] == [
        ("3-1 Gauging Stations", 1, 1),
        ("Sampling", 2, 1),
        ("II The Deltas", 1, 2),
    ]
    pages = extract_pages(pdf, 1)
    # Each destination's height is where its heading line starts (within a line).
    for entry, text in zip(outline, ["Exhibit 3-1", "3.1.1 Sampling", "Part II"], strict=True):
        page = pages[entry["page"] - 1]
        line = next(
            ln
            for b in page["blocks"]
            if "lines" in b
            for ln in b["lines"]
            if ln["spans"][0]["t"].startswith(text)
        )
        assert abs(entry["top"] - line["bbox"][1]) < 12
    md = render_document(pages, outline).splitlines()
    # The block at the destination, in its own words: the number and date stay.
    assert "# Exhibit 3-1 (07-01-2019) Gauging Stations" in md
    assert "## 3.1.1 Sampling" in md
    # The caption with the same words, higher on the page, stays a paragraph.
    assert "Gauging Stations" in md
    # A title set on two lines in two styles is one heading.
    assert "# Part II The Deltas" in md


def test_ocr_lines_are_never_headings_by_size() -> None:
    def block(y: float, text: str, size: float) -> TextBlock:
        bbox = [72, y, 400, y + size]
        return {"bbox": bbox, "lines": [{"bbox": bbox, "spans": [{"t": text, "s": size}]}]}

    body = [block(200 + 20 * i, "text read from a scanned page by the OCR", 10) for i in range(8)]
    page: Page = {
        "number": 1,
        "ocr": True,
        "width": 612,
        "height": 792,
        "blocks": [block(100, "A tall line the detector boxed", 24), *body],
    }
    assert "#" not in render_document([page])
    # The same page from a text layer: the size says heading.
    assert "# A tall line the detector boxed" in render_document([{**page, "ocr": False}])


def test_slide_bullets_wrap_and_plot_labels_stay_together(tmp_path: Path) -> None:
    md = convert_document(layout_pdfs.slide(tmp_path))
    first, second = layout_pdfs.SLIDE_BULLETS
    lines = md.splitlines()
    # A wrapped bullet is one list item, its glyph set larger and lighter than its text.
    assert f"- **{first}**" in lines
    assert f"    - **{second}**" in lines
    # The plot's tick labels, axis titles and legend: one block of figure text, after the
    # bullets above it, never headings.
    figure = "40 30 20 10 0 1990 2000 2010 2020 Tonnes Year NILE AMAZON"
    assert figure in lines
    assert lines.index(figure) > lines.index(f"    - **{second}**")
    assert [ln for ln in lines if ln.startswith("#")] == ["# Sediment Budget"]


def test_chinese_lines_join_without_a_space() -> None:
    def line(text: str, y: float) -> Line:
        return {"bbox": [50, y, 300, y + 10], "spans": [{"t": text, "s": 10}]}

    lines = [line("本期计入营", 100), line("业外收入的金额 and", 112), line("then English", 124)]
    page: Page = {
        "number": 1,
        "ocr": False,
        "width": 600,
        "height": 800,
        "blocks": [{"bbox": [50, 100, 300, 134], "lines": lines}],
    }
    assert render_document([page]) == "本期计入营业外收入的金额 and then English\n"


def test_footnote_kept_apart_from_paragraph() -> None:
    def line(text: str, y: float, size: float, x: float = 50) -> Line:
        return {"bbox": [x, y, x + 400, y + size], "spans": [{"t": text, "s": size}]}

    def block(*lines: Line) -> TextBlock:
        x0 = min(ln["bbox"][0] for ln in lines)
        return {"bbox": [x0, lines[0]["bbox"][1], 500, lines[-1]["bbox"][3]], "lines": list(lines)}

    body = [f"Body line number {i} of the running text with some words" for i in range(30)]
    page1: Page = {
        "number": 1, "ocr": False, "width": 600, "height": 800,
        "blocks": [
            block(*(line(text, 60 + 12 * i, 10) for i, text in enumerate(body[:-1])),
                  line("and this sentence goes on", 60 + 12 * 29, 10)),
            block(line("1 A footnote in small print.", 740, 7)),
        ],
    }  # fmt: skip
    page2: Page = {
        "number": 2, "ocr": False, "width": 600, "height": 800,
        "blocks": [block(line("on the next page until here.", 60, 10),
                         line("Then more text follows here.", 72, 10))],
    }  # fmt: skip
    md = render_document([page1, page2])
    paragraph, note = md.strip().split("\n\n")
    assert paragraph.endswith("and this sentence goes on on the next page until here. "
                              "Then more text follows here.")  # fmt: skip
    assert note == "1 A footnote in small print."


def test_a_bullet_set_large_is_a_list_item_not_a_heading() -> None:
    def block(y: float, text: str, size: float) -> TextBlock:
        bbox = [72, y, 400, y + size]
        return {"bbox": bbox, "lines": [{"bbox": bbox, "spans": [{"t": text, "s": size}]}]}

    body = [
        block(200 + 20 * i, "plain body text of the slide deck goes here", 12) for i in range(8)
    ]
    page: Page = {
        "number": 1,
        "ocr": False,
        "width": 612,
        "height": 792,
        "blocks": [block(100, "Slide title", 28), block(150, "• A large bullet point", 24), *body],
    }
    lines = render_document([page]).splitlines()
    assert "# Slide title" in lines
    assert "- A large bullet point" in lines


def _text(y: float, text: str, x: float = 72, size: float = 10) -> TextBlock:
    bbox = [x, y, x + 5 * len(text), y + size]
    return {"bbox": bbox, "lines": [{"bbox": bbox, "spans": [{"t": text, "s": size}]}]}


def test_a_picture_waits_for_the_paragraph_it_interrupts() -> None:
    # A picture at the top of a page, before the rest of a sentence the page before left open.
    words = "the gauges were read at dawn and again at dusk every"
    lines = [_text(600 + 12 * i, words)["lines"][0] for i in range(3)]
    page1: Page = {
        "number": 1,
        "ocr": False,
        "width": 612,
        "height": 792,
        "blocks": [{"bbox": [72, 600, 400, 636], "lines": lines}],
    }
    picture: ImageBlock = {"bbox": [72, 60, 400, 200], "image": "page-00002-image-1.png"}
    page2: Page = {
        "number": 2,
        "ocr": False,
        "width": 612,
        "height": 792,
        "blocks": [picture, _text(220, "day of the flood."), _text(240, "Next.")],
    }
    paragraph, image, after = render_document([page1, page2]).strip().split("\n\n")
    assert paragraph == " ".join([words] * 3) + " day of the flood."
    assert image == f"![]({ASSET_LINK_PREFIX}page-00002-image-1.png)"
    assert after == "Next."


def test_a_listing_is_fenced_longer_than_the_backticks_it_holds() -> None:
    # Characters 6 points wide: the second line starts 5 of them in.
    code: TextBlock = {
        "bbox": [72, 100, 156, 122],
        "lines": [
            {"bbox": [72, 100, 132, 110], "spans": [{"t": 'md = "```"', "s": 10, "m": True}]},
            {"bbox": [102, 112, 156, 122], "spans": [{"t": "print(md)", "s": 10, "m": True}]},
        ],
        "code": True,
    }
    page: Page = {"number": 1, "ocr": False, "width": 612, "height": 792, "blocks": [code]}
    assert render_document([page]) == '````\nmd = "```"\n     print(md)\n````\n'
