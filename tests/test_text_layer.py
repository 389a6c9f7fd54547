"""The text-layer converter: layouts per page, and chunking that cannot show (rule 5)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pagefleet.layout import render_document
from pagefleet.layout.schema import Page
from pagefleet.settings import Settings
from runner.converters.text_layer import (
    NAME,
    OcrMode,
    TextLayerConverter,
    convert_document,
    extract_pages,
)
from tests import layout_pdfs

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"


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


def _corpus() -> list[Path]:
    return sorted(CORPUS.glob("*.pdf")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus folder {CORPUS} is absent")
@pytest.mark.parametrize("pdf", _corpus(), ids=lambda p: p.stem)
def test_corpus_chunks_are_invisible(tmp_path: Path, pdf: Path) -> None:
    # OCR is slow on two cores; tests/test_ocr.py checks that OCRed pages chunk alike.
    whole = extract_pages(pdf, 1, ocr="off")
    chunked = _chunked(pdf, tmp_path, 16, ocr="off")
    assert chunked == whole
    # CPU time, not wall time: other test runs share this machine's two cores.
    started = time.process_time()
    markdown = render_document(chunked)
    assert time.process_time() - started < 0.5
    assert markdown == render_document(whole)
