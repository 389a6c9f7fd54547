"""A page's paths and images: what its layout needs of the page's drawing besides the text."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from runner.converters.text_layer.pdfium_calls import (
    CLIP_PATH,
    CLIP_PATHS,
    CLIP_SEGMENT,
    CLIP_SEGMENTS,
    FORM_OBJECT,
    OBJECT_BOUNDS,
    OBJECT_TYPE,
    PAGE_OBJECT,
    SEGMENT_POINT,
    address,
)

# Form XObjects nest; what they draw counts as the page's.
_MAX_DEPTH = 3

# (left, bottom, right, top) in the page's PDF space.
Box = tuple[float, float, float, float]
# A box and the pdfium object it bounds.
Placed = tuple[float, float, float, float, Any]
# (a, b, c, d, e, f): x' = a x + c y + e, y' = b x + d y + f.
Matrix = tuple[float, float, float, float, float, float]


@dataclass
class PageObjects:
    """What the page draws besides text that the layout needs, from one walk of its objects:
    paths (rules, cell frames, drawings) and images, each with its bounds on the page."""

    paths: list[Placed] = field(default_factory=list)
    images: list[Placed] = field(default_factory=list)

    @classmethod
    def of(cls, page: pdfium.PdfPage) -> PageObjects:
        found = cls()
        raw = address(page.raw)
        count = pdfium_c.FPDFPage_CountObjects(page.raw)
        found._walk([PAGE_OBJECT(raw, i) for i in range(count)], 0, None)
        return found

    def _walk(self, objects: list[int], depth: int, matrix: Matrix | None) -> None:
        """``objects``: addresses (the walk asks pdfium through the prototypes of
        :mod:`.pdfium_calls`: most of a page's objects are text, passed over; the paths and
        images kept are pypdfium2's pointers, as their users ask pdfium through it).
        ``matrix`` places a form's objects on the page: pdfium bounds them in the form's
        own space. Each object's bounds are cut to its clip path's (a drawing pasted from
        elsewhere may hold paths that reach far past what it shows)."""
        bounds = (ctypes.c_float * 4)()  # left, bottom, right, top
        at = [ctypes.addressof(bounds) + 4 * k for k in range(4)]
        for obj in objects:
            kind = OBJECT_TYPE(obj)
            if kind in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
                if not OBJECT_BOUNDS(obj, *at):
                    continue
                box = _clipped((bounds[0], bounds[1], bounds[2], bounds[3]), obj)
                if box is None:
                    continue
                if matrix is not None:
                    box = _transformed(box, matrix)
                pointer = ctypes.cast(obj, pdfium_c.FPDF_PAGEOBJECT)
                if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                    self.paths.append((*box, pointer))
                else:
                    self.images.append((*box, pointer))
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth + 1 < _MAX_DEPTH:
                form = ctypes.cast(obj, pdfium_c.FPDF_PAGEOBJECT)
                m = pdfium_c.FS_MATRIX()
                if not pdfium_c.FPDFPageObj_GetMatrix(form, m):
                    continue
                inner: Matrix = (m.a, m.b, m.c, m.d, m.e, m.f)
                count = pdfium_c.FPDFFormObj_CountObjects(form)
                self._walk(
                    [FORM_OBJECT(obj, i) for i in range(count)],
                    depth + 1,
                    inner if matrix is None else _then(inner, matrix),
                )


def _clipped(box: Box, obj: int) -> Box | None:
    """``box`` cut to the bounds of the clip path of object ``obj`` (an address; the
    intersection of its paths'); None when nothing of it shows."""
    clip = CLIP_PATH(obj)
    if not clip:
        return box
    x0, y0, x1, y1 = box
    point = (ctypes.c_float * 2)()
    x_at = ctypes.addressof(point)
    for p in range(CLIP_PATHS(clip)):
        xs: list[float] = []
        ys: list[float] = []
        for s in range(CLIP_SEGMENTS(clip, p)):
            if SEGMENT_POINT(CLIP_SEGMENT(clip, p, s), x_at, x_at + 4):
                xs.append(point[0])
                ys.append(point[1])
        if xs:
            x0, y0, x1, y1 = max(x0, min(xs)), max(y0, min(ys)), min(x1, max(xs)), min(y1, max(ys))
    return (x0, y0, x1, y1) if x0 <= x1 and y0 <= y1 else None


def _then(first: Matrix, second: Matrix) -> Matrix:
    """The matrix that applies ``first``, then ``second``."""
    a1, b1, c1, d1, e1, f1 = first
    a2, b2, c2, d2, e2, f2 = second
    return (
        a1 * a2 + b1 * c2,
        a1 * b2 + b1 * d2,
        c1 * a2 + d1 * c2,
        c1 * b2 + d1 * d2,
        e1 * a2 + f1 * c2 + e2,
        e1 * b2 + f1 * d2 + f2,
    )


def _transformed(box: Box, m: Matrix) -> Box:
    """The bounds of ``box`` carried by ``m``."""
    a, b, c, d, e, f = m
    x0, y0, x1, y1 = box
    xs = [a * x + c * y + e for x in (x0, x1) for y in (y0, y1)]
    ys = [b * x + d * y + f for x in (x0, x1) for y in (y0, y1)]
    return min(xs), min(ys), max(xs), max(ys)


def curved(obj: Any) -> bool:
    """A path with a Bézier segment or a line neither level nor upright."""
    x, y = ctypes.c_float(), ctypes.c_float()
    last: tuple[float, float] | None = None
    for k in range(pdfium_c.FPDFPath_CountSegments(obj)):
        segment = pdfium_c.FPDFPath_GetPathSegment(obj, k)
        kind = pdfium_c.FPDFPathSegment_GetType(segment)
        if kind == pdfium_c.FPDF_SEGMENT_BEZIERTO:
            return True
        if not pdfium_c.FPDFPathSegment_GetPoint(segment, x, y):
            continue
        slanted = last is not None and min(abs(x.value - last[0]), abs(y.value - last[1])) > 0.5
        if kind == pdfium_c.FPDF_SEGMENT_LINETO and slanted:
            return True
        last = (x.value, y.value)
    return False
