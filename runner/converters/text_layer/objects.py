"""A page's paths and images: what its layout needs of the page's drawing besides the text."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

# Form XObjects nest; what they draw counts as the page's.
_MAX_DEPTH = 3


@dataclass
class PageObjects:
    """What the page draws besides text that the layout needs, from one walk of its objects:
    path bounds (rules and cell frames) and image bounds."""

    paths: list[tuple[float, float, float, float, Any]] = field(default_factory=list)
    images: list[tuple[float, float, float, float]] = field(default_factory=list)

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
