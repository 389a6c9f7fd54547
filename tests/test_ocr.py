"""OCR of pages without a text layer: known words back, chunking invisible, size capped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pagefleet.layout import render_document
from runner.converters.ocr import render_scale
from runner.converters.text_layer import extract_pages
from tests import layout_pdfs

TEXTS = ["Sediment settles slowly", "Gauging station eleven"]
BAD = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "bad"


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return layout_pdfs.scanned(tmp_path_factory.mktemp("scan"), TEXTS)


@pytest.fixture(scope="module")
def ocr_pages(scan: Path) -> list[dict]:
    return extract_pages(scan, 1)


def test_image_page_is_ocred_in_auto_mode(ocr_pages: list[dict]) -> None:
    assert [p["ocr"] for p in ocr_pages] == [True, True]
    # Layouts travel through S3 as JSON: plain numbers only.
    assert json.loads(json.dumps(ocr_pages)) == ocr_pages
    md = render_document(ocr_pages)
    for text in TEXTS:
        assert text in md


def test_ocr_off_leaves_scans_empty(scan: Path) -> None:
    pages = extract_pages(scan, 1, ocr="off")
    assert [p["ocr"] for p in pages] == [False, False]
    assert render_document(pages) == ""


def test_ocred_pages_chunk_alike(tmp_path: Path, scan: Path, ocr_pages: list[dict]) -> None:
    chunked = [
        page
        for chunk, first in layout_pdfs.split(scan, tmp_path, 1)
        for page in extract_pages(chunk, first)
    ]
    assert chunked == ocr_pages


def test_force_ocrs_text_pages(tmp_path: Path) -> None:
    pages = extract_pages(layout_pdfs.ruled_table(tmp_path), 1, ocr="force")
    assert pages[0]["ocr"] is True
    assert "Rivers by length" in render_document(pages)


def test_bitmap_size_is_capped() -> None:
    assert render_scale(595, 842) == pytest.approx(200 / 72)
    assert 595 * render_scale(595, 2**31) < 1
    assert 2**31 * render_scale(595, 2**31) <= 2400


@pytest.mark.skipif(not BAD.is_dir(), reason=f"corpus folder {BAD} is absent")
def test_giant_page_ocr_is_cheap() -> None:
    pages = extract_pages(BAD / "overflow-objnum-giant-mediabox.pdf", 1, ocr="force")
    assert pages[0]["ocr"] is True
    assert pages[0]["height"] == 2**31
