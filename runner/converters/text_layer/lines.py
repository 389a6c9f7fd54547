"""A page's text lines as layout lines: pdftext's spans and lines over the visible characters,
cut where the text jumps a wide gap, each span with its size, weight, slant and link.
"""

from __future__ import annotations

import ctypes
import math
import re
from bisect import bisect_left
from collections import Counter
from itertools import pairwise
from statistics import median
from typing import Any

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import PageChars
from pdftext.pdf.pages import assign_scripts, get_lines, get_spans
from pdftext.postprocessing import postprocess_text
from pdftext.schema import Bbox

from pagefleet.layout.schema import Line, Span
from runner.converters.text_layer.chars import (
    HYPHEN,
    LAYOUT_CODES,
    deduplicate,
    logical,
    read_chars,
    readable,
    rtl_letters,
    sharing_object,
    visible,
)
from runner.converters.text_layer.links import EXTERNAL, merge_links
from runner.converters.text_layer.objects import PageObjects
from runner.converters.text_layer.pdfium_calls import GET_FONT_SIZE, GET_MATRIX, address

_FIXED_PITCH = 1
_ITALIC = 1 << 6
_FORCE_BOLD = 1 << 18
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demi")
_ITALIC_NAMES = ("italic", "oblique")
# Monospaced fonts by name: most embedded fonts leave the fixed-pitch flag unset (TeX's
# typewriter fonts among them).
_MONO_NAMES = re.compile(
    r"mono|courier|consol|cmtt|lmtt|txtt|typewriter|inconsolata|menlo|monaco|andale|"
    r"nimbusmon|lettergothic|fixed|sourcecode|firacode|cascadia|ocr-?[ab]\b|pcrr|ucrr"
)
# A gap this many font sizes wide inside a pdftext line separates two cells or columns.
_CELL_GAP = 2.0
_LAYOUT_CHARS = frozenset(map(chr, LAYOUT_CODES.tolist()))
_ENUMERATOR = re.compile(r"\d{1,3}[.)](?:\s|$)")
# A gap this many characters wide between two words or numbers may part two cells.
_NUMBER_GAP = 2.0
# A dash standing alone in a table's cell is its nil; one before a digit is a sign, as a
# currency's symbol is a number's start (not a parenthesis: an equation's number, "(7)").
_DASHES = np.array([ord(c) for c in "-\u2013\u2014"], dtype=np.uint32)
_NILS = ("-", "\u2013", "\u2014")
_SIGNS = "-\u2013\u2212$\u20ac\u00a3"
# A character is at least this share of the line's height wide, for the gap of two (an "l"
# or an "i" is narrower).
_NARROW = 0.4
# A list's or a section's number, which keeps the word after it (see _wide_gaps).
_SERIAL = re.compile(r"\d{1,3}(?:\.\d{1,3})*\.?")
# Characters further apart than this share of the line's height have a space between them.
_SPACE = 0.2


def text_lines(
    pdf: pdfium.PdfDocument,
    page: pdfium.PdfPage,
    textpage: pdfium.PdfTextPage,
    index: int,
    bbox: list[float],
    rotation: int,
    objects: PageObjects,
) -> tuple[list[Line], PageChars]:
    """The page's text lines, and the visible characters they were made of."""
    chars, text_objects = read_chars(textpage, bbox, rotation)
    sizes = _Sizes(address(textpage.raw), chars.codes, text_objects)
    chars = logical(readable(deduplicate(visible(chars, page, textpage, objects, text_objects))))
    spans = get_spans(chars, superscript_height_threshold=0.7, need_chars=False)
    raw_lines = get_lines(spans)
    assign_scripts(raw_lines, height_threshold=0.7)
    if pdfium_c.FPDFPage_GetAnnotCount(page.raw) > 0:
        merge_links(raw_lines, chars, pdf, page, index, bbox, rotation)
    mono = _Monospaced(chars)
    lines: list[Line] = []
    cuts = _wide_gaps(chars)
    styles: dict[int, tuple[bool, bool]] = {}
    for raw in raw_lines:
        spans = raw["spans"]
        if cuts and _any_cut(spans, cuts):
            spans = [piece for span in spans for piece in _cut_span(span, chars, cuts)]
        for pieces, cut in _pieces(spans):
            line = _line(pieces, sizes, mono, styles)
            if line is not None:
                if len(pieces) == len(raw["spans"]) == len(spans):
                    line["bbox"] = _round_box(raw["bbox"].bbox)
                if cut:
                    line["cut"] = True
                lines.append(line)
    return lines, chars


def _wide_gaps(chars: PageChars) -> list[int]:
    """The pdfium indexes of the upright characters that may start a table's cell: a word or
    a number two characters' width or more from the word or number before it on the same
    line (spaces aside), a table row that the text layer set as one run of text, "Assam
    34.98 34.95", whose cells only the gap tells apart. A table's columns stand that close
    ("47,824,589   9,967,837", "459B   78.7M", a head's "Market cap   Revenue"); running
    text never spaces its words so. A word after a serial or a section's number is no cell
    here: a list's number and its item stand so ("1   Engine particulars", "2.5   Systems";
    a pdftext span's gap still parts them, see :func:`_pieces`). A dash
    standing alone is a number too (a table's nil, "40.45   -   3.26"), and so is a signed
    one ("3.81   -0.10"). Text set back to the left of where the line had come starts a cell
    too (a head's second line, written after the line beside it). None of these cuts is
    final: a piece that no table takes is joined back to its line (a heading's number set
    apart from its title, "SECTION 2   DIESEL ENGINES", stays one line; see
    :func:`_pieces`)."""
    ink = np.flatnonzero(~np.isin(chars.codes, LAYOUT_CODES) & (chars.rotations == 0))
    if len(ink) < 2:
        return []
    boxes = chars.boxes[ink]
    before, after = boxes[:-1], boxes[1:]
    height = np.maximum(before[:, 3] - before[:, 1], after[:, 3] - after[:, 1])
    gap = after[:, 0] - before[:, 2]
    level = np.abs((after[:, 1] + after[:, 3]) - (before[:, 1] + before[:, 3])) < height
    width = (before[:, 2] - before[:, 0] + after[:, 2] - after[:, 0]) / 2
    apart = gap > _NUMBER_GAP * np.maximum(width, _NARROW * height)
    # Set back to the left, on the same level or half a line off (not the next line of a
    # paragraph): another line of a head (see _pieces).
    near = np.abs((after[:, 1] + after[:, 3]) - (before[:, 1] + before[:, 3])) < 2 * height
    back = near & (after[:, 2] < before[:, 0] - _CELL_GAP * np.maximum(0.8 * height, 1.0))
    # (Right-to-left text runs leftwards, word after word, and back to the right at a
    # left-to-right word inside it: no head's lines.)
    codes = chars.codes[ink]
    back &= ~(rtl_letters(codes[:-1]) | rtl_letters(codes[1:]))
    # Whether each character stands apart from the one before it (a space or more, or
    # another line); the first one does.
    spaced = np.ones(len(ink) + 1, dtype=bool)
    spaced[1:-1] = ~level | (gap > _SPACE * height)
    lone = np.isin(chars.codes[ink], _DASHES) & spaced[:-1] & spaced[1:]
    text = chars.text
    found: list[int] = []
    for j in np.flatnonzero((level & apart) | back).tolist():
        a, b = text[ink[j]], text[ink[j + 1]]
        # After a word, a number or a dot leader only ("breastfed ....... 76.9": an
        # indicator's values; a contents page's entry is too long a cell for a table): an
        # equation's number ("... = 0,    (1)") belongs to its line.
        leader = a == "." and j > 0 and text[ink[j - 1]] == "."
        if not (a.isalnum() or a in "%)" or lone[j] or leader):
            continue
        if a.isdigit() and b.isalpha() and _serial(j, spaced, text, ink):
            continue  # a list's number and its item, see above
        if (
            b.isalnum()
            or lone[j + 1]
            or (
                b in _SIGNS
                and j + 2 < len(ink)
                and text[ink[j + 2]].isdigit()
                and not spaced[j + 2]
            )
        ):
            found.append(int(chars.char_indices[ink[j + 1]]))
    return found


def _serial(j: int, spaced: np.ndarray, text: str, ink: np.ndarray) -> bool:
    """Whether the word that ink character ``j`` ends is a serial or a section's number ("12",
    "2.5.4"; ``spaced``: whether each ink character stands apart from the one before)."""
    k = j
    while k > 0 and not spaced[k]:
        k -= 1
    return bool(_SERIAL.fullmatch("".join(text[i] for i in ink[k : j + 1].tolist())))


def _any_cut(spans: list[dict[str, Any]], cuts: list[int]) -> bool:
    """Whether :func:`_cut_span` may cut one of ``spans``: most lines hold no cut, and asking
    once per line costs less than once per span."""
    first = min(span["char_start_idx"] for span in spans)
    last = max(span["char_end_idx"] for span in spans)
    at = bisect_left(cuts, first + 1)
    return at < len(cuts) and cuts[at] <= last


def _cut_span(span: dict[str, Any], chars: PageChars, cuts: list[int]) -> list[dict[str, Any]]:
    """``span`` cut before each of its characters in ``cuts`` (see :func:`_wide_gaps`)."""
    first, last = span["char_start_idx"], span["char_end_idx"]
    at = bisect_left(cuts, first + 1)
    if at == len(cuts) or cuts[at] > last:
        return [span]
    start = int(np.searchsorted(chars.char_indices, first))
    text = span["text"]
    if chars.text[start : start + len(text)] != text:
        return [span]  # text that a link cut or changed: left as it is
    indices = chars.char_indices[start : start + len(text)].tolist()
    inside = set(cuts[at : bisect_left(cuts, last + 1)])
    # (Not before an enumerator: "1. 49 in   2. 56 in" are choices in a row, not cells.)
    bounds = [
        0,
        *(k for k, i in enumerate(indices) if i in inside and not _ENUMERATOR.match(text, k)),
        len(text),
    ]
    if len(bounds) == 2:
        return [span]
    # Plain floats: numpy's are slow to round, and a layout box is rounded.
    boxes = chars.boxes[start : start + len(text)].tolist()
    pieces: list[dict[str, Any]] = []
    for a, b in pairwise(bounds):
        ink = [boxes[k] for k in range(a, b) if text[k] not in _LAYOUT_CHARS]
        if not ink:
            continue
        piece = dict(span)
        piece["text"] = text[a:b]
        x0s, y0s, x1s, y1s = zip(*ink, strict=True)
        piece["bbox"] = Bbox([min(x0s), min(y0s), max(x1s), max(y1s)])
        piece["char_start_idx"] = indices[a]
        piece["char_end_idx"] = indices[b - 1]
        if pieces:
            piece["cut"] = True  # cut inside the run: see _pieces
        pieces.append(piece)
    return pieces


def _pieces(spans: list[dict[str, Any]]) -> list[tuple[list[dict[str, Any]], bool]]:
    """A pdftext line cut where its text jumps a wide gap: cells of a table without rules, or
    a form's label and the label of the column beside it, are lines of their own.

    Each piece comes with whether only a cut for a table parted it from the piece before: one
    inside a run of text (see :func:`_wide_gaps`), or a gap of two characters' width.
    Such a piece is a line of its own only for a table to take as a cell; where none does,
    the segmenter reads it back as one line with the piece before it (a label and its value
    after a dot leader, a row of numbers too loose for a table)."""
    out: list[tuple[list[dict[str, Any]], bool]] = [([], False)]
    reach: float | None = None
    start = 0.0
    last = ""
    for span in spans:
        x0, y0, x1, y1 = span["bbox"].bbox
        text = span["text"].strip()
        if text:
            # The box's height, not the font size: many producers set size 1 and scale.
            size = 0.8 * (y1 - y0)
            wide = _CELL_GAP * max(size, 1.0)
            if (
                last
                and (last[-1].isalnum() or last[-1] in "%)" or last in _NILS)
                and (text[0].isalnum() or text[0] in _SIGNS or text in _NILS)
                and not (_SERIAL.fullmatch(last.split()[-1]) and text[0].isalpha())
            ):
                # Two words or numbers two characters' width apart, not a serial number
                # and its item (see _wide_gaps).
                wide = min(wide, _NUMBER_GAP * max((x1 - x0) / len(text), _NARROW * (y1 - y0)))
            if reach is not None and x1 < start - wide:
                # Set back to the left of the span before: the next line of a head (its
                # other cells come after it, each at its gap).
                out.append(([], bool(span.get("cut"))))
                reach = None
            elif reach is not None and (span.get("cut") or x0 - reach > wide):
                cut = bool(span.get("cut")) or x0 - reach <= _CELL_GAP * max(size, 1.0)
                out.append(([], cut))
            reach = x1 if reach is None else max(reach, x1)
            start = x0
            last = text
        out[-1][0].append(span)
    return out


def _line(
    raw_spans: list[dict[str, Any]],
    sizes: _Sizes,
    mono: _Monospaced,
    styles: dict[int, tuple[bool, bool]],
) -> Line | None:
    out_spans: list[Span] = []
    soft_hyphen = False
    boxes = []
    for raw_span in raw_spans:
        text = raw_span["text"]
        monospaced = raw_span["font"] in mono
        if monospaced:
            text = mono.spaced(text, raw_span["char_start_idx"])
        if not (text.isascii() and text.isprintable()):
            # (Printable ASCII is what postprocess_text leaves as it is: it changes only
            # line breaks, tabs, control codes and characters beyond ASCII.)
            text = postprocess_text(text)
        if HYPHEN in text:
            soft_hyphen = text.rstrip().endswith(HYPHEN)
            text = text.replace(HYPHEN, "-")
        text = text.replace("\n", " ")
        if not text:
            continue
        if not text.strip():
            if out_spans:
                out_spans[-1]["t"] += text  # what _append does with blank text
                continue
        else:
            boxes.append(raw_span["bbox"].bbox)
        _append(out_spans, _span(text, raw_span, sizes, monospaced, styles))
    while out_spans and not out_spans[-1]["t"].strip():
        out_spans.pop()
    if not out_spans:
        return None
    out_spans[-1]["t"] = out_spans[-1]["t"].rstrip()
    if not out_spans[0].get("m"):
        # Spaces that open a line of code are its indent, inside the line's box.
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


def _span(
    text: str,
    raw: dict[str, Any],
    sizes: _Sizes,
    monospaced: bool,
    styles: dict[int, tuple[bool, bool]],
) -> Span:
    """``raw`` as a layout span, set in a ``monospaced`` font or not, its size read through
    ``sizes``; ``styles``: the page's fonts' weight and slant by font dict (see
    :func:`_style`)."""
    font = raw["font"]
    start, end = raw["char_start_idx"], raw["char_end_idx"]
    size = font["size"] * sizes.scale(start)
    last = sizes.size(end) if end > start else 0.0
    if last > 1.05 * size:
        # A superscript that opens the span (a footnote's number) in the span's font: the
        # size of most of its characters, not of its first. (Only a first character smaller
        # than the last: small capitals after a full-size one keep the first one's size.)
        counts = Counter(round(sizes.size(i), 1) for i in range(start, end + 1))
        del counts[0.0]
        size = max(counts, key=lambda k: (counts[k], k))
    span: Span = {"t": text, "s": round(size, 1)}
    if not text.strip():
        return span
    style = styles.get(id(font))
    if style is None:
        style = styles[id(font)] = _style(font)
    bold, italic = style
    if bold:
        span["b"] = True
    if italic:
        span["i"] = True
    if monospaced:
        span["m"] = True
    url = raw.get("url") or ""
    if url.startswith(EXTERNAL):
        span["u"] = url
    return span


def _style(font: dict[str, Any]) -> tuple[bool, bool]:
    """Whether ``font`` (a pdftext font dict) is bold, and whether it is italic. A page's spans
    hold its few font dicts themselves, so this is asked once per font and page."""
    name = font["name"].lower()
    flags = font["flags"] or 0
    bold = font["weight"] >= 600 or flags & _FORCE_BOLD or any(n in name for n in _BOLD_NAMES)
    return bool(bold), bool(flags & _ITALIC or any(n in name for n in _ITALIC_NAMES))


def _is_mono(font: dict[str, Any]) -> bool:
    return bool((font["flags"] or 0) & _FIXED_PITCH or _MONO_NAMES.search(font["name"].lower()))


class _Monospaced:
    """A page's monospaced fonts, and where its characters start: read from its
    :class:`PageChars` once, as many spans a page ask."""

    def __init__(self, chars: PageChars) -> None:
        # pdftext's spans hold the font dicts of ``chars.fonts`` themselves.
        self.fonts = {id(font) for font in chars.fonts if _is_mono(font)}
        self.text = chars.text
        self.indices = chars.char_indices.tolist() if self.fonts else []
        self.starts = chars.boxes[:, 0].tolist() if self.fonts else []

    def __contains__(self, font: object) -> bool:
        return id(font) in self.fonts

    def spaced(self, text: str, start: int) -> str:
        """A monospaced span's text with as many spaces as its gaps are characters wide:
        pdfium writes one space for any gap, and a listing's indents and columns are in those
        widths. ``start`` is the span's first character in the text page."""
        if " " not in text:
            return text
        at = bisect_left(self.indices, start)
        if self.text[at : at + len(text)] != text:
            return text
        solid = [k for k, c in enumerate(text) if c not in _LAYOUT_CHARS]
        xs = self.starts
        steps = [xs[at + b] - xs[at + a] for a, b in pairwise(solid) if b == a + 1]
        advance = median(steps) if steps else 0.0
        if advance <= 0:
            return text
        lead = text[: solid[0]]
        if lead and not lead.strip(" "):  # pdfium writes one space for an indent too
            lead = " " * max(round((xs[at + solid[0]] - xs[at]) / advance), 1)
        out = [lead + text[solid[0]]]
        for a, b in pairwise(solid):
            between = text[a + 1 : b]
            if between and not between.strip(" "):
                between = " " * max(round((xs[at + b] - xs[at + a]) / advance) - 1, 1)
            out.append(between + text[b])
        out.append(text[solid[-1] + 1 :])
        return "".join(out)


class _Sizes:
    """The font size and the text matrix's scale of a text page's characters (many producers
    set the font size to 1 and scale with the matrix instead), asked of pdfium once per text
    object for the characters that share its matrix and size (:func:`.chars.sharing_object`)."""

    def __init__(self, tp: int, codes: np.ndarray, objects: np.ndarray) -> None:
        """``tp``: the text page's address; ``codes`` and ``objects``: each character's code and
        text object (0 for none) by pdfium index."""
        self.tp = tp
        self.matrix = pdfium_c.FS_MATRIX()
        self.matrix_at = ctypes.addressof(self.matrix)
        self.objects = sharing_object(codes, objects).tolist()
        self.scales: dict[int, float] = {}
        self.sizes: dict[int, float] = {}

    def scale(self, index: int) -> float:
        """The text matrix's scale at character ``index``."""
        obj = self.objects[index]
        if not obj:
            return self._scale(index)
        found = self.scales.get(obj)
        if found is None:
            found = self.scales[obj] = self._scale(index)
        return found

    def size(self, index: int) -> float:
        """Character ``index``'s font size, scaled."""
        obj = self.objects[index]
        if not obj:
            return float(GET_FONT_SIZE(self.tp, index)) * self._scale(index)
        found = self.sizes.get(obj)
        if found is None:
            found = self.sizes[obj] = float(GET_FONT_SIZE(self.tp, index)) * self.scale(index)
        return found

    def _scale(self, index: int) -> float:
        if GET_MATRIX(self.tp, index, self.matrix_at):
            m = self.matrix
            return math.sqrt(abs(m.a * m.d - m.b * m.c))
        return 1.0


def _append(spans: list[Span], span: Span) -> None:
    """Merge runs that render alike, so how pdfium cut them cannot show in the layout."""
    if spans:
        last = spans[-1]
        if not span["t"].strip() and "u" not in span:
            last["t"] += span["t"]
            return
        # (Alike but for their text: the same keys and values, "t" aside.)
        if last.keys() == span.keys() and all(
            last.get(k) == v for k, v in span.items() if k != "t"
        ):
            last["t"] += span["t"]
            return
    spans.append(span)


def _round_box(box: list[float]) -> list[float]:
    return [round(v, 1) for v in box]
