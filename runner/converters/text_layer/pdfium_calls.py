"""pdfium's text functions as ctypes prototypes that take and give plain addresses.

pypdfium2 wraps every argument and result of a call in pointer objects; the character
extraction makes these calls for every character of a page, where that wrapping costs more
than the call itself. An address is also a plain int, which can key a dict (a text object).
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c


def _bare(fn: Any, restype: Any, *argtypes: Any) -> Any:
    """``fn`` of pdfium again, taking and giving plain addresses: no pointer wrapping per call,
    and a text object's address that can key a dict."""
    return ctypes.CFUNCTYPE(restype, *argtypes)(address(fn))


def address(pointer: Any) -> int:
    """The address ``pointer`` holds; a null one is an error."""
    value = ctypes.cast(pointer, ctypes.c_void_p).value
    if not value:
        raise pdfium.PdfiumError("null pointer")
    return value


_P = ctypes.c_void_p
GET_UNICODE = _bare(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint, _P, ctypes.c_int)
GET_ANGLE = _bare(pdfium_c.FPDFText_GetCharAngle, ctypes.c_float, _P, ctypes.c_int)
GET_LOOSE_BOX = _bare(pdfium_c.FPDFText_GetLooseCharBox, ctypes.c_int, _P, ctypes.c_int, _P)
GET_BOX = _bare(pdfium_c.FPDFText_GetCharBox, ctypes.c_int, _P, ctypes.c_int, _P, _P, _P, _P)
# The object's address as a plain int, 0 for none (a c_void_p result gives None).
GET_OBJECT = _bare(pdfium_c.FPDFText_GetTextObject, ctypes.c_size_t, _P, ctypes.c_int)
GET_FONT_INFO = _bare(
    pdfium_c.FPDFText_GetFontInfo, ctypes.c_ulong, _P, ctypes.c_int, _P, ctypes.c_ulong, _P
)
GET_FONT_SIZE = _bare(pdfium_c.FPDFText_GetFontSize, ctypes.c_double, _P, ctypes.c_int)
GET_FONT_WEIGHT = _bare(pdfium_c.FPDFText_GetFontWeight, ctypes.c_int, _P, ctypes.c_int)
GET_MATRIX = _bare(pdfium_c.FPDFText_GetMatrix, ctypes.c_int, _P, ctypes.c_int, _P)
GET_RENDER_MODE = _bare(pdfium_c.FPDFTextObj_GetTextRenderMode, ctypes.c_int, _P)
# A page's objects, for the walk of its paths and images (objects.py); a null object, path or
# segment comes back as 0.
PAGE_OBJECT = _bare(pdfium_c.FPDFPage_GetObject, ctypes.c_size_t, _P, ctypes.c_int)
FORM_OBJECT = _bare(pdfium_c.FPDFFormObj_GetObject, ctypes.c_size_t, _P, ctypes.c_ulong)
OBJECT_TYPE = _bare(pdfium_c.FPDFPageObj_GetType, ctypes.c_int, _P)
OBJECT_BOUNDS = _bare(pdfium_c.FPDFPageObj_GetBounds, ctypes.c_int, _P, _P, _P, _P, _P)
CLIP_PATH = _bare(pdfium_c.FPDFPageObj_GetClipPath, ctypes.c_size_t, _P)
CLIP_PATHS = _bare(pdfium_c.FPDFClipPath_CountPaths, ctypes.c_int, _P)
CLIP_SEGMENTS = _bare(pdfium_c.FPDFClipPath_CountPathSegments, ctypes.c_int, _P, ctypes.c_int)
CLIP_SEGMENT = _bare(
    pdfium_c.FPDFClipPath_GetPathSegment, ctypes.c_size_t, _P, ctypes.c_int, ctypes.c_int
)
SEGMENT_POINT = _bare(pdfium_c.FPDFPathSegment_GetPoint, ctypes.c_int, _P, _P, _P)
