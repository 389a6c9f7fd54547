"""The document outline (bookmarks), read where the whole PDF is at hand: the splitter.

Chunk PDFs lose the outline, so it cannot be read in the runners; the splitter reads it once
and the completion step passes it to :func:`pagefleet.layout.render_document`.

Everything here comes from the PDF, so it is bounded by what the PDF weighs: a bookmark's title
can be an indirect object that a thousand bookmarks share, and object streams compress, so a
179 KB file can name 50 MB of titles. The walk charges each bookmark its title's full length
before reading it, and stops once the file's budget (:func:`outline_budget`) is spent: what it
reads, keeps and the manifest stores stays within a small multiple of the file.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Mapping

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet.layout.schema import OutlineEntry
from pagefleet.pdf import Frame, page_frame

# Bookmark trees can be huge or cyclic in hostile files; this bounds the walk.
MAX_ENTRIES = 10_000
MAX_DEPTH = 16
# A title is a heading's words (the corpus's longest is 75 characters); past this it is cut.
MAX_TITLE_CHARS = 500
# The budget, in characters: each entry costs its title's full length and this much besides
# (its level, page and top as JSON), from the floor plus one character per byte of the file,
# up to the cap.
ENTRY_CHARS = 50
BUDGET_FLOOR_CHARS = 64 * 1024
BUDGET_MAX_CHARS = 2 * 1024 * 1024
# Control characters mean nothing in a heading, and JSON spells each in six bytes.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def outline_budget(pdf_bytes: int) -> int:
    """The characters the outline of a file of ``pdf_bytes`` may cost (see ENTRY_CHARS)."""
    return min(BUDGET_FLOOR_CHARS + max(pdf_bytes, 0), BUDGET_MAX_CHARS)


def read_outline(pdf_path: str | os.PathLike[str]) -> list[OutlineEntry]:
    """Bookmarks of the PDF at ``pdf_path``, within its file's budget; see :func:`outline_of`."""
    pdf = pdfium.PdfDocument(os.fspath(pdf_path))
    try:
        return outline_of(pdf, budget=outline_budget(os.path.getsize(pdf_path)))
    finally:
        pdf.close()


def outline_of(
    pdf: pdfium.PdfDocument,
    frames: Mapping[int, Frame | None] | None = None,
    *,
    budget: int = BUDGET_FLOOR_CHARS,
) -> list[OutlineEntry]:
    """Bookmarks in document order: title, level (1 = top), 1-based target page and, where the
    destination gives one, the height it points at (``top``, from the page's top edge, in the
    layout's coordinates). ``frames``: pages already measured (by 0-based index), so that a
    page a bookmark points at is not loaded again (pdfium parses its content to load it).
    ``budget``: :func:`outline_budget` of the file's size; the bookmarks past it are left out,
    as are those past MAX_ENTRIES or deeper than MAX_DEPTH."""
    entries: list[OutlineEntry] = []
    tops: dict[int, Frame | None] = dict(frames or {})
    for item in pdf.get_toc(max_depth=MAX_DEPTH):
        if len(entries) >= MAX_ENTRIES:
            break
        length = _title_length(item)
        budget -= length + ENTRY_CHARS
        if budget < 0:
            break
        title = " ".join(_CONTROL.sub(" ", item.get_title() if length else "").split())
        if not title:
            continue
        dest = item.get_dest()
        index = dest.get_index() if dest else None
        page = index + 1 if index is not None and 0 <= index < len(pdf) else None
        entry: OutlineEntry = {
            "title": title[:MAX_TITLE_CHARS].rstrip(),
            "level": item.level + 1,
            "page": page,
        }
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


def _title_length(item: pdfium.PdfBookmark) -> int:
    """The title's length in UTF-16 code units, asked of pdfium without reading the title."""
    return max(int(pdfium_c.FPDFBookmark_GetTitle(item, None, 0)) // 2 - 1, 0)


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
