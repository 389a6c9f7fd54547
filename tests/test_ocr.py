"""OCR of pages without a text layer: known words back, chunking invisible, size capped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psutil
import pytest

from pagefleet.layout import render_document
from runner.converters import ocr
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


class _Libc:
    def __init__(self) -> None:
        self.trims: list[int] = []

    def malloc_trim(self, pad: int) -> None:
        self.trims.append(pad)


def test_the_heap_goes_back_only_past_what_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # Handing it back after every page made the next page fault it all in again (8-10% more
    # CPU a page); a dense page's 1.3 GB must still go back.
    libc = _Libc()
    monkeypatch.setattr(ocr, "_libc", lambda: libc)
    trimmed = []
    for resident_mb in (300, 1024, 1300):
        monkeypatch.setattr(ocr, "_resident_mb", lambda mb=resident_mb: mb)
        ocr._trim(keep_mb=1024)
        trimmed.append(len(libc.trims))
    assert trimmed == [0, 0, 1]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc on this system")
def test_resident_size_is_what_psutil_reads() -> None:
    before = psutil.Process().memory_info().rss >> 20
    measured = ocr._resident_mb()
    after = psutil.Process().memory_info().rss >> 20
    assert min(before, after) - 1 <= measured <= max(before, after) + 1


def test_without_proc_the_heap_goes_back_after_every_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_proc(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("/proc/self/statm")

    libc = _Libc()
    monkeypatch.setattr(ocr, "_libc", lambda: libc)
    monkeypatch.setattr("builtins.open", no_proc)
    ocr._trim(keep_mb=1024)
    assert libc.trims == [0]
