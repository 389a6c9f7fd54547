"""A scan's hidden OCR layer that reads worse than our own OCR would: the page is OCR'd
instead (the rule is :mod:`pagefleet.hidden_layer`'s, which the splitter prices by too)."""

from __future__ import annotations

import pypdfium2 as pdfium

from pagefleet.hidden_layer import PAGE_IMAGE, all_invisible, mostly_not_words
from pagefleet.layout.schema import Line
from runner.converters.text_layer.objects import PageObjects


def bad_hidden_layer(page: pdfium.PdfPage, objects: PageObjects, lines: list[Line]) -> bool:
    """Whether the page is a scan whose invisible text layer is mostly not words."""
    width, height = page.get_size()
    area = max(width * height, 1.0)
    if not any((x1 - x0) * (y1 - y0) >= PAGE_IMAGE * area for x0, y0, x1, y1, _ in objects.images):
        return False
    text = " ".join(span["t"] for line in lines for span in line["spans"])
    return mostly_not_words(text) and all_invisible(page.raw)
