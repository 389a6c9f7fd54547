"""The CPU converter: pdftext's text layer, per page, into compact layout dicts.

Everything here looks at one page at a time, so a chunk PDF gives the same page dicts as the
whole document (rule 5); what needs the whole document is decided by
:func:`pagefleet.layout.render_document` when the chunks are assembled.

This module is the converter's entry point; the work is done, by job, in:

- :mod:`.page`: one page's layout dict, and whether the page is a scan to OCR;
- :mod:`.lines`: the page's text lines and their spans;
- :mod:`.chars`: the page's characters, read from pdfium as pdftext reads them;
- :mod:`.pdfium_calls`: the pdfium functions that reading calls, as bare ctypes prototypes;
- :mod:`.objects`: the page's paths and images;
- :mod:`.tables`: ruled tables;
- :mod:`.figures`: its images and drawings, written as assets;
- :mod:`.links`: link annotations cut into the spans they cover.
"""

from __future__ import annotations

import os
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import TYPE_CHECKING

import pypdfium2 as pdfium

from pagefleet.layout import render_document
from pagefleet.layout.outline import read_outline
from pagefleet.layout.schema import Page
from pagefleet.models import PageContent
from runner.converters.text_layer.page import OcrMode, extract_page

if TYPE_CHECKING:
    from pagefleet.settings import Settings

__all__ = [
    "NAME",
    "VERSION",
    "OcrMode",
    "TextLayerConverter",
    "convert_document",
    "extract_pages",
]

NAME = "text-layer"
# The layout format and its rendering change with this package and with pdftext.
VERSION = f"1.1+pdftext{_dist_version('pdftext')}"


def extract_pages(
    pdf_path: str | os.PathLike[str],
    first_page: int,
    *,
    ocr: OcrMode = "auto",
    ocr_threads: int = 0,
    assets_dir: Path | None = None,
) -> list[Page]:
    """One layout dict per page of the file; the first is page ``first_page`` of the document.

    Each dict depends only on its page's content, never on the other pages of the file.
    ``ocr_threads`` caps the CPU threads OCR may use (0: all cores). The pages' pictures are
    written into ``assets_dir``, named after their document page; without it they are only
    linked (the Markdown is the same).
    """
    pdf = pdfium.PdfDocument(os.fspath(pdf_path))
    try:
        return [
            extract_page(pdf, index, first_page + index, ocr, ocr_threads, assets_dir)
            for index in range(len(pdf))
        ]
    finally:
        pdf.close()


def convert_document(
    pdf_path: str | os.PathLike[str],
    *,
    ocr: OcrMode = "auto",
    ocr_threads: int = 0,
    assets_dir: Path | None = None,
) -> str:
    """The plain one-process conversion of a whole document to Markdown; the pictures it
    links are written into ``assets_dir`` (with None, only linked)."""
    pages = extract_pages(pdf_path, 1, ocr=ocr, ocr_threads=ocr_threads, assets_dir=assets_dir)
    return render_document(pages, outline=read_outline(pdf_path))


class TextLayerConverter:
    """:class:`runner.converters.base.Converter` over :func:`extract_pages`."""

    name = NAME
    version = VERSION
    servers_restarted: tuple[str, ...] = ()  # no model servers

    def __init__(self, settings: Settings) -> None:
        self.ocr: OcrMode = settings.ocr
        self.ocr_threads = settings.convert_threads

    def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> list[PageContent]:
        return [
            # PageContent keeps the layout as a plain JSON dict.
            PageContent(number=page["number"], layout=dict(page), ocr=page["ocr"])
            for page in extract_pages(
                pdf_path,
                first_page,
                ocr=self.ocr,
                ocr_threads=self.ocr_threads,
                assets_dir=assets_dir,
            )
        ]
