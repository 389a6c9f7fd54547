"""Pictures, listings and glyphs without meaning in the text-layer converter: images and
drawings written as assets and linked where they stand, code fenced with its indents, junk
left out; the same whole or in chunks (rule 5)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path
from typing import cast

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from PIL import Image

from pagefleet.keys import ASSET_LINK_PREFIX, ASSET_NAME_BYTES
from pagefleet.layout import ChunkLayout, render_chunks, render_document
from pagefleet.layout.lines import BULLETS, line_text
from pagefleet.layout.schema import ImageBlock, Line, Page, Span
from pagefleet.settings import Settings
from runner.converters.text_layer import TextLayerConverter, convert_document, extract_pages
from runner.converters.text_layer.figures import Picture, labels_to_pictures
from tests import layout_pdfs
from tests.conftest import corpus_dir


def _converted(pdf: Path, folder: Path, first: int = 1) -> tuple[list[Page], str]:
    """The converter's pages of ``pdf`` with its assets in ``folder``, and their Markdown."""
    folder.mkdir(exist_ok=True)
    pages = TextLayerConverter(Settings(ocr="off")).convert(pdf, first, folder)
    layouts = [cast(Page, p.layout) for p in pages]
    return layouts, render_document(layouts)


def _link(name: str) -> str:
    return f"![]({ASSET_LINK_PREFIX}{name})"


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The figures PDF, the assets folder of its conversion, and its Markdown."""
    folder = tmp_path_factory.mktemp("figures")
    pdf = layout_pdfs.figures(folder)
    _, markdown = _converted(pdf, folder / "assets")
    return pdf, folder / "assets", markdown


def test_an_image_is_written_as_it_is_and_linked_where_it_stands(
    figures: tuple[Path, Path, str],
) -> None:
    pdf, assets, markdown = figures
    image, chart = "page-00001-image-1.png", "page-00001-figure-1.png"
    # The icon under 32 pixels is left out; the page border and the rule draw nothing.
    assert sorted(p.name for p in assets.iterdir()) == [chart, image]
    assert all(len(name.encode()) <= ASSET_NAME_BYTES for name in (image, chart))
    with Image.open(assets / image) as written, Image.open(pdf.parent / "photo-120x90.png") as src:
        assert written.size == src.size
        assert written.convert("RGB").tobytes() == src.convert("RGB").tobytes()
    # Between the paragraphs it stands between.
    before = markdown.index("a book.")
    at = markdown.index(_link(image))
    assert before < at < markdown.index("The stations were read")


def test_an_image_is_written_in_the_fewest_channels_that_hold_its_pixels(tmp_path: Path) -> None:
    """Colour stays RGB, grey becomes L, a stencil LA: fewer bytes to encode and store, and
    the pixels pdfium renders, every one."""
    pdf = layout_pdfs.images_by_channels(tmp_path)
    _converted(pdf, tmp_path / "assets")
    document = pdfium.PdfDocument(pdf)
    page = document[0]
    rendered = [
        obj.get_bitmap(render=True).to_pil().convert("RGBA")
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE])
    ]
    for k, (mode, expected) in enumerate(zip(("RGB", "L", "LA"), rendered, strict=True), 1):
        with Image.open(tmp_path / "assets" / f"page-00001-image-{k}.png") as image:
            assert image.mode == mode
            assert image.convert("RGBA").tobytes() == expected.tobytes()
    document.close()


def test_an_image_mask_is_written_as_a_one_bit_png_of_the_pixels_pdfium_paints(
    tmp_path: Path,
) -> None:
    """A stencil is written from its own one-bit pixels, not from pdfium's colour-and-alpha
    rendering of it, and shows the same: its /Decode, fill colour and flip applied."""
    pdf = layout_pdfs.image_masks(tmp_path)
    _converted(pdf, tmp_path / "assets")
    document = pdfium.PdfDocument(pdf)
    rendered = [
        np.asarray(obj.get_bitmap(render=True).to_pil().convert("RGBA"))
        for obj in document[0].get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE])
    ]
    document.close()
    assert len(rendered) == 3
    for k, expected in enumerate(rendered, 1):
        with Image.open(tmp_path / "assets" / f"page-00001-image-{k}.png") as image:
            assert image.mode == "P" and len(image.getpalette() or []) == 6
            written = np.asarray(image.convert("RGBA"))
        # At one image pixel a device pixel pdfium paints whole pixels: alpha 0 or 255.
        assert set(np.unique(expected[..., 3])) == {0, 255}
        assert (written[..., 3] == expected[..., 3]).all()
        painted = expected[..., 3] == 255
        assert (written[painted][:, :3] == expected[painted][:, :3]).all()
    colours = [tuple(e[e[..., 3] == 255][0, :3]) for e in rendered]
    assert colours == [(255, 0, 0), (0, 0, 255), (0, 128, 0)]


def test_a_drawing_is_rendered_its_labels_with_it_and_its_caption_stays_text(
    figures: tuple[Path, Path, str],
) -> None:
    _, assets, markdown = figures
    chart = "page-00001-figure-1.png"
    at = markdown.index(_link(chart))
    assert markdown.index("The stations were read") < at < markdown.index("Figure 1: Rain")
    # The labels are in the picture, and after it as text, a label a line, top to bottom and
    # left to right: the legend, the bars' names. The axis's ticks, numbers alone, say nothing
    # without the picture and stay in it only.
    assert f"{_link(chart)}\n\nRain (mm)\nA\nB\nC\nD\nE\n\nFigure 1: Rain" in markdown
    assert not re.search(r"^\s*(?:0|0 10)$", markdown, re.MULTILINE)
    with Image.open(assets / chart) as rendered:
        # 90 mm of axis, its tick labels and legend, at twice the page's resolution.
        assert 500 < rendered.width < 620 and 280 < rendered.height < 360
        colours = rendered.convert("RGB").getcolors(rendered.width * rendered.height) or []
        assert layout_pdfs.BAR in {colour for _, colour in colours}


def test_a_ruled_table_in_a_page_border_stays_a_table(figures: tuple[Path, Path, str]) -> None:
    _, _, markdown = figures
    assert "| River | Length km | Outflow |\n| --- | --- | --- |\n| Nile |" in markdown
    assert "page-00002" not in markdown


def test_pictures_are_the_same_whole_and_in_chunks(
    figures: tuple[Path, Path, str], tmp_path: Path
) -> None:
    pdf, assets, markdown = figures
    pages: list[Page] = []
    for chunk, first in layout_pdfs.split(pdf, tmp_path, 1):
        pages += _converted(chunk, tmp_path / "assets", first)[0]
    assert _digests(tmp_path / "assets") == _digests(assets)
    assert render_document(pages) == markdown == convert_document(pdf, ocr="off")
    # Written or not, the layouts link the same pictures.
    assert pages == extract_pages(pdf, 1, ocr="off")


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


def test_a_picture_on_every_page_is_furniture(tmp_path: Path) -> None:
    pdf = layout_pdfs.logo_pages(tmp_path)
    markdown = convert_document(pdf, ocr="off")
    # The logo is left out on every page, as a running head would be; the photo stays.
    assert re.findall(r"!\[\]\(.*?\)", markdown) == [_link("page-00002-image-2.png")]
    # Decided once for the document, from chunks of a page each.
    chunks = [
        ChunkLayout.of(extract_pages(chunk, first, ocr="off"), ())
        for chunk, first in layout_pdfs.split(pdf, tmp_path, 1)
    ]
    assert render_chunks(chunks) == markdown


@pytest.mark.parametrize(("shown", "kept"), [((2, 5, 8), True), ((1, 2, 4, 5, 7, 9), False)])
def test_a_big_picture_is_furniture_only_on_half_the_pages(
    tmp_path: Path, shown: tuple[int, ...], kept: bool
) -> None:
    # grobid's slides show their pipeline diagram on 3 of 38 slides: content, though a logo on
    # that many pages would be furniture; a template's picture on most slides is not.
    pdf = layout_pdfs.deck_with_a_figure(tmp_path, shown)
    markdown = convert_document(pdf, ocr="off")
    figures = [_link(f"page-{n:05d}-image-2.png") for n in shown] if kept else []
    assert re.findall(r"!\[\]\(.*?\)", markdown) == figures  # the logo never
    chunks = [
        ChunkLayout.of(extract_pages(chunk, first, ocr="off"), ())
        for chunk, first in layout_pdfs.split(pdf, tmp_path, 3)
    ]
    assert render_chunks(chunks) == markdown


def test_a_plot_over_gridlines_is_a_drawing_and_an_empty_form_a_table(tmp_path: Path) -> None:
    markdown = convert_document(layout_pdfs.plot_on_grid(tmp_path), ocr="off")
    # The legend is the drawing's label: in the picture, and under it as text.
    assert f"{_link('page-00001-figure-1.png')}\n\nupper gauge\n\n" in markdown
    assert markdown.count("| --- | --- | --- |") == 1
    assert "| Station | Depth | Signed |\n| --- | --- | --- |\n|  |  |  |" in markdown


def test_a_table_set_in_courier_under_its_head_stays_a_table(tmp_path: Path) -> None:
    markdown = convert_document(layout_pdfs.courier_table(tmp_path))
    head = "| Station | Depth | Kind |\n| --- | --- | --- |\n| G0 | 0.0 | river |\n"
    assert head in markdown and "```" not in markdown


def _line(x: float, y: float, text: str, size: float = 10, bold: bool = False) -> Line:
    span: Span = {"t": text, "s": size, "b": True} if bold else {"t": text, "s": size}
    return {"bbox": [x, y, x + 0.5 * size * len(text), y + size], "spans": [span]}


def test_a_drawings_labels_wait_with_it_and_are_never_headings() -> None:
    # A drawing at the top of page 2, before the rest of a sentence page 1 left open; its
    # labels set bold and larger than the body, alone on their rows, as a heading would be.
    words = "the samples were sieved and weighed before the lab"
    page1: Page = {
        "number": 1,
        "ocr": False,
        "width": 612,
        "height": 792,
        "blocks": [
            {
                "bbox": [72, 600, 400, 636],
                "lines": [_line(72, 600 + 12 * i, words) for i in range(3)],
            }
        ],
    }
    labels = [
        [_line(90, 80, "Sieving", 14, True)],
        [_line(90, 150, "Lab", 14, True), _line(90, 166, "analysis", 14, True)],
        [_line(90, 182, "+ Sample: Sieve [0..1]")],
    ]
    drawing: ImageBlock = {
        "bbox": [72, 60, 400, 200],
        "image": "page-00002-figure-1.png",
        "key": "0123456789abcdef",
        "labels": labels,
    }
    page2: Page = {
        "number": 2,
        "ocr": False,
        "width": 612,
        "height": 792,
        "blocks": [
            drawing,
            {"bbox": [72, 220, 400, 230], "lines": [_line(72, 220, "analysed them.")]},
        ],
    }
    markdown = render_document([page1, page2])
    assert markdown == (
        " ".join([words] * 3)
        + " analysed them.\n\n"
        + _link("page-00002-figure-1.png")
        + "\n\nSieving\nLab analysis\n\\+ Sample: Sieve \\[0..1\\]\n"
    )


def test_a_drawings_labels_are_read_row_by_row_each_whole() -> None:
    # A slide's pipeline: "PDF file" over a row of boxes, the row one run of text cut where it
    # crosses from box to box, a box's name on two lines ("Segmented" over "document"), the
    # caption under it, a tick's number and a line beside the drawing.
    cut = _line(300, 200, "biblio")
    cut["cut"] = True
    lines = [
        _line(72, 100, "PDF file"),
        _line(200, 200, "cover"),
        cut,
        _line(80, 195, "Segmented"),
        _line(80, 206, "document"),
        _line(420, 150, "100"),
        _line(72, 260, "Figure 2: The segmentation."),
        _line(600, 150, "Beside the drawing."),
    ]
    drawing = Picture([60, 90, 500, 240], "page-00001-figure-1.png", "0123456789abcdef")
    kept = labels_to_pictures(lines, [drawing])
    assert kept == [lines[6], lines[7]]
    assert [[line_text(ln) for ln in label] for label in drawing.labels] == [
        ["PDF file"],
        ["Segmented", "document"],
        ["cover"],
        ["biblio"],
    ]
    assert all("cut" not in ln for label in drawing.labels for ln in label)
    assert "labels" in drawing.block() and "labels" not in Picture([0, 0, 1, 1], "i", "k").block()
