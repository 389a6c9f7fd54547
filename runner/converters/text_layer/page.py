"""One page's layout dict: its text lines (or OCR's, for a scan), its ruled tables, its
pictures and the blocks they make, from that page alone (rule 5).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet.costs import MIN_TEXT_CHARS
from pagefleet.layout.schema import Line, Page, TableBlock
from pagefleet.layout.segment import page_blocks
from runner.converters.ocr import ocr_lines
from runner.converters.text_layer.chars import page_rotation, page_size
from runner.converters.text_layer.figures import (
    Picture,
    find_pictures,
    labels_to_pictures,
    place_pictures,
    write_pictures,
)
from runner.converters.text_layer.hidden_ocr import bad_hidden_layer
from runner.converters.text_layer.lines import text_lines
from runner.converters.text_layer.objects import PageObjects
from runner.converters.text_layer.tables import lines_outside, ruled_tables

OcrMode = Literal["auto", "off", "force"]

# Letters and digits: word characters but the underscore.
_ALNUM = re.compile(r"[^\W_]")


def extract_page(
    pdf: pdfium.PdfDocument,
    index: int,
    number: int,
    ocr: OcrMode,
    ocr_threads: int,
    assets_dir: Path | None = None,
) -> Page:
    """Page ``index`` of ``pdf`` as the layout dict of page ``number`` of the document; its
    pictures are written into ``assets_dir`` (with None, only linked)."""
    page = pdf[index]
    textpage = None
    try:
        bbox = page.get_bbox()
        width, height = page_size(bbox)
        rotation = page_rotation(page)
        if rotation in (90, 270):
            width, height = height, width
        lines: list[Line] = []
        objects = PageObjects.of(page) if ocr != "force" else None
        if objects is not None:
            textpage = page.get_textpage()
            lines, chars = text_lines(pdf, page, textpage, index, bbox, rotation, objects)
        scan = ocr != "force" and _needs_ocr(page, lines)
        use_ocr = ocr == "force" or (
            ocr == "auto"
            and (scan or (objects is not None and bad_hidden_layer(page, objects, lines)))
        )
        tables: list[TableBlock] = []
        pictures: list[Picture] = []
        if use_ocr:
            lines = ocr_lines(page, width, height, ocr_threads)
        elif textpage is not None and objects is not None and not scan:
            # A scan left to no OCR stays empty: its image is the page, not a figure on it.
            if rotation == 0:
                tables = ruled_tables(objects, chars, bbox, height)
                lines = lines_outside(lines, tables)
            pictures = find_pictures(objects, lines, tables, bbox, rotation, number)
            lines = labels_to_pictures(lines, pictures)
            if assets_dir is not None:
                write_pictures(page, pictures, assets_dir)
        return {
            "number": number,
            "ocr": use_ocr,
            "width": float(width),
            "height": float(height),
            "blocks": place_pictures(page_blocks(lines, tables), [p.block() for p in pictures]),
        }
    finally:
        if textpage is not None:
            textpage.close()
        page.close()


def _needs_ocr(page: pdfium.PdfPage, lines: list[Line]) -> bool:
    """A page whose text layer is (nearly) empty but that shows an image: a scan."""
    letters = 0
    for line in lines:
        for span in line["spans"]:
            letters += len(_ALNUM.findall(span["t"]))
        if letters >= MIN_TEXT_CHARS:
            return False
    return any(obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE for obj in page.get_objects(max_depth=1))
