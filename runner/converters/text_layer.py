"""The CPU converter: pdftext's text layer, per page, into compact layout dicts.

Everything here looks at one page at a time, so a chunk PDF gives the same page dicts as the
whole document (rule 5); what needs the whole document is decided by
:func:`pagefleet.layout.render_document` when the chunks are assembled.
"""

from __future__ import annotations

import ctypes
import math
import os
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from importlib.metadata import version as _dist_version
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import PageChars, _empty_page_chars
from pdftext.pdf.links import _get_annot_link, _reconstruct_spans
from pdftext.pdf.pages import assign_scripts, get_lines, get_spans
from pdftext.pdf.utils import matrix_intersection_area
from pdftext.postprocessing import postprocess_text
from pdftext.schema import Bbox, Link, PageReference

from pagefleet.costs import MIN_TEXT_CHARS
from pagefleet.layout import render_document
from pagefleet.layout.outline import read_outline
from pagefleet.layout.schema import Block, Line, Page, Span, TableBlock
from pagefleet.layout.segment import page_blocks
from pagefleet.layout.tables import Segment, find_grids, grid_bbox
from pagefleet.models import PageContent
from runner.converters.ocr import ocr_lines

if TYPE_CHECKING:
    from pagefleet.settings import Settings

OcrMode = Literal["auto", "off", "force"]

NAME = "text-layer"
# The layout format and its rendering change with this file and with pdftext.
VERSION = f"1.0+pdftext{_dist_version('pdftext')}"

_HYPHEN = "\x02"
# Path objects this thin are rules; this long at least to count as a table border.
_RULE = 2.5
_MIN_RULE = 4.0  # pdfium's mark for a hyphen it saw at a line break
_EXTERNAL = ("http://", "https://", "mailto:", "ftp://")
_ITALIC = 1 << 6
_FORCE_BOLD = 1 << 18
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
_ITALIC_NAMES = ("italic", "oblique")
# A character whose centre is this far outside the visible page is not on it.
_EDGE = 1.0
# Form XObjects nest; text inside them counts as the page's.
_MAX_DEPTH = 3
# A gap this many font sizes wide inside a pdftext line separates two cells or columns.
_CELL_GAP = 2.0
_LAYOUT_CODES = np.array([2, 10, 13, 32], dtype=np.uint32)
_ALNUM = re.compile(r"[^\W_]")
_LINE_CODES = np.array([10, 13], dtype=np.uint32)
_LAYOUT_SET = frozenset(_LAYOUT_CODES.tolist())


def extract_pages(
    pdf_path: str | os.PathLike[str],
    first_page: int,
    *,
    ocr: OcrMode = "auto",
    ocr_threads: int = 0,
) -> list[Page]:
    """One layout dict per page of the file; the first is page ``first_page`` of the document.

    Each dict depends only on its page's content, never on the other pages of the file.
    ``ocr_threads`` caps the CPU threads OCR may use (0: all cores).
    """
    pdf = pdfium.PdfDocument(os.fspath(pdf_path))
    try:
        return [
            _extract_page(pdf, index, first_page + index, ocr, ocr_threads)
            for index in range(len(pdf))
        ]
    finally:
        pdf.close()


def convert_document(
    pdf_path: str | os.PathLike[str], *, ocr: OcrMode = "auto", ocr_threads: int = 0
) -> str:
    """The plain one-process conversion of a whole document to Markdown."""
    pages = extract_pages(pdf_path, 1, ocr=ocr, ocr_threads=ocr_threads)
    return render_document(pages, outline=read_outline(pdf_path))


class TextLayerConverter:
    """:class:`runner.converters.base.Converter` over :func:`extract_pages`."""

    name = NAME
    version = VERSION

    def __init__(self, settings: Settings) -> None:
        self.ocr: OcrMode = settings.ocr
        self.ocr_threads = settings.convert_threads

    def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> list[PageContent]:
        return [
            # PageContent keeps the layout as a plain JSON dict.
            PageContent(number=page["number"], layout=dict(page), ocr=page["ocr"])
            for page in extract_pages(
                pdf_path, first_page, ocr=self.ocr, ocr_threads=self.ocr_threads
            )
        ]


def _extract_page(
    pdf: pdfium.PdfDocument, index: int, number: int, ocr: OcrMode, ocr_threads: int
) -> Page:
    page = pdf[index]
    textpage = None
    try:
        bbox = page.get_bbox()
        width, height = _size(bbox)
        rotation = _rotation(page)
        if rotation in (90, 270):
            width, height = height, width
        lines: list[Line] = []
        objects = _Objects.of(page) if ocr != "force" else None
        if objects is not None:
            textpage = page.get_textpage()
            lines, chars = _text_lines(pdf, page, textpage, index, bbox, rotation, objects)
        use_ocr = ocr == "force" or (ocr == "auto" and _needs_ocr(page, lines))
        tables: list[TableBlock] = []
        if use_ocr:
            lines = ocr_lines(page, width, height, ocr_threads)
        elif textpage is not None and objects is not None and rotation == 0:
            tables = _tables(objects, chars, bbox, height)
            lines = [ln for ln in lines if not any(_inside(ln["bbox"], t["bbox"]) for t in tables)]
        return {
            "number": number,
            "ocr": use_ocr,
            "width": float(width),
            "height": float(height),
            "blocks": _place_tables(page_blocks(lines), tables),
        }
    finally:
        if textpage is not None:
            textpage.close()
        page.close()


def _size(bbox: list[float] | tuple[float, ...]) -> tuple[int, int]:
    """Width and height of the visible page in whole points, as pdftext measures them."""
    return math.ceil(abs(bbox[2] - bbox[0])), math.ceil(abs(bbox[3] - bbox[1]))


@dataclass
class _Objects:
    """What the page draws besides text that the layout needs, from one walk of its objects:
    path bounds (rules and cell frames) and image bounds."""

    paths: list[tuple[float, float, float, float, Any]] = field(default_factory=list)
    images: list[tuple[float, float, float, float]] = field(default_factory=list)

    @classmethod
    def of(cls, page: pdfium.PdfPage) -> _Objects:
        found = cls()
        raw = page.raw
        found._walk(
            [
                pdfium_c.FPDFPage_GetObject(raw, i)
                for i in range(pdfium_c.FPDFPage_CountObjects(raw))
            ],
            0,
        )
        return found

    def _walk(self, objects: list[Any], depth: int) -> None:
        left, bottom, right, top = (ctypes.c_float() for _ in range(4))
        for obj in objects:
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
                if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
                    continue
                box = (left.value, bottom.value, right.value, top.value)
                if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                    self.paths.append((*box, obj))
                else:
                    self.images.append(box)
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth + 1 < _MAX_DEPTH:
                count = pdfium_c.FPDFFormObj_CountObjects(obj)
                self._walk(
                    [pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(count)], depth + 1
                )


def _tables(
    objects: _Objects, chars: PageChars, bbox: list[float], height: float
) -> list[TableBlock]:
    """Ruled tables of the page, each cell's text read from inside its rules."""
    left, bottom = bbox[0], bbox[1]
    top = height + bottom  # flips y as pdftext does, so rules and text lines agree
    horizontal: list[Segment] = []
    vertical: list[Segment] = []
    for x0, y0, x1, y1, obj in objects.paths:
        # To top-left page coordinates.
        x0, x1, y0, y1 = x0 - left, x1 - left, top - y1, top - y0
        w, h = x1 - x0, y1 - y0
        if h <= _RULE and w >= _MIN_RULE:
            horizontal.append(((y0 + y1) / 2, x0, x1))
        elif w <= _RULE and h >= _MIN_RULE:
            vertical.append(((x0 + x1) / 2, y0, y1))
        elif w >= _MIN_RULE and h >= _MIN_RULE and _is_rectangle(obj):
            horizontal += [(y0, x0, x1), (y1, x0, x1)]
            vertical += [(x0, y0, y1), (x1, y0, y1)]
    if len(horizontal) < 3 or len(vertical) < 3:
        return []
    tables: list[TableBlock] = []
    for xs, ys in find_grids(horizontal, vertical):
        rows = _cells(chars, xs, ys)
        if any(cell for row in rows for cell in row):
            tables.append({"bbox": grid_bbox(xs, ys), "rows": rows})
    return tables


def _cells(chars: PageChars, xs: list[float], ys: list[float]) -> list[list[str]]:
    """The text of each cell of a grid: its characters (by their centres), in content order.

    A row between two rules that holds several rows of text (a table ruled only above and
    below its body) is cut into those rows (see :func:`_text_rows`), the head row excepted.
    """
    cx = (chars.boxes[:, 0] + chars.boxes[:, 2]) / 2
    cy = (chars.boxes[:, 1] + chars.boxes[:, 3]) / 2
    col = np.searchsorted(xs, cx) - 1
    row = np.searchsorted(ys, cy) - 1
    inside = (col >= 0) & (col < len(xs) - 1) & (row >= 0) & (row < len(ys) - 1)
    text = chars.text
    members: list[list[int]] = [[] for _ in ys[1:]]
    for i, r in zip(np.flatnonzero(inside).tolist(), row[inside].tolist(), strict=True):
        members[r].append(i)
    columns = col.tolist()
    out: list[list[str]] = []
    for r, chars_of_row in enumerate(members):
        # The first row of several is the head, whose labels may wrap alike in every column.
        subs = [chars_of_row] if r == 0 < len(members) - 1 else None
        for sub in subs or _text_rows(chars_of_row, chars, columns, len(xs) - 1):
            pieces: list[list[str]] = [[] for _ in xs[1:]]
            for i in sub:
                pieces[columns[i]].append(text[i])
            out.append(
                [
                    " ".join(postprocess_text("".join(p).replace(_HYPHEN, "-")).split())
                    for p in pieces
                ]
            )
    return out


def _text_rows(
    members: list[int], chars: PageChars, columns: list[int], width: int
) -> list[list[int]]:
    """The characters of one grid row, as the rows of text it holds.

    The row's text lines are the vertical bands its characters' boxes cover (a sub- or
    superscript overlaps its line's band). The row is cut at the bands when at least two of
    them, and half of all, have text in every column the row uses; a band with text in one
    column only continues the row above it (a cell's text wrapped). Otherwise the grid row
    is one row.
    """
    codes = chars.codes
    solid = [i for i in members if codes[i] not in _LAYOUT_SET]
    if len(solid) < 2:
        return [members]
    boxes = chars.boxes
    bands: list[list[float]] = []
    for y0, y1 in sorted((float(boxes[i, 1]), float(boxes[i, 3])) for i in solid):
        if bands and y0 < bands[-1][1] - 0.25 * min(y1 - y0, bands[-1][1] - bands[-1][0]):
            bands[-1][1] = max(bands[-1][1], y1)
        else:
            bands.append([y0, y1])
    if len(bands) < 2:
        return [members]
    starts = [b[0] for b in bands]
    band_of: dict[int, int] = {}
    used: list[set[int]] = [set() for _ in bands]
    for i in solid:
        k = max(0, bisect_right(starts, (boxes[i, 1] + boxes[i, 3]) / 2) - 1)
        band_of[i] = k
        used[k].add(columns[i])
    # Rows of data fill every column the grid row uses, band after band; a header whose
    # cells wrap does not (its long labels take more lines than its short ones).
    everywhere = set().union(*used)
    full = sum(1 for cols in used if cols == everywhere)
    if len(everywhere) < 2 or full < 2 or 2 * full < len(bands):
        return [members]
    # Bands with text in one column only join the row above (before the first full band,
    # the row below).
    row_of: list[int] = []
    current, full_seen = 0, False
    for cols in used:
        if len(cols) >= 2:
            current += full_seen
            full_seen = True
        row_of.append(current)
    out: list[list[int]] = [[] for _ in range(current + 1)]
    last = [0] * width  # a space or line break goes with the character before it in its cell
    for i in members:
        if i in band_of:
            last[columns[i]] = row_of[band_of[i]]
        out[last[columns[i]]].append(i)
    return [sub for sub in out if sub]


def _is_rectangle(obj: Any) -> bool:
    """A closed path of straight segments only: how most producers draw a framed cell."""
    count = pdfium_c.FPDFPath_CountSegments(obj)
    if not 4 <= count <= 5:
        return False
    return all(
        pdfium_c.FPDFPathSegment_GetType(pdfium_c.FPDFPath_GetPathSegment(obj, i))
        != pdfium_c.FPDF_SEGMENT_BEZIERTO
        for i in range(count)
    )


def _inside(box: list[float], frame: list[float]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return frame[0] <= cx <= frame[2] and frame[1] <= cy <= frame[3]


def _place_tables(blocks: list[Block], tables: list[TableBlock]) -> list[Block]:
    """Tables go before the first block that starts below them and shares their columns."""
    out: list[Block] = list(blocks)
    for table in sorted(tables, key=lambda t: t["bbox"][1]):
        top, x0, x1 = table["bbox"][1], table["bbox"][0], table["bbox"][2]
        at = next(
            (
                i
                for i, b in enumerate(out)
                if "lines" in b and b["bbox"][1] >= top and b["bbox"][0] < x1 and b["bbox"][2] > x0
            ),
            len(out),
        )
        out.insert(at, table)
    return out


def _needs_ocr(page: pdfium.PdfPage, lines: list[Line]) -> bool:
    """A page whose text layer is (nearly) empty but that shows an image: a scan."""
    letters = 0
    for line in lines:
        for span in line["spans"]:
            letters += len(_ALNUM.findall(span["t"]))
        if letters >= MIN_TEXT_CHARS:
            return False
    return any(obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE for obj in page.get_objects(max_depth=1))


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
    objects: _Objects,
) -> tuple[list[Line], PageChars]:
    """The page's text lines, and the visible characters they were made of."""
    chars, text_objects = _read_chars(textpage, bbox, rotation)
    chars = _deduplicate(_visible(chars, page, textpage, objects, text_objects))
    spans = get_spans(chars, superscript_height_threshold=0.7, need_chars=False)
    raw_lines = get_lines(spans)
    assign_scripts(raw_lines, height_threshold=0.7)
    if pdfium_c.FPDFPage_GetAnnotCount(page.raw) > 0:
        _merge_links(raw_lines, chars, pdf, page, index, bbox, rotation)
    tp = _address(textpage.raw)
    matrix = pdfium_c.FS_MATRIX()
    lines: list[Line] = []
    for raw in raw_lines:
        for pieces in _pieces(raw["spans"]):
            line = _line(pieces, tp, matrix)
            if line is not None:
                if len(pieces) == len(raw["spans"]):
                    line["bbox"] = _round_box(raw["bbox"].bbox)
                lines.append(line)
    return lines, chars


def _merge_links(
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
    their targets are not page-local and :func:`_span` drops them.
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


def _bare(fn: Any, restype: Any, *argtypes: Any) -> Any:
    """``fn`` of pdfium again, taking and giving plain addresses: no pointer wrapping per call,
    and a text object's address that can key a dict."""
    return ctypes.CFUNCTYPE(restype, *argtypes)(_address(fn))


def _address(pointer: Any) -> int:
    address = ctypes.cast(pointer, ctypes.c_void_p).value
    if not address:
        raise pdfium.PdfiumError("null pointer")
    return address


_P = ctypes.c_void_p
_GET_UNICODE = _bare(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint, _P, ctypes.c_int)
_GET_ANGLE = _bare(pdfium_c.FPDFText_GetCharAngle, ctypes.c_float, _P, ctypes.c_int)
_GET_LOOSE_BOX = _bare(pdfium_c.FPDFText_GetLooseCharBox, ctypes.c_int, _P, ctypes.c_int, _P)
_GET_BOX = _bare(pdfium_c.FPDFText_GetCharBox, ctypes.c_int, _P, ctypes.c_int, _P, _P, _P, _P)
_GET_OBJECT = _bare(pdfium_c.FPDFText_GetTextObject, _P, _P, ctypes.c_int)
_GET_FONT_INFO = _bare(
    pdfium_c.FPDFText_GetFontInfo, ctypes.c_ulong, _P, ctypes.c_int, _P, ctypes.c_ulong, _P
)
_GET_FONT_SIZE = _bare(pdfium_c.FPDFText_GetFontSize, ctypes.c_double, _P, ctypes.c_int)
_GET_FONT_WEIGHT = _bare(pdfium_c.FPDFText_GetFontWeight, ctypes.c_int, _P, ctypes.c_int)
_GET_MATRIX = _bare(pdfium_c.FPDFText_GetMatrix, ctypes.c_int, _P, ctypes.c_int, _P)
_GET_RENDER_MODE = _bare(pdfium_c.FPDFTextObj_GetTextRenderMode, ctypes.c_int, _P)
_FONT_NAME_BYTES = 256


def _read_chars(
    textpage: pdfium.PdfTextPage, bbox: list[float], rotation: int
) -> tuple[PageChars, np.ndarray]:
    """pdftext's ``get_chars`` (quote_loosebox on), the same arrays and fonts, in half the time.

    pdftext asks the font's name, flags, size and weight of every character, four pdfium calls
    that are most of its cost; a text object has one font and size, so they are asked once per
    text object here (per character where pdfium names no object). The pdfium functions are
    called through prototypes taking plain addresses, each over all characters at once, the
    boxes written straight into one array. Also each character's text object (its address,
    0 for none).
    """
    n = textpage.count_chars()
    if n == 0:
        return _empty_page_chars([]), np.zeros(0, dtype=np.uint64)
    x_start, y_start, x_end, y_end = bbox
    page_width = math.ceil(abs(x_end - x_start))
    page_height = math.ceil(abs(y_end - y_start))
    tp = _address(textpage.raw)
    name_buffer = ctypes.create_string_buffer(_FONT_NAME_BYTES)
    flags = ctypes.c_int()
    flags_at = ctypes.addressof(flags)
    fonts: list[dict[str, Any]] = []
    font_ids_by_key: dict[tuple[str, int, float, int], int] = {}
    font_ids_by_object: dict[int, int] = {}
    every = range(n)
    codes = [_GET_UNICODE(tp, i) for i in every]
    rotations = [_GET_ANGLE(tp, i) for i in every]
    # Loose boxes straight into one array (FS_RECTF: left, top, right, bottom).
    loose = (ctypes.c_float * (4 * n))()
    loose_at = ctypes.addressof(loose)
    found = [_GET_LOOSE_BOX(tp, i, loose_at + 16 * i) for i in every]
    font_ids: list[int] = []
    objects = np.array([_GET_OBJECT(tp, i) or 0 for i in every], dtype=np.uint64)
    starts = np.flatnonzero(objects[1:] != objects[:-1]) + 1
    for at, end in pairwise([0, *starts.tolist(), n]):
        obj, count = int(objects[at]), end - at
        if obj:
            font_id = font_ids_by_object.get(obj)
            if font_id is None:
                font_id = _font_id(tp, at, name_buffer, flags, flags_at, fonts, font_ids_by_key)
                font_ids_by_object[obj] = font_id
            font_ids += [font_id] * count
        else:  # no text object named: asked per character
            font_ids += [
                _font_id(tp, i, name_buffer, flags, flags_at, fonts, font_ids_by_key)
                for i in range(at, at + count)
            ]
    rect = np.frombuffer(loose, dtype=np.float32).reshape(n, 4).astype(np.float64)
    box_l, box_t, box_r, box_b = rect[:, 0], rect[:, 1], rect[:, 2], rect[:, 3]
    angles = np.array(rotations, dtype=np.float64)
    if not all(ok for ok, angle in zip(found, rotations, strict=True) if angle == 0):
        raise pdfium.PdfiumError("Failed to get charbox.")
    # Characters at an angle: the tight box, as pdftext asks.
    tight = [ctypes.c_double() for _ in range(4)]
    left_at, bottom_at, right_at, top_at = (ctypes.addressof(v) for v in tight)
    for i in np.flatnonzero(angles != 0).tolist():
        if not _GET_BOX(tp, i, left_at, right_at, bottom_at, top_at):  # l, r, b, t
            raise pdfium.PdfiumError("Failed to get charbox.")
        box_l[i], box_b[i], box_r[i], box_t[i] = (v.value for v in tight)
    code_array = np.array(codes, dtype=np.uint32)
    lone = (code_array >= 0xD800) & (code_array <= 0xDFFF)
    if lone.any():  # a lone surrogate (a broken ToUnicode map) cannot be encoded
        code_array[lone] = 0xFFFD
        codes = code_array.tolist()
    # pdftext's transform: origin shift, y flip, the page's rotation.
    cx_start = box_l - x_start
    cx_end = box_r - x_start
    ty_start = page_height - (box_b - y_start)
    ty_end = page_height - (box_t - y_start)
    x0, x1 = np.minimum(cx_start, cx_end), np.maximum(cx_start, cx_end)
    y0, y1 = np.minimum(ty_start, ty_end), np.maximum(ty_start, ty_end)
    if rotation:
        if rotation == 90:
            nx0, ny0, nx1, ny1 = page_height - y1, x0, page_height - y0, x1
        elif rotation == 180:
            nx0, ny0 = page_width - x1, page_height - y1
            nx1, ny1 = page_width - x0, page_height - y0
        elif rotation == 270:
            nx0, ny0, nx1, ny1 = y0, page_width - x1, y1, page_width - x0
        else:
            nx0, ny0, nx1, ny1 = x0, y0, x1, y1
        x0, y0 = np.minimum(nx0, nx1), np.minimum(ny0, ny1)
        x1, y1 = np.maximum(nx0, nx1), np.maximum(ny0, ny1)
    chars = PageChars(
        "".join(map(chr, codes)),
        code_array,
        angles,
        np.stack([x0, y0, x1, y1], axis=1),
        np.array(font_ids, dtype=np.int32),
        fonts,
        np.arange(n, dtype=np.int64),
    )
    return chars, objects


_WORD_BREAK_CODES = np.array([2, 10, 32], dtype=np.uint32)


def _deduplicate(chars: PageChars) -> PageChars:
    """pdftext's ``deduplicate_chars``, its words' boxes rounded all at once.

    A word (a run of characters up to a space, a line break or a change of font or angle)
    drawn again with the same text, font and angle at the same rounded place is dropped: fake
    bold prints each word twice.
    """
    n = len(chars)
    if n == 0:
        return chars
    codes, font_ids, rotations, boxes = chars.codes, chars.font_ids, chars.rotations, chars.boxes
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    starts[1:] = (
        np.isin(codes[:-1], _WORD_BREAK_CODES)
        | (font_ids[1:] != font_ids[:-1])
        | (rotations[1:] != rotations[:-1])
    )
    word_starts = np.flatnonzero(starts)
    word_ends = np.append(word_starts[1:], n)
    x0 = np.round(np.minimum.reduceat(boxes[:, 0], word_starts)).tolist()
    y0 = np.round(np.minimum.reduceat(boxes[:, 1], word_starts)).tolist()
    x1 = np.round(np.maximum.reduceat(boxes[:, 2], word_starts)).tolist()
    y1 = np.round(np.maximum.reduceat(boxes[:, 3], word_starts)).tolist()
    angles = rotations[word_starts].tolist()
    fonts = font_ids[word_starts].tolist()
    text = chars.text
    seen: set[tuple[float, float, float, float, str, float, int]] = set()
    keep = np.zeros(len(word_starts), dtype=bool)
    for w, (a, b) in enumerate(zip(word_starts.tolist(), word_ends.tolist(), strict=True)):
        key = (x0[w], y0[w], x1[w], y1[w], text[a:b], angles[w], fonts[w])
        if key not in seen:
            seen.add(key)
            keep[w] = True
    if keep.all():
        return chars
    kept = np.repeat(keep, word_ends - word_starts)
    kept_codes = codes[kept]
    return PageChars(
        "".join(map(chr, kept_codes.tolist())),
        kept_codes,
        rotations[kept],
        boxes[kept],
        font_ids[kept],
        chars.fonts,
        chars.char_indices[kept],
    )


def _font_id(
    tp: int,
    index: int,
    name_buffer: Any,
    flags: Any,
    flags_at: int,
    fonts: list[dict[str, Any]],
    ids: dict[tuple[str, int, float, int], int],
) -> int:
    """The index in ``fonts`` of character ``index``'s font, added when new (pdftext's dict)."""
    length = _GET_FONT_INFO(tp, index, ctypes.addressof(name_buffer), len(name_buffer), flags_at)
    if length > len(name_buffer):
        name_buffer = ctypes.create_string_buffer(length)
        _GET_FONT_INFO(tp, index, ctypes.addressof(name_buffer), length, flags_at)
    name = name_buffer.value.decode("utf-8", errors="replace") if length > 0 else ""
    key = (
        name,
        flags.value if length > 0 else 0,
        _GET_FONT_SIZE(tp, index),
        _GET_FONT_WEIGHT(tp, index),
    )
    found = ids.get(key)
    if found is None:
        found = ids[key] = len(fonts)
        fonts.append({"name": key[0], "flags": key[1], "size": key[2], "weight": key[3]})
    return found


def _pieces(spans: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A pdftext line cut where its text jumps a wide gap: cells of a table without rules, or
    a form's label and the label of the column beside it, are lines of their own."""
    out: list[list[dict[str, Any]]] = [[]]
    reach: float | None = None
    for span in spans:
        x0, y0, x1, y1 = span["bbox"].bbox
        if span["text"].strip():
            # The box's height, not the font size: many producers set size 1 and scale.
            size = 0.8 * (y1 - y0)
            if reach is not None and x0 - reach > _CELL_GAP * max(size, 1.0):
                out.append([])
            reach = x1 if reach is None else max(reach, x1)
        out[-1].append(span)
    return out


def _line(raw_spans: list[dict[str, Any]], tp: int, matrix: Any) -> Line | None:
    out_spans: list[Span] = []
    soft_hyphen = False
    boxes = []
    for raw_span in raw_spans:
        text = postprocess_text(raw_span["text"])
        if _HYPHEN in text:
            soft_hyphen = text.rstrip().endswith(_HYPHEN)
            text = text.replace(_HYPHEN, "-")
        text = text.replace("\n", " ")
        if not text:
            continue
        if text.strip():
            boxes.append(raw_span["bbox"].bbox)
        span = _span(text, raw_span, tp, matrix)
        _append(out_spans, span)
    while out_spans and not out_spans[-1]["t"].strip():
        out_spans.pop()
    if not out_spans:
        return None
    out_spans[-1]["t"] = out_spans[-1]["t"].rstrip()
    out_spans[0]["t"] = out_spans[0]["t"].lstrip()
    box = [
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    ]
    line: Line = {"bbox": _round_box(box), "spans": out_spans}
    if soft_hyphen:
        line["hy"] = True
    return line


def _visible(
    chars: PageChars,
    page: pdfium.PdfPage,
    textpage: pdfium.PdfTextPage,
    objects: _Objects,
    text_objects: np.ndarray,
) -> PageChars:
    """The characters a reader of the page sees.

    Dropped: characters outside the visible page (the crop box; a typesetter's line-number
    ruler or a printer's slug line sits outside it) and text rendered invisible, unless it lies
    over an image: that is the OCR layer of a scan, the only text the page has.
    """
    n = len(chars)
    if n == 0:
        return chars
    width, height = _size(page.get_bbox())
    if _rotation(page) in (90, 270):
        width, height = height, width
    boxes = chars.boxes
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    keep = (cx >= -_EDGE) & (cx <= width + _EDGE) & (cy >= -_EDGE) & (cy <= height + _EDGE)
    hidden = _invisible_chars(chars, textpage, objects.images, text_objects)
    if hidden is not None:
        keep &= ~hidden
    # Line breaks and spaces pdfium generates carry no position worth trusting.
    keep |= np.isin(chars.codes, _LAYOUT_CODES)
    if keep.all():
        return chars
    codes = chars.codes[keep]
    return PageChars(
        "".join(map(chr, codes.tolist())),
        codes,
        chars.rotations[keep],
        boxes[keep],
        chars.font_ids[keep],
        chars.fonts,
        chars.char_indices[keep],
    )


def _invisible_chars(
    chars: PageChars,
    textpage: pdfium.PdfTextPage,
    images: list[tuple[float, float, float, float]],
    text_objects: np.ndarray,
) -> np.ndarray | None:
    """Mask of the characters drawn invisible and not over an image; None when there are none.

    The render mode is asked of one character per line (its text object's, once per object):
    a text object is drawn in one mode, and invisible text (an OCR layer, hidden words) is
    written as lines of its own. Asking every character costs more than the page's layout.
    ``text_objects`` holds each character's text object by pdfium character index.
    """
    codes = chars.codes
    starts = np.empty(len(codes), dtype=bool)
    starts[0] = True
    starts[1:] = np.isin(codes[:-1], _LINE_CODES)
    line_starts = np.flatnonzero(starts)
    bounds = np.append(line_starts, len(codes))
    # Each line's first character that is not a space or a line break.
    solid = np.flatnonzero(~np.isin(codes, _LAYOUT_CODES))
    if not len(solid):
        return None
    at = np.minimum(np.searchsorted(solid, line_starts), len(solid) - 1)
    firsts = solid[at]
    has_solid = firsts < bounds[1:]
    line_objects = text_objects[chars.char_indices[firsts]]
    modes: dict[int, bool] = {}
    raw = textpage.raw
    hidden: np.ndarray | None = None
    left, right = ctypes.c_double(), ctypes.c_double()
    bottom, top = ctypes.c_double(), ctypes.c_double()
    for k in np.flatnonzero(has_solid & (line_objects != 0)).tolist():
        obj = int(line_objects[k])
        invisible = modes.get(obj)
        if invisible is None:
            invisible = modes[obj] = _GET_RENDER_MODE(obj) == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
        if not invisible:
            continue
        first = int(chars.char_indices[firsts[k]])
        pdfium_c.FPDFText_GetCharBox(raw, first, left, right, bottom, top)
        x, y = (left.value + right.value) / 2, (bottom.value + top.value) / 2
        if any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in images):
            continue  # the OCR layer of a scan
        if hidden is None:
            hidden = np.zeros(len(codes), dtype=bool)
        hidden[bounds[k] : bounds[k + 1]] = True
    return hidden


def _span(text: str, raw: dict[str, Any], tp: int, matrix: Any) -> Span:
    """``raw`` of text page ``tp`` (an address) as a layout span; ``matrix`` is scratch."""
    font = raw["font"]
    start, end = raw["char_start_idx"], raw["char_end_idx"]
    size = font["size"] * _scale(tp, start, matrix)
    last = _char_size(tp, end, matrix) if end > start else 0.0
    if last > 1.05 * size:
        # A superscript that opens the span (a footnote's number) in the span's font: the
        # size of most of its characters, not of its first. (Only a first character smaller
        # than the last: small capitals after a full-size one keep the first one's size.)
        sizes = Counter(round(_char_size(tp, i, matrix), 1) for i in range(start, end + 1))
        del sizes[0.0]
        size = max(sizes, key=lambda k: (sizes[k], k))
    span: Span = {"t": text, "s": round(size, 1)}
    name = font["name"].lower()
    flags = font["flags"] or 0
    if not text.strip():
        return span
    if font["weight"] >= 600 or flags & _FORCE_BOLD or any(n in name for n in _BOLD_NAMES):
        span["b"] = True
    if flags & _ITALIC or any(n in name for n in _ITALIC_NAMES):
        span["i"] = True
    url = raw.get("url") or ""
    if url.startswith(_EXTERNAL):
        span["u"] = url
    return span


def _scale(tp: int, index: int, matrix: Any) -> float:
    """The text matrix's scale at character ``index``: many producers set the font size to 1
    and scale with the matrix instead."""
    if _GET_MATRIX(tp, index, ctypes.addressof(matrix)):
        return math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
    return 1.0


def _char_size(tp: int, index: int, matrix: Any) -> float:
    return float(_GET_FONT_SIZE(tp, index)) * _scale(tp, index, matrix)


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
