"""The page's characters, as pdftext reads them, and those of them a reader sees.

:func:`read_chars` and :func:`deduplicate` are pdftext's ``get_chars`` and
``deduplicate_chars`` made faster: they give the same :class:`PageChars` (the tests compare
them with pdftext's on every kind of page they make), through the prototypes of
:mod:`.pdfium_calls`. :func:`visible` then drops what is off the visible page or drawn
invisible, and :func:`readable` what decodes to no text.
"""

from __future__ import annotations

import ctypes
import math
import unicodedata
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import PageChars, _empty_page_chars

from pagefleet.layout.lines import BULLETS
from runner.converters.text_layer.pdfium_calls import (
    GET_ANGLE,
    GET_BOX,
    GET_FONT_INFO,
    GET_FONT_SIZE,
    GET_FONT_WEIGHT,
    GET_LOOSE_BOX,
    GET_OBJECT,
    GET_RENDER_MODE,
    GET_UNICODE,
    address,
)

if TYPE_CHECKING:
    from runner.converters.text_layer.objects import PageObjects, Placed

# pdfium's mark for a hyphen it saw at a line break.
HYPHEN = "\x02"
# That hyphen, line breaks and spaces: marks of the layout more than ink on the page.
LAYOUT_CODES = np.array([2, 10, 13, 32], dtype=np.uint32)
_LINE_CODES = np.array([10, 13], dtype=np.uint32)
_WORD_BREAK_CODES = np.array([2, 10, 32], dtype=np.uint32)
# A character whose centre is this far outside the visible page is not on it.
_EDGE = 1.0
# A longer font name is asked again into a buffer of its length.
_FONT_NAME_BYTES = 256
# Tab, line breaks and pdfium's hyphen are the control codes text has.
_KEPT_CONTROLS = (2, 9, 10, 13)
_BULLET_CODES = np.array([ord(c) for c in BULLETS], dtype=np.uint32)
# The codes a subset font numbered as it met its glyphs starts with, among its first uses.
_SEQUENCE = [0x21, 0x22, 0x23]
_SEQUENCE_SEEN = 64
# Arabic alef (bare, with madda, hamza above, hamza below) and lam: a lam-alef ligature is one
# glyph that a font's ToUnicode map may write alef first, in the order the two are drawn.
_ALEFS = np.array([0x627, 0x622, 0x623, 0x625], dtype=np.uint32)
_LAM = 0x644
# Spacing accents and the combining marks they stand for: TeX's fonts draw an accent as a glyph
# of its own over (or under) its letter, and their ToUnicode maps give it as a spacing character
# ("Franc¸ois", "Mouni´e"). Where Unicode has a compatibility decomposition (space + mark) it is
# that mark; grave, circumflex, tilde and caron have none.
_ACCENT_MARKS = {
    0x60: 0x300,
    0x5E: 0x302,
    0x7E: 0x303,
    0xA8: 0x308,
    0xAF: 0x304,
    0xB4: 0x301,
    0xB8: 0x327,
    0x2C6: 0x302,
    0x2C7: 0x30C,
    0x2D8: 0x306,
    0x2D9: 0x307,
    0x2DA: 0x30A,
    0x2DB: 0x328,
    0x2DC: 0x303,
    0x2DD: 0x30B,
}
_ACCENT_CODES = np.array(list(_ACCENT_MARKS), dtype=np.uint32)
# TeX sets an accented i or j on the dotless letter (\'{\i}); composed, it is the dotted one's.
_DOTTED = {"\u0131": "i", "\u0237": "j"}


def page_size(bbox: list[float] | tuple[float, ...]) -> tuple[int, int]:
    """Width and height of the visible page in whole points, as pdftext measures them."""
    return math.ceil(abs(bbox[2] - bbox[0])), math.ceil(abs(bbox[3] - bbox[1]))


def page_rotation(page: pdfium.PdfPage) -> int:
    """The page's rotation in degrees, 0 where pdfium cannot read it."""
    try:
        return int(page.get_rotation())
    except pdfium.PdfiumError:
        return 0


def layout_boxes(
    left: np.ndarray,
    bottom: np.ndarray,
    right: np.ndarray,
    top: np.ndarray,
    bbox: list[float] | tuple[float, ...],
    rotation: int,
) -> np.ndarray:
    """Boxes in PDF space as pdftext places its characters: origin at the visible page's top
    left, y down, the page's rotation applied; one (x0, y0, x1, y1) row per box."""
    page_width, page_height = page_size(bbox)
    cx_start = left - bbox[0]
    cx_end = right - bbox[0]
    ty_start = page_height - (bottom - bbox[1])
    ty_end = page_height - (top - bbox[1])
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
    return np.stack([x0, y0, x1, y1], axis=1)


def read_chars(
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
    tp = address(textpage.raw)
    name_buffer = ctypes.create_string_buffer(_FONT_NAME_BYTES)
    flags = ctypes.c_int()
    flags_at = ctypes.addressof(flags)
    fonts: list[dict[str, Any]] = []
    font_ids_by_key: dict[tuple[str, int, float, int], int] = {}
    font_ids_by_object: dict[int, int] = {}
    # (map over the prototypes: no Python frame per call.)
    every = range(n)
    codes = list(map(GET_UNICODE, repeat(tp, n), every))
    code_array = np.array(codes, dtype=np.uint32)
    # Loose boxes straight into one array (FS_RECTF: left, top, right, bottom).
    loose = (ctypes.c_float * (4 * n))()
    loose_at = ctypes.addressof(loose)
    boxes_at = range(loose_at, loose_at + 16 * n, 16)
    found = np.fromiter(map(GET_LOOSE_BOX, repeat(tp, n), every, boxes_at), np.intc, n)
    objects = np.fromiter(map(GET_OBJECT, repeat(tp, n), every), np.uint64, n)
    # Runs of characters of one text object (or of none), each run's font asked once.
    firsts = [0, *(np.flatnonzero(objects[1:] != objects[:-1]) + 1).tolist()]
    run_fonts: list[int] = []
    objectless: int | None = None
    for at, obj in zip(firsts, objects[firsts].tolist(), strict=True):
        if obj:
            font_id = font_ids_by_object.get(obj)
            if font_id is None:
                font_id = _font_id(tp, at, name_buffer, flags, flags_at, fonts, font_ids_by_key)
                font_ids_by_object[obj] = font_id
        else:
            # No text object (a space or line break pdfium generated): pdfium's font info of
            # no object, the same for all (no name nor flags, size 1, weight -1: fpdf_text.cpp
            # FPDFText_GetFontInfo and FPDFText_GetFontWeight, cpdf_textpage.cpp GetFontSize).
            if objectless is None:
                objectless = _font_id(tp, at, name_buffer, flags, flags_at, fonts, font_ids_by_key)
            font_id = objectless
        run_fonts.append(font_id)
    font_ids = np.repeat(np.array(run_fonts, dtype=np.int32), np.diff([*firsts, n]))
    rect = np.frombuffer(loose, dtype=np.float32).reshape(n, 4).astype(np.float64)
    box_l, box_t, box_r, box_b = rect[:, 0], rect[:, 1], rect[:, 2], rect[:, 3]
    angles = _angles(tp, code_array, objects)
    if not found[angles == 0].all():
        raise pdfium.PdfiumError("Failed to get charbox.")
    # Characters at an angle: the tight box, as pdftext asks.
    tight = [ctypes.c_double() for _ in range(4)]
    left_at, bottom_at, right_at, top_at = (ctypes.addressof(v) for v in tight)
    for i in np.flatnonzero(angles != 0).tolist():
        if not GET_BOX(tp, i, left_at, right_at, bottom_at, top_at):  # l, r, b, t
            raise pdfium.PdfiumError("Failed to get charbox.")
        box_l[i], box_b[i], box_r[i], box_t[i] = (v.value for v in tight)
    lone = (code_array >= 0xD800) & (code_array <= 0xDFFF)
    if lone.any():  # a lone surrogate (a broken ToUnicode map) cannot be encoded
        code_array[lone] = 0xFFFD
        codes = code_array.tolist()
    chars = PageChars(
        "".join(map(chr, codes)),
        code_array,
        angles,
        layout_boxes(box_l, box_b, box_r, box_t, bbox, rotation),
        font_ids,
        fonts,
        np.arange(n, dtype=np.int64),
    )
    return chars, objects


def sharing_object(codes: np.ndarray, objects: np.ndarray) -> np.ndarray:
    """Each character's text object where pdfium gives the character that object's matrix
    and font size; 0 where it may not: the spaces pdfium generates between a text object's
    characters (they take the form's matrix) and characters of no object (pdfium's
    core/fpdftext/cpdf_textpage.cpp: GetCharFontSize, ProcessTextObject)."""
    return np.where(codes == ord(" "), 0, objects)


def _angles(tp: int, codes: np.ndarray, objects: np.ndarray) -> np.ndarray:
    """Each character's angle, as pdfium gives it (from the character's matrix), asked once
    per text object that shares it (:func:`sharing_object`); the others one by one."""
    angles = np.empty(len(codes), dtype=np.float64)
    owners_of = sharing_object(codes, objects)
    alone = owners_of == 0
    each = np.flatnonzero(alone)
    angles[each] = np.fromiter(map(GET_ANGLE, repeat(tp, len(each)), each.tolist()), float)
    shared = np.flatnonzero(~alone)
    if len(shared):
        owners = owners_of[shared]
        first = np.empty(len(shared), dtype=bool)
        first[0] = True
        first[1:] = owners[1:] != owners[:-1]
        firsts = shared[first].tolist()
        asked = np.fromiter(map(GET_ANGLE, repeat(tp, len(firsts)), firsts), float)
        angles[shared] = asked[np.cumsum(first) - 1]
    return angles


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
    length = GET_FONT_INFO(tp, index, ctypes.addressof(name_buffer), len(name_buffer), flags_at)
    if length > len(name_buffer):
        name_buffer = ctypes.create_string_buffer(length)
        GET_FONT_INFO(tp, index, ctypes.addressof(name_buffer), length, flags_at)
    name = name_buffer.value.decode("utf-8", errors="replace") if length > 0 else ""
    key = (
        name,
        flags.value if length > 0 else 0,
        GET_FONT_SIZE(tp, index),
        GET_FONT_WEIGHT(tp, index),
    )
    found = ids.get(key)
    if found is None:
        found = ids[key] = len(fonts)
        fonts.append({"name": key[0], "flags": key[1], "size": key[2], "weight": key[3]})
    return found


def deduplicate(chars: PageChars) -> PageChars:
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
    places = np.column_stack(
        [
            np.round(np.minimum.reduceat(boxes[:, 0], word_starts)),
            np.round(np.minimum.reduceat(boxes[:, 1], word_starts)),
            np.round(np.maximum.reduceat(boxes[:, 2], word_starts)),
            np.round(np.maximum.reduceat(boxes[:, 3], word_starts)),
            rotations[word_starts],
            font_ids[word_starts],
        ]
    )
    # Only a word whose place, angle and font another word shares can be dropped; on most
    # pages none does, and the words' texts need not be compared. (Sorted, the words that
    # share them stand next to one another.)
    order = np.lexsort(places.T)
    ordered = places[order]
    same = (ordered[1:] == ordered[:-1]).all(axis=1)
    if not same.any():
        return chars
    shared = np.zeros(len(word_starts), dtype=bool)
    shared[order[1:][same]] = True
    shared[order[:-1][same]] = True
    x0, y0, x1, y1, angles, fonts = places.T.tolist()
    text = chars.text
    seen: set[tuple[float, float, float, float, str, float, float]] = set()
    keep = np.ones(len(word_starts), dtype=bool)
    for w in np.flatnonzero(shared).tolist():
        key = (x0[w], y0[w], x1[w], y1[w], text[word_starts[w] : word_ends[w]], angles[w], fonts[w])
        if key in seen:
            keep[w] = False
        else:
            seen.add(key)
    if keep.all():
        return chars
    return _kept(chars, np.repeat(keep, word_ends - word_starts))


def visible(
    chars: PageChars,
    page: pdfium.PdfPage,
    textpage: pdfium.PdfTextPage,
    objects: PageObjects,
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
    width, height = page_size(page.get_bbox())
    if page_rotation(page) in (90, 270):
        width, height = height, width
    boxes = chars.boxes
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    keep = (cx >= -_EDGE) & (cx <= width + _EDGE) & (cy >= -_EDGE) & (cy <= height + _EDGE)
    hidden = _invisible_chars(chars, textpage, objects.images, text_objects)
    if hidden is not None:
        keep &= ~hidden
    # Line breaks and spaces pdfium generates carry no position worth trusting.
    keep |= np.isin(chars.codes, LAYOUT_CODES)
    return chars if keep.all() else _kept(chars, keep)


def readable(chars: PageChars) -> PageChars:
    """The characters that decode to text.

    Dropped: control codes and private-use code points (the glyphs of a symbol font without a
    Unicode map; the bullets among them stay, lists are told by them), and every character of
    a font whose codes on the page run ``!``, ``"``, ``#`` in the order they are first used: a
    subset font that numbered its glyphs as it met them, whose codes mean nothing as text (the
    labels of a chart come out as ``$!"#``).
    """
    codes = chars.codes
    if not len(codes):
        return chars
    junk = codes < 0x20
    for kept in _KEPT_CONTROLS:
        junk &= codes != kept
    high = codes >= 0x7F
    if high.any():
        private = ((codes >= 0xE000) & (codes <= 0xF8FF)) | (codes >= 0xF0000)
        junk |= high & ((codes <= 0x9F) | private) & ~np.isin(codes, _BULLET_CODES)
    if not (codes == _SEQUENCE[0]).any():
        return _kept(chars, ~junk) if junk.any() else chars
    solid = np.flatnonzero(~junk & ~np.isin(codes, LAYOUT_CODES))
    names: dict[str, int] = {}
    name_of = np.array([names.setdefault(f["name"], len(names)) for f in chars.fonts])
    fonts = name_of[chars.font_ids] if len(name_of) else np.zeros(len(codes), dtype=np.int64)
    firsts, at = np.unique(fonts[solid], return_index=True)
    for font, first in zip(firsts.tolist(), solid[at].tolist(), strict=True):
        if codes[first] != _SEQUENCE[0]:
            continue
        used = codes[solid[fonts[solid] == font][:_SEQUENCE_SEEN]].tolist()
        if list(dict.fromkeys(used))[: len(_SEQUENCE)] == _SEQUENCE:
            junk |= fonts == font
    return _kept(chars, ~junk) if junk.any() else chars


def logical(chars: PageChars) -> PageChars:
    """Text as it is read: accents set as characters of their own composed with their letters
    (:func:`_composed`), and right-to-left text in reading order.

    A lam-alef ligature the text layer gives alef first (two characters of one glyph, the same
    box: a ToUnicode map in drawing order) is lam first, as Unicode decomposes the ligature
    (U+FEFB: lam, alef); pdfium's order is logical otherwise. A Latin letter followed at once
    by an Arabic or Hebrew one ends a word: no word mixes the two scripts that way (an Arabic
    prefix before a Latin word, "وPython", does, and stays), but a right-to-left line set
    with no space after a Latin word ("Pythonمن") reads as two words.
    """
    chars = _composed(chars)
    codes = chars.codes
    if len(codes) < 2 or not ((codes >= 0x590) & (codes <= 0x6FF)).any():
        return chars
    before, after = codes[:-1], codes[1:]
    same_box = (chars.boxes[:-1] == chars.boxes[1:]).all(axis=1)
    swap = np.flatnonzero(np.isin(before, _ALEFS) & (after == _LAM) & same_box)
    if len(swap):
        codes = codes.copy()
        codes[swap], codes[swap + 1] = codes[swap + 1], codes[swap]
    latin = ((before | 0x20) >= 0x61) & ((before | 0x20) <= 0x7A)
    joined = np.flatnonzero(latin & (after >= 0x590) & (after <= 0x6FF) & rtl_letters(after)) + 1
    if not len(swap) and not len(joined):
        return chars
    box = chars.boxes[joined]
    # A space with no ink, where the Arabic letter starts (its right edge), and the pdfium
    # index of the letter before it, which keeps the indexes in order.
    space = np.column_stack([box[:, 2], box[:, 1], box[:, 2], box[:, 1]])
    codes = np.insert(codes, joined, 0x20)
    return PageChars(
        "".join(map(chr, codes.tolist())),
        codes,
        np.insert(chars.rotations, joined, chars.rotations[joined - 1]),
        np.insert(chars.boxes, joined, space, axis=0),
        np.insert(chars.font_ids, joined, chars.font_ids[joined - 1]),
        chars.fonts,
        np.insert(chars.char_indices, joined, chars.char_indices[joined - 1]),
    )


def _composed(chars: PageChars) -> PageChars:
    """A spacing accent drawn on a letter next to it (its centre within the letter's width)
    composed with that letter into one character (NFC), as the reader sees it: "François".

    An accent set beside a letter ("x^2", a grave used as a quote) is not on the letter, and
    stays; so does one that Unicode has no single character for with its letter.
    """
    codes = chars.codes
    found = np.flatnonzero(np.isin(codes, _ACCENT_CODES))
    if not len(found):
        return chars
    boxes, rotations = chars.boxes, chars.rotations
    codes = codes.copy()
    keep = np.ones(len(codes), dtype=bool)
    for i in found.tolist():
        x0, y0, x1, y1 = boxes[i]
        centre = (x0 + x1) / 2
        on = [
            j
            for j in (i - 1, i + 1)
            if 0 <= j < len(codes)
            and keep[j]
            and rotations[j] == rotations[i]
            and boxes[j, 0] <= centre <= boxes[j, 2]
            and boxes[j, 1] < y1
            and y0 < boxes[j, 3]
            and unicodedata.category(chr(codes[j]))[0] == "L"
        ]
        if not on:
            continue
        j = min(on, key=lambda k: abs((boxes[k, 0] + boxes[k, 2]) / 2 - centre))
        letter = chr(codes[j])
        mark = chr(_ACCENT_MARKS[int(codes[i])])
        composed = unicodedata.normalize("NFC", _DOTTED.get(letter, letter) + mark)
        if len(composed) == 1:
            codes[j] = ord(composed)
            keep[i] = False
    if keep.all():
        return chars
    return _kept(
        PageChars("", codes, rotations, boxes, chars.font_ids, chars.fonts, chars.char_indices),
        keep,
    )


def rtl_letters(codes: np.ndarray) -> np.ndarray:
    """Mask of the Hebrew and Arabic letters among right-to-left codes (not their digits,
    marks or punctuation)."""
    hebrew = (codes >= 0x5D0) & (codes <= 0x5EA)
    arabic = ((codes >= 0x620) & (codes <= 0x64A)) | ((codes >= 0x671) & (codes <= 0x6D3))
    return hebrew | arabic


def _kept(chars: PageChars, keep: np.ndarray) -> PageChars:
    """``chars`` where ``keep`` is true."""
    codes = chars.codes[keep]
    return PageChars(
        "".join(map(chr, codes.tolist())),
        codes,
        chars.rotations[keep],
        chars.boxes[keep],
        chars.font_ids[keep],
        chars.fonts,
        chars.char_indices[keep],
    )


def _invisible_chars(
    chars: PageChars,
    textpage: pdfium.PdfTextPage,
    images: list[Placed],
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
    solid = np.flatnonzero(~np.isin(codes, LAYOUT_CODES))
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
            invisible = modes[obj] = GET_RENDER_MODE(obj) == pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
        if not invisible:
            continue
        first = int(chars.char_indices[firsts[k]])
        pdfium_c.FPDFText_GetCharBox(raw, first, left, right, bottom, top)
        x, y = (left.value + right.value) / 2, (bottom.value + top.value) / 2
        if any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1, _ in images):
            continue  # the OCR layer of a scan
        if hidden is None:
            hidden = np.zeros(len(codes), dtype=bool)
        hidden[bounds[k] : bounds[k + 1]] = True
    return hidden
