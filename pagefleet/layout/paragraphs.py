"""Paragraphs: one region's lines cut into blocks at vertical gaps, changes of size or weight,
list items and titles, and whether a block carries on the paragraph of the block before it
across a column or page break.
"""

from __future__ import annotations

import re
from itertools import pairwise
from statistics import median

from pagefleet.layout.lines import (
    CAPTION,
    LIST_MARKER,
    is_bold,
    labelled,
    line_head,
    line_size,
    line_text,
)
from pagefleet.layout.schema import Bbox, Line, TextBlock


def _merge(block: TextBlock, other: TextBlock) -> None:
    block["lines"].extend(other["lines"])
    a, b = block["bbox"], other["bbox"]
    block["bbox"] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]


def paragraphs(region: list[Line]) -> list[TextBlock]:
    """Split one region's lines into blocks at vertical gaps, style changes and list markers."""
    if not region:
        return []
    gaps = [b["bbox"][1] - a["bbox"][3] for a, b in pairwise(region)]
    usual_gap = median(gaps) if gaps else 0.0
    left = min(line["bbox"][0] for line in region)
    right = max(line["bbox"][2] for line in region)
    letters = _lettered(region)
    blocks: list[TextBlock] = []
    prev: Line | None = None
    for line, gap in zip(region, [None, *gaps], strict=True):
        if (
            prev is None
            or gap is None
            or _breaks(prev, line, gap, usual_gap, left, right, blocks, letters)
        ):
            blocks.append({"bbox": list(line["bbox"]), "lines": [line]})
        else:
            _merge(blocks[-1], {"bbox": line["bbox"], "lines": [line]})
        prev = line
    return blocks


# A letter or roman numeral before "." or ")", perhaps after "(": a list marker only where
# the region's lines start with its neighbours too (see _is_item).
_LETTER = re.compile(r"^\s*(\(?)([a-zA-Z]|[ivxIVX]{2,5})([.)])(?:\s+|$)")
_ROMAN_NEIGHBOURS = {"i": ("ii",), "v": ("iv", "vi"), "x": ("ix", "xi")}


def _lettered(region: list[Line]) -> set[tuple[str, str, str]]:
    """The letter markers the region's lines start with: (opening, letter, closing)."""
    found = set()
    for line in region:
        m = _LETTER.match(line_head(line))
        if m:
            found.add((m.group(1), m.group(2), m.group(3)))
    return found


def _is_item(text: str, letters: set[tuple[str, str, str]]) -> bool:
    """Whether a line starts a list item. A single letter ("a)", "(b)", "A.") is a list's
    marker only beside the letter before or after it in the same style at another line's
    start: a sentence that names "(b)" where a line wraps, or a person's initial ("A. Smith")
    starting a line, is no list."""
    if not LIST_MARKER.match(text):
        return False
    m = _LETTER.match(text)
    if m is None or len(m.group(2)) > 1:
        return True
    opening, letter, closing = m.groups()
    lower = letter.lower()
    near = [chr(ord(letter) - 1), chr(ord(letter) + 1)]
    near += [n if letter == lower else n.upper() for n in _ROMAN_NEIGHBOURS.get(lower, ())]
    return any((opening, n, closing) in letters for n in near)


def _breaks(
    prev: Line,
    line: Line,
    gap: float,
    usual_gap: float,
    left: float,
    right: float,
    blocks: list[TextBlock],
    letters: set[tuple[str, str, str]],
) -> bool:
    size, prev_size = line_size(line), line_size(prev)
    height = line["bbox"][3] - line["bbox"][1]
    if gap > max(usual_gap, 0.0) + 0.45 * max(height, 1.0) or gap < -0.5 * height:
        return True
    if abs(size - prev_size) > 0.1 * max(size, prev_size):
        return True
    if is_bold(line) != is_bold(prev):
        return True
    text = line_text(line)
    if _is_item(text, letters):
        return True
    first = blocks[-1]["lines"][0]
    in_list = _is_item(line_text(first), letters)
    # An indented first line starts a paragraph, unless it is a list item's hanging indent.
    if (
        not in_list
        and line["bbox"][0] > prev["bbox"][0] + 1.2 * size
        and len(blocks[-1]["lines"]) > 1
    ):
        return True
    # A short line that ends a sentence ends its paragraph.
    prev_text = line_text(prev).rstrip()
    short = prev["bbox"][2] < right - 0.15 * (right - left)
    if short and prev_text.endswith((".", ":", "!", "?")) and (right - left) > 20 * size:
        return True
    # An entry's title stands by itself over the entry's text (see labelled).
    if short and len(blocks[-1]["lines"]) == 1 and labelled(prev) and not labelled(line):
        return True
    # A line set centred by itself, then text from the left edge: a title in the body's type
    # ("II. OBSERVATIONS"), not the first line of the paragraph under it.
    return (
        short
        and len(blocks[-1]["lines"]) == 1
        and _centred(prev["bbox"], left, right)
        and line["bbox"][0] < prev["bbox"][0] - 2 * size
        and not prev_text.endswith((",", "-"))
    )


def _centred(box: Bbox, left: float, right: float) -> bool:
    """Whether ``box`` stands in the middle of ``left``..``right``, well in from both."""
    width = right - left
    inset, outset = box[0] - left, right - box[2]
    return min(inset, outset) > 0.15 * width and abs(inset - outset) < 0.05 * width


_TERMINAL = (".", "!", "?", ":", ";", '"', "”", ")", "]")


def continues(prev: TextBlock, nxt: TextBlock) -> bool:
    """Whether ``nxt`` carries on the paragraph ``prev`` across a column or page break."""
    prev_line, next_line = prev["lines"][-1], nxt["lines"][0]
    tail = line_text(prev_line).rstrip()
    head = line_text(next_line).lstrip()
    if not tail or not head or LIST_MARKER.match(head) or CAPTION.match(head):
        return False
    size, next_size = line_size(prev_line), line_size(next_line)
    if abs(size - next_size) > 0.1 * max(size, next_size) or is_bold(next_line):
        return False
    if tail.endswith("-") or head[0].islower():
        return True
    return not tail.endswith(_TERMINAL) and len(prev["lines"]) > 1
