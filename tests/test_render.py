"""Markdown from layouts: the structural rules, on PDFs the tests make themselves."""

from __future__ import annotations

from pathlib import Path

from pagefleet.layout import render_document
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
        span["t"] for p in pages for b in p["blocks"] for ln in b["lines"] for span in ln["spans"]
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
