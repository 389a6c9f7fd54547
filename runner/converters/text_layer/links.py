"""Links: each link annotation of a page cuts the pdftext span it covers most, as pdftext's
``merge_links`` does, so that the part under the link carries its URL.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import PageChars
from pdftext.pdf.links import _get_annot_link, _reconstruct_spans
from pdftext.pdf.utils import matrix_intersection_area
from pdftext.schema import Bbox, Link, PageReference

# The links a span keeps: those out of the document (a link to one of its pages is not
# page-local).
EXTERNAL = ("http://", "https://", "mailto:", "ftp://")


def merge_links(
    raw_lines: list[dict[str, Any]],
    chars: PageChars,
    pdf: pdfium.PdfDocument,
    page: pdfium.PdfPage,
    index: int,
    bbox: list[float],
    rotation: int,
) -> None:
    """pdftext's ``merge_links``: each link cuts the span it covers most at its borders.

    Done here on the page already open (``merge_links`` opens it again), and with the
    characters of only the spans a link cuts (``get_spans(need_chars=True)`` makes a dict of
    every character of the page). Links into other pages are resolved too, as pdftext does;
    their targets are not page-local and a span keeps only an :data:`EXTERNAL` one.
    """
    links: list[Link] = []
    for i in range(pdfium_c.FPDFPage_GetAnnotCount(page.raw)):
        annot = pdfium_c.FPDFPage_GetAnnot(page.raw, i)
        if not annot:
            continue
        try:
            link = _get_annot_link(annot, index, pdf, bbox, rotation)
        finally:
            pdfium_c.FPDFPage_CloseAnnot(annot)
        if link is not None:
            links.append(link)
    if not links:
        return
    spans = [span for line in raw_lines for span in line["spans"]]
    area = matrix_intersection_area(
        [link["bbox"] for link in links], [s["bbox"].bbox for s in spans]
    )
    refs = PageReference()
    cut: dict[int, list[Link]] = {}
    for link, row in zip(links, area, strict=True):
        if row.sum() == 0:
            continue
        at = int(row.argmax())
        dest_page = link["dest_page"]
        if dest_page is not None:
            if link["dest_pos"]:
                dest_pos = link["dest_pos"]
            elif dest_page == index:
                continue  # no link to its own page without a position
            else:
                dest_pos = [0.0, 0.0]
            link["url"] = refs.add_ref(dest_page, dest_pos).url
        cut.setdefault(at, []).append(link)
    if not cut:
        return
    at = 0
    for line in raw_lines:
        out = []
        for span in line["spans"]:
            if at in cut:
                span["chars"] = _span_chars(span, chars)
                out.extend(_reconstruct_spans(span, cut[at]))
            else:
                out.append(span)
            at += 1
        line["spans"] = out


def _span_chars(span: dict[str, Any], chars: PageChars) -> list[dict[str, Any]]:
    """The character dicts ``get_spans(need_chars=True)`` gives ``span``."""
    start = int(np.searchsorted(chars.char_indices, span["char_start_idx"]))
    end = int(np.searchsorted(chars.char_indices, span["char_end_idx"], side="right"))
    boxes = chars.boxes[start:end].tolist()
    rotations = chars.rotations[start:end].tolist()
    font_ids = chars.font_ids[start:end].tolist()
    indices = chars.char_indices[start:end].tolist()
    return [
        {
            "bbox": Bbox(boxes[k]),
            "char": chars.text[start + k],
            "rotation": rotations[k],
            "font": chars.fonts[font_ids[k]],
            "char_idx": indices[k],
        }
        for k in range(end - start)
    ]
