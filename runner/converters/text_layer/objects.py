"""A page's paths and images: what its layout needs of the page's drawing besides the text."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

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
        raw = page.raw
        found._walk(
            [
                pdfium_c.FPDFPage_GetObject(raw, i)
                for i in range(pdfium_c.FPDFPage_CountObjects(raw))
            ],
            0,
            None,
        )
        return found

    def _walk(self, objects: list[Any], depth: int, matrix: Matrix | None) -> None:
        """``matrix`` places a form's objects on the page: pdfium bounds them in the form's
        own space. Each object's bounds are cut to its clip path's (a drawing pasted from
        elsewhere may hold paths that reach far past what it shows)."""
        left, bottom, right, top = (ctypes.c_float() for _ in range(4))
        for obj in objects:
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind in (pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_IMAGE):
                if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
                    continue
                box = _clipped((left.value, bottom.value, right.value, top.value), obj)
                if box is None:
                    continue
                if matrix is not None:
                    box = _transformed(box, matrix)
                if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                    self.paths.append((*box, obj))
                else:
                    self.images.append((*box, obj))
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth + 1 < _MAX_DEPTH:
                m = pdfium_c.FS_MATRIX()
                if not pdfium_c.FPDFPageObj_GetMatrix(obj, m):
                    continue
                inner: Matrix = (m.a, m.b, m.c, m.d, m.e, m.f)
                count = pdfium_c.FPDFFormObj_CountObjects(obj)
                self._walk(
                    [pdfium_c.FPDFFormObj_GetObject(obj, i) for i in range(count)],
                    depth + 1,
                    inner if matrix is None else _then(inner, matrix),
                )


def _clipped(box: Box, obj: Any) -> Box | None:
    """``box`` cut to the bounds of ``obj``'s clip path (the intersection of its paths'); None
    when nothing of it shows."""
    clip = pdfium_c.FPDFPageObj_GetClipPath(obj)
    if not clip:
        return box
    x0, y0, x1, y1 = box
    x, y = ctypes.c_float(), ctypes.c_float()
    for p in range(pdfium_c.FPDFClipPath_CountPaths(clip)):
        xs: list[float] = []
        ys: list[float] = []
        for s in range(pdfium_c.FPDFClipPath_CountPathSegments(clip, p)):
            segment = pdfium_c.FPDFClipPath_GetPathSegment(clip, p, s)
            if pdfium_c.FPDFPathSegment_GetPoint(segment, x, y):
                xs.append(x.value)
                ys.append(y.value)
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
