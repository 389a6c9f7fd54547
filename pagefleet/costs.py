"""What each page of a document will cost to convert, told cheaply by the splitter.

A page is one of two classes: it has a usable text layer, or it is a scan the converter will
OCR (50-1,000 times dearer on a CPU). The test is the text-layer converter's own: an image among
the page's top-level objects and fewer than :data:`MIN_TEXT_CHARS` letters of text, or a
hidden OCR layer that is mostly not words over a page-sized image
(:mod:`pagefleet.hidden_layer`). Loading a
page costs about 0.3 ms (pdfium parses its content); a page with many objects is not a scan, so
only pages of few objects and an image get their text counted. A text page's seconds follow its
characters (see :func:`measure_pages`). A wrong estimate only unbalances a plan, it never
changes a result, so the measuring has a time budget past which pages count as text.
"""

from __future__ import annotations

import ctypes
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet.hidden_layer import PAGE_IMAGE, all_invisible, mostly_not_words
from pagefleet.pdf import Frame, has_explicit_links, page_frame
from pagefleet.planning import PlanPolicy

if TYPE_CHECKING:
    # Only named in annotations: the text-layer converter imports this module for
    # MIN_TEXT_CHARS, and a plain conversion should not load pydantic-settings for it.
    from pagefleet.settings import Settings

log = logging.getLogger(__name__)

# A page with an image and fewer letters or digits than this is a scan to OCR: the one rule
# by which the text-layer converter OCRs a page and the splitter prices it.
MIN_TEXT_CHARS = 16
# A scanned page is an image and perhaps a few objects more; past this many it is not a scan.
_SCAN_MAX_OBJECTS = 200
# Past this many seconds of measuring, the remaining pages are taken as text pages.
_MEASURE_BUDGET_S = 1.0
# Text pages whose characters are counted to estimate a text page of the document.
_CHAR_SAMPLE = 32


@dataclass(frozen=True)
class PageCosts:
    """Estimated seconds of each page, and which pages were taken to need OCR."""

    seconds: list[float]
    ocr_pages: list[int]  # 1-based
    measure_s: float
    text_page_s: float  # what a page with a text layer was estimated at
    # The frames of the pages looked at, by 0-based index (for the outline: see outline_of).
    frames: dict[int, Frame | None] = field(default_factory=dict)
    # The pages looked at (0-based) that hold no link with a destination array: cutting a chunk
    # need not load them again to mend its links (pagefleet.pdf.cut_chunk).
    unlinked: frozenset[int] = frozenset()


class _Look(NamedTuple):
    scan: bool
    chars: int | None
    frame: Frame | None
    linked: bool | None = None  # a link with a destination array; None: not loaded


def _look(doc: pdfium.PdfDocument, index: int, *, count: bool) -> _Look:
    """Whether page ``index`` (0-based) looks like a scan without a usable text layer, its
    characters if ``count``, its frame, and whether it has a link with a destination array.
    pdfium's own calls: this runs on every page, and pypdfium2's page objects add a third to
    each page's load and close."""
    page = pdfium_c.FPDF_LoadPage(doc.raw, index)
    if not page:  # a page pdfium cannot load fails in the converter, not here
        return _Look(False, None, None)
    try:
        frame = page_frame(page)
        linked = has_explicit_links(page)
        objects = pdfium_c.FPDFPage_CountObjects(page)
        scan_like = objects <= _SCAN_MAX_OBJECTS and any(
            pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(page, i))
            == pdfium_c.FPDF_PAGEOBJ_IMAGE
            for i in range(objects)
        )
        if not (scan_like or count):
            return _Look(False, None, frame, linked)
        textpage = pdfium_c.FPDFText_LoadPage(page)
        if not textpage:
            return _Look(False, None, frame, linked)
        try:
            chars = max(pdfium_c.FPDFText_CountChars(textpage), 0)
            scan = scan_like and (
                not _has_text(textpage, chars) or _bad_hidden_layer(page, textpage, chars)
            )
        finally:
            pdfium_c.FPDFText_ClosePage(textpage)
        return _Look(scan, chars if count else None, frame, linked)
    finally:
        pdfium_c.FPDF_ClosePage(page)


def _has_text(textpage: Any, chars: int) -> bool:
    """Whether the text page holds at least ``MIN_TEXT_CHARS`` letters or digits (it stops
    counting there)."""
    letters = 0
    for i in range(chars):
        letters += chr(pdfium_c.FPDFText_GetUnicode(textpage, i)).isalnum()
        if letters >= MIN_TEXT_CHARS:
            return True
    return False


def _bad_hidden_layer(page: Any, textpage: Any, chars: int) -> bool:
    """Whether the page is a scan under a hidden OCR layer the converter will not trust
    (:mod:`pagefleet.hidden_layer`): priced as the OCR page it will be."""
    area = pdfium_c.FPDF_GetPageWidthF(page) * pdfium_c.FPDF_GetPageHeightF(page)
    if not any(
        pdfium_c.FPDFPageObj_GetType(obj) == pdfium_c.FPDF_PAGEOBJ_IMAGE
        and _area(obj) >= PAGE_IMAGE * area
        for obj in (
            pdfium_c.FPDFPage_GetObject(page, i)
            for i in range(pdfium_c.FPDFPage_CountObjects(page))
        )
    ):
        return False
    if not all_invisible(page):
        return False
    text = ctypes.create_string_buffer(2 * (chars + 1))
    written = pdfium_c.FPDFText_GetText(
        textpage, 0, chars, ctypes.cast(text, ctypes.POINTER(ctypes.c_ushort))
    )
    return mostly_not_words(text.raw[: 2 * max(written - 1, 0)].decode("utf-16-le", "replace"))


def _area(obj: Any) -> float:
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
        return 0.0
    return (right.value - left.value) * (top.value - bottom.value)


def _class_costs(settings: Settings) -> tuple[float, float, float, bool]:
    """(seconds of a text page, of each of its characters, of a scan, whether telling them
    apart matters) for the configured converter."""
    if settings.converter == "marker":
        text = settings.cost_marker_page_s
        # balanced mode OCRs every page; fast mode only those without a usable text layer.
        ocr_where_needed = settings.marker_mode == "fast" and not (
            settings.marker_force_ocr or settings.marker_disable_ocr
        )
        return text, 0.0, settings.cost_marker_ocr_page_s, ocr_where_needed
    if settings.ocr == "force":
        return settings.cost_ocr_page_s, 0.0, settings.cost_ocr_page_s, False
    return (
        settings.cost_text_page_s,
        settings.cost_text_char_s,
        settings.cost_ocr_page_s,
        settings.ocr == "auto",
    )


def measure_pages(doc: pdfium.PdfDocument, settings: Settings) -> PageCosts:
    """Each page's estimated seconds for the configured converter.

    The text-layer converter's time on a text page grows with its characters (a fixed part and
    a part per character; the corpus's pages hold 0-6,000), so a sample of the text pages,
    spread over the document, has its characters counted (a text page of pdfium each, ~1 ms),
    and every text page is estimated at the sample's mean: pages of one document are far more
    alike than documents are.
    """
    started = time.perf_counter()
    text_s, char_s, ocr_s, tell = _class_costs(settings)
    pages = len(doc)
    sampled = set(range(0, pages, -(-pages // _CHAR_SAMPLE))) if char_s else set()
    ocr_pages: list[int] = []  # 1-based
    chars: list[int] = []
    frames: dict[int, Frame | None] = {}
    unlinked: set[int] = set()
    deadline = started + _MEASURE_BUDGET_S
    for index in range(pages):
        if not (tell or index in sampled):
            continue
        if time.perf_counter() > deadline:
            log.warning("page costs: %d of %d pages measured in time", index, pages)
            break
        look = _look(doc, index, count=index in sampled)
        frames[index] = look.frame
        if look.linked is False:
            unlinked.add(index)
        if look.scan and tell:
            ocr_pages.append(index + 1)
        elif look.chars is not None:
            chars.append(look.chars)
    if chars:
        text_s += char_s * sum(chars) / len(chars)
    seconds = [text_s] * pages
    for number in ocr_pages:
        seconds[number - 1] = ocr_s
    return PageCosts(
        seconds, ocr_pages, time.perf_counter() - started, text_s, frames, frozenset(unlinked)
    )


def lanes(settings: Settings) -> int:
    """Conversions the fleet runs at once: ``fleet_lanes``, else ``workers``, else one per
    CPU core (what a runner with ``workers`` 0 starts)."""
    return settings.fleet_lanes or settings.workers or os.cpu_count() or 1


def plan_policy(settings: Settings, costs: PageCosts) -> PlanPolicy:
    """The plan's knobs for a document whose pages were measured as ``costs``."""
    return PlanPolicy(
        target_s=settings.chunk_pages * costs.text_page_s,
        min_s=settings.chunk_min_cost_s,
        max_s=settings.chunk_max_cost_s,
        lanes=lanes(settings),
    )
