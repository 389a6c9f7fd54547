"""The CPU converter: pdftext's text layer, per page, into compact layout dicts.

Everything here looks at one page at a time, so a chunk PDF gives the same page dicts as the
whole document (rule 5); what needs the whole document is decided by
:func:`pagefleet.layout.render_document` when the chunks are assembled.
"""

from __future__ import annotations

import math
import os
from importlib.metadata import version as _dist_version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import deduplicate_chars, get_chars
from pdftext.pdf.links import merge_links
from pdftext.pdf.pages import assign_scripts, get_lines, get_spans
from pdftext.postprocessing import postprocess_text
from pdftext.schema import PageReference

from pagefleet.layout import render_document
from pagefleet.layout.schema import Line, Page, Span
from pagefleet.layout.segment import page_blocks
from pagefleet.models import PageContent

if TYPE_CHECKING:
    from pagefleet.settings import Settings

OcrMode = Literal["auto", "off", "force"]

NAME = "text-layer"
# The layout format and its rendering change with this file and with pdftext.
VERSION = f"1.0+pdftext{_dist_version('pdftext')}"

_HYPHEN = "\x02"  # pdfium's mark for a hyphen it saw at a line break
_EXTERNAL = ("http://", "https://", "mailto:", "ftp://")
_FIXED_PITCH = 1 << 0
_ITALIC = 1 << 6
_FORCE_BOLD = 1 << 18
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
_ITALIC_NAMES = ("italic", "oblique")


def extract_pages(
    pdf_path: str | os.PathLike[str], first_page: int, *, ocr: OcrMode = "auto"
) -> list[dict[str, Any]]:
    """One layout dict per page of the file; the first is page ``first_page`` of the document.

    Each dict depends only on its page's content, never on the other pages of the file.
    """
    pdf = pdfium.PdfDocument(os.fspath(pdf_path))
    try:
        return [
            dict(_extract_page(pdf, index, first_page + index, ocr)) for index in range(len(pdf))
        ]
    finally:
        pdf.close()


def convert_document(pdf_path: str | os.PathLike[str], *, ocr: OcrMode = "auto") -> str:
    """The plain one-process conversion of a whole document to Markdown."""
    return render_document(extract_pages(pdf_path, 1, ocr=ocr))


class TextLayerConverter:
    """:class:`runner.converters.base.Converter` over :func:`extract_pages`."""

    name = NAME
    version = VERSION

    def __init__(self, settings: Settings) -> None:
        self.ocr: OcrMode = settings.ocr

    def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> list[PageContent]:
        return [
            PageContent(number=page["number"], layout=page, ocr=page["ocr"])
            for page in extract_pages(pdf_path, first_page, ocr=self.ocr)
        ]


def _extract_page(pdf: pdfium.PdfDocument, index: int, number: int, ocr: OcrMode) -> Page:
    page = pdf[index]
    textpage = None
    try:
        bbox = page.get_bbox()
        width = math.ceil(abs(bbox[2] - bbox[0]))
        height = math.ceil(abs(bbox[3] - bbox[1]))
        rotation = _rotation(page)
        if rotation in (90, 270):
            width, height = height, width
        lines: list[Line] = []
        if ocr != "force":
            textpage = page.get_textpage()
            lines = _text_lines(pdf, page, textpage, index, bbox, rotation)
        return {
            "number": number,
            "ocr": False,
            "width": float(width),
            "height": float(height),
            "blocks": list(page_blocks(lines, width)),
        }
    finally:
        if textpage is not None:
            textpage.close()
        page.close()


def _rotation(page: pdfium.PdfPage) -> int:
    try:
        return int(page.get_rotation())
    except pdfium.PdfiumError:
        return 0


def _text_lines(
    pdf: pdfium.PdfDocument,
    page: pdfium.PdfPage,
    textpage: pdfium.PdfTextPage,
    index: int,
    bbox: list[float],
    rotation: int,
) -> list[Line]:
    chars = deduplicate_chars(get_chars(textpage, bbox, rotation))
    # Char boxes are only needed to cut spans at link borders, which only pages with
    # annotations can have.
    has_annots = pdfium_c.FPDFPage_GetAnnotCount(page.raw) > 0
    spans = get_spans(chars, superscript_height_threshold=0.7, need_chars=has_annots)
    raw_lines = get_lines(spans)
    assign_scripts(raw_lines, height_threshold=0.7)
    if has_annots:
        # merge_links also resolves links into other pages; those are dropped below because
        # their targets are not page-local.
        merge_links({"page": index, "blocks": [{"lines": raw_lines}]}, pdf, PageReference())
    matrix = pdfium_c.FS_MATRIX()
    lines: list[Line] = []
    for raw in raw_lines:
        out_spans: list[Span] = []
        soft_hyphen = False
        for raw_span in raw["spans"]:
            text = postprocess_text(raw_span["text"])
            if _HYPHEN in text:
                soft_hyphen = text.rstrip().endswith(_HYPHEN)
                text = text.replace(_HYPHEN, "-")
            text = text.replace("\n", " ")
            if not text:
                continue
            span = _span(text, raw_span, textpage, matrix)
            _append(out_spans, span)
        while out_spans and not out_spans[-1]["t"].strip():
            out_spans.pop()
        if not out_spans:
            continue
        out_spans[-1]["t"] = out_spans[-1]["t"].rstrip()
        out_spans[0]["t"] = out_spans[0]["t"].lstrip()
        line: Line = {"bbox": _round_box(raw["bbox"].bbox), "spans": out_spans}
        if soft_hyphen:
            line["hy"] = True
        lines.append(line)
    return lines


def _span(text: str, raw: dict[str, Any], textpage: pdfium.PdfTextPage, matrix: Any) -> Span:
    font = raw["font"]
    size = font["size"]
    # Many producers set the font size to 1 and scale with the text matrix instead.
    if pdfium_c.FPDFText_GetMatrix(textpage.raw, raw["char_start_idx"], matrix):
        size *= math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
    span: Span = {"t": text, "s": round(size, 1)}
    name = font["name"].lower()
    flags = font["flags"] or 0
    if not text.strip():
        return span
    if font["weight"] >= 600 or flags & _FORCE_BOLD or any(n in name for n in _BOLD_NAMES):
        span["b"] = True
    if flags & _ITALIC or any(n in name for n in _ITALIC_NAMES):
        span["i"] = True
    if flags & _FIXED_PITCH or "mono" in name or "courier" in name:
        span["m"] = True
    if raw.get("superscript"):
        span["sup"] = True
    url = raw.get("url") or ""
    if url.startswith(_EXTERNAL):
        span["u"] = url
    return span


def _append(spans: list[Span], span: Span) -> None:
    """Merge runs that render alike, so how pdfium cut them cannot show in the layout."""
    if spans:
        last = spans[-1]
        if not span["t"].strip() and "u" not in span:
            last["t"] += span["t"]
            return
        if {k: v for k, v in last.items() if k != "t"} == {
            k: v for k, v in span.items() if k != "t"
        }:
            last["t"] += span["t"]
            return
    spans.append(span)


def _round_box(box: list[float]) -> list[float]:
    return [round(v, 1) for v in box]
