"""Listings and glyphs without meaning in the text-layer converter: code fenced with its
indents, junk left out."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from pagefleet.layout.segment import BULLETS
from runner.converters.text_layer import convert_document
from tests import layout_pdfs
from tests.conftest import corpus_dir


def test_a_code_listing_is_fenced_with_its_line_breaks_and_indents(tmp_path: Path) -> None:
    markdown = convert_document(layout_pdfs.code_listing(tmp_path))
    assert "ones:\n\n```\n" + "\n".join(layout_pdfs.LISTING) + "\n```\n\nEach call" in markdown
    # Code named in a sentence, on a line of its own, stays in its paragraph.
    assert markdown.count("```") == 2
    named = "flow\\_of\\_the\\_river\\_at\\_the\\_gauge(depth, width)"
    assert f"it is given, and the {named} helper names" in markdown


def test_glyphs_that_decode_to_junk_are_neither_text_nor_headings(tmp_path: Path) -> None:
    markdown = convert_document(layout_pdfs.junk_labels(tmp_path))
    assert markdown == layout_pdfs.LOREM.strip() + "\n\nThe survey ends with the delta.\n"


def test_symbol_glyphs_without_unicode_are_left_out_of_a_real_document() -> None:
    # A Symbol font without a Unicode map yields private-use code points; bullets among them
    # still mark list items.
    markdown = convert_document(corpus_dir("real") / "pdfjs__thai-math-exam.pdf", ocr="off")
    private = {c for c in markdown if unicodedata.category(c) in ("Co", "Cc") and c != "\n"}
    assert private <= set(BULLETS)
