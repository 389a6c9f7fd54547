"""The document outline (bookmarks), read where the whole PDF is at hand: the splitter.

Chunk PDFs lose the outline, so it cannot be read in the runners; the splitter reads it once
and the completion step passes it to :func:`pagefleet.layout.render_document`.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet.layout.schema import OutlineEntry
from pagefleet.pdf import Frame, page_frame

# Bookmark trees can be huge or cyclic in hostile files; this bounds the walk.
MAX_ENTRIES = 10_000
MAX_DEPTH = 16


def read_outline(pdf_path: str | os.PathLike[str]) -> list[OutlineEntry]:
    """Bookmarks of the PDF at ``pdf_path``; see :func:`outline_of`."""
    pdf = pdfium.PdfDocument(os.fspath(pdf_path))
    try:
        return outline_of(pdf)
    finally:
        pdf.close()


def outline_of(
    pdf: pdfium.PdfDocument, frames: Mapping[int, Frame | None] | None = None
) -> list[OutlineEntry]:
    """Bookmarks in document order: title, level (1 = top), 1-based target page and, where the
    destination gives one, the height it points at (``top``, from the page's top edge, in the
    layout's coordinates). ``frames``: pages already measured (by 0-based index), so that a
    page a bookmark points at is not loaded again (pdfium parses its content to load it)."""
    entries: list[OutlineEntry] = []
    tops: dict[int, Frame | None] = dict(frames or {})
    for item in pdf.get_toc(max_depth=MAX_DEPTH):
        if len(entries) >= MAX_ENTRIES:
            break
        dest = item.get_dest()
        index = dest.get_index() if dest else None
        title = " ".join(item.get_title().split())
        if not title:
            continue
        page = index + 1 if index is not None and 0 <= index < len(pdf) else None
        entry: OutlineEntry = {"title": title, "level": item.level + 1, "page": page}
        if dest is not None and index is not None and page is not None:
            y = _dest_y(dest)
            if y is not None:
                if index not in tops:
                    tops[index] = _page_frame(pdf, index)
                frame = tops[index]
                if frame is not None and -1.0 <= y - frame[0] <= frame[1] + 1.0:
                    entry["top"] = round(frame[1] - (y - frame[0]), 1)
        entries.append(entry)
    return entries


def _dest_y(dest: pdfium.PdfDest) -> float | None:
    """The y (PDF user space) a destination points at, None when it leaves y unchanged."""
    has_x, has_y, has_zoom = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    x, y, zoom = pdfium_c.FS_FLOAT(), pdfium_c.FS_FLOAT(), pdfium_c.FS_FLOAT()
    ok = pdfium_c.FPDFDest_GetLocationInPage(dest, has_x, has_y, has_zoom, x, y, zoom)
    return float(y.value) if ok and has_y.value else None


def _page_frame(pdf: pdfium.PdfDocument, index: int) -> Frame | None:
    page = pdf[index]
    try:
        return page_frame(page.raw)
    finally:
        page.close()
