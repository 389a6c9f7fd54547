"""The document outline (bookmarks), read where the whole PDF is at hand: the splitter.

Chunk PDFs lose the outline, so it cannot be read in the runners; the splitter reads it once
and the completion step passes it to :func:`pagefleet.layout.render_document`.
"""

from __future__ import annotations

import os

import pypdfium2 as pdfium

from pagefleet.layout.schema import OutlineEntry

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


def outline_of(pdf: pdfium.PdfDocument) -> list[OutlineEntry]:
    """Bookmarks in document order: title, level (1 = top) and 1-based target page."""
    entries: list[OutlineEntry] = []
    for item in pdf.get_toc(max_depth=MAX_DEPTH):
        if len(entries) >= MAX_ENTRIES:
            break
        index = item.get_dest().get_index() if item.get_dest() else None
        title = " ".join(item.get_title().split())
        if title:
            page = index + 1 if index is not None and 0 <= index < len(pdf) else None
            entries.append({"title": title, "level": item.level + 1, "page": page})
    return entries
