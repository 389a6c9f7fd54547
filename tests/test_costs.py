"""The splitter's page costs: scans told from text pages as the converter tells them, cheaply,
and a mixed document planned by cost."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from fpdf import FPDF

from pagefleet.costs import PageCosts, lanes, measure_pages, plan_policy
from pagefleet.planning import plan_by_cost
from pagefleet.settings import Settings
from runner.converters.text_layer import extract_pages
from tests import facts_pdfs_ocr

# T: a page of text, S: an image-only scan.
LAYOUT = "TTTTTTSTTTTTTSST"


def mixed_pdf(folder: Path, layout: str = LAYOUT) -> Path:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1200, 400), "white")
    ImageDraw.Draw(image).text(
        (60, 150), "Gauging station eleven", fill="black", font=ImageFont.load_default(size=36)
    )
    image_path = folder / "scan.png"
    image.save(image_path)
    pdf = FPDF(unit="pt", format=(420, 300))
    pdf.set_font("Helvetica", size=11)
    for number, kind in enumerate(layout, 1):
        pdf.add_page()
        if kind == "S":
            pdf.image(str(image_path), x=0, y=0, w=420, h=140)
        else:
            for line in range(12):
                pdf.text(30, 40 + 18 * line, f"Page {number}, line {line}: the river rose at dawn.")
    path = folder / "mixed.pdf"
    pdf.output(str(path))
    return path


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mixed_pdf(tmp_path_factory.mktemp("mixed"))


def _costs(path: Path, settings: Settings) -> PageCosts:
    doc = pdfium.PdfDocument(str(path))
    try:
        return measure_pages(doc, settings)
    finally:
        doc.close()


def _measure(path: Path, settings: Settings) -> list[float]:
    return _costs(path, settings).seconds


def test_scans_are_told_apart_as_the_converter_tells_them(mixed: Path) -> None:
    settings = Settings(workers=2)
    costs = _costs(mixed, settings)
    scans = [i + 1 for i, kind in enumerate(LAYOUT) if kind == "S"]
    assert costs.ocr_pages == scans
    assert [s == settings.cost_ocr_page_s for s in costs.seconds] == [k == "S" for k in LAYOUT]
    assert [p["number"] for p in extract_pages(mixed, 1) if p["ocr"]] == scans


@pytest.mark.parametrize("layer", ["bad", "good"])
def test_a_hidden_ocr_layer_is_priced_as_the_converter_reads_it(tmp_path: Path, layer: str) -> None:
    """A scan under an invisible OCR layer of junk is OCR'd by the converter, so the splitter
    prices it as OCR (else its chunk holds many such pages and outlasts the rest); a good
    layer is kept, and priced as text."""
    lines = facts_pdfs_ocr.BAD_LAYER if layer == "bad" else facts_pdfs_ocr.SCAN_LINES
    image = facts_pdfs_ocr._image(tmp_path, facts_pdfs_ocr.SCAN_LINES, 0.3, "scan.png")
    pdf = facts_pdfs_ocr._scan(tmp_path, image, "layer.pdf", lines)
    settings = Settings(workers=2)
    costs = _costs(pdf, settings)
    ocr = [p["number"] for p in extract_pages(pdf, 1, ocr_threads=1) if p["ocr"]]
    assert costs.ocr_pages == ocr == ([1] if layer == "bad" else [])
    assert (costs.seconds == [settings.cost_ocr_page_s]) is (layer == "bad")


def test_a_mixed_document_is_cut_by_cost(mixed: Path) -> None:
    settings = Settings(workers=2)
    costs = _costs(mixed, settings)
    chunks = plan_by_cost(costs.seconds, plan_policy(settings, costs))
    # Each scan is a chunk of its own (a neighbour's text rides along only if it is cheap);
    # the text pages between them are not cut one chunk per page.
    holding = [
        [p for p in range(c.first_page, c.last_page + 1) if LAYOUT[p - 1] == "S"] for c in chunks
    ]
    assert sorted(len(h) for h in holding if h) == [1, 1, 1]
    assert len(chunks) == 3


def test_ocr_settings_and_converters_set_the_costs(mixed: Path) -> None:
    [text_page_s] = set(_measure(mixed, Settings(ocr="off")))  # a scan is a text page too
    assert text_page_s > Settings().cost_text_page_s  # its characters count
    assert set(_measure(mixed, Settings(ocr="force"))) == {Settings().cost_ocr_page_s}
    balanced = Settings(converter="marker", marker_mode="balanced")
    assert set(_measure(mixed, balanced)) == {balanced.cost_marker_page_s}
    fast = _measure(mixed, Settings(converter="marker", marker_mode="fast"))
    assert fast.count(Settings().cost_marker_ocr_page_s) == LAYOUT.count("S")


def text_pdf(folder: Path, name: str, pages: int, lines: int) -> Path:
    pdf = FPDF(unit="pt", format=(420, 600))
    pdf.set_font("Helvetica", size=9)
    for number in range(1, pages + 1):
        pdf.add_page()
        for line in range(lines):
            pdf.text(30, 30 + 11 * line, f"Page {number}, line {line}: the river rose at dawn.")
    path = folder / name
    pdf.output(str(path))
    return path


def _chars(path: Path) -> list[int]:
    doc = pdfium.PdfDocument(str(path))
    try:
        counts = []
        for page in doc:
            textpage = page.get_textpage()
            counts.append(textpage.count_chars())
            textpage.close()
            page.close()
        return counts
    finally:
        doc.close()


def test_a_text_page_costs_what_its_characters_say(tmp_path: Path) -> None:
    settings = Settings(workers=2)
    sparse = text_pdf(tmp_path, "sparse.pdf", pages=40, lines=5)
    dense = text_pdf(tmp_path, "dense.pdf", pages=200, lines=50)
    for path in (sparse, dense):
        costs = _costs(path, settings)
        counts = _chars(path)
        mean = sum(counts) / len(counts)
        assert costs.text_page_s == pytest.approx(
            settings.cost_text_page_s + settings.cost_text_char_s * mean, rel=0.02
        )  # a sample of the pages, and these pages are alike
        assert set(costs.seconds) == {costs.text_page_s}
    # Ten times the text a page: ten times the characters' part of its seconds, so the sparse
    # document fits one chunk and the dense one is spread over the lanes.
    base = settings.cost_text_page_s
    dense_part = _costs(dense, settings).text_page_s - base
    assert dense_part == pytest.approx(10 * (_costs(sparse, settings).text_page_s - base), rel=0.05)
    chunk_counts = []
    for path in (sparse, dense):
        costs = _costs(path, settings)
        chunk_counts.append(len(plan_by_cost(costs.seconds, plan_policy(settings, costs))))
    assert chunk_counts[0] == 1 and chunk_counts[1] >= 2


def test_lanes_follow_the_fleet_setting_then_the_workers() -> None:
    assert lanes(Settings(fleet_lanes=24, workers=2)) == 24
    assert lanes(Settings(workers=3)) == 3
    assert lanes(Settings()) >= 1


def test_the_outline_takes_its_page_frames_from_the_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pagefleet.layout import outline
    from tests import layout_pdfs

    path = layout_pdfs.outline_destinations(tmp_path)
    expected = outline.read_outline(path)
    assert any("top" in entry for entry in expected)
    doc = pdfium.PdfDocument(str(path))
    try:
        costs = measure_pages(doc, Settings(ocr="auto"))
        assert sorted(costs.frames) == list(range(len(doc)))

        # The splitter already loaded every page to measure it: none is loaded again.
        def load_again(pdf: pdfium.PdfDocument, index: int) -> None:
            raise AssertionError(f"page {index} loaded again")

        monkeypatch.setattr(outline, "_page_frame", load_again)
        assert outline.outline_of(doc, costs.frames) == expected
    finally:
        doc.close()
