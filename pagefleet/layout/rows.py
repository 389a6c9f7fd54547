"""Pieces of one row joined back into one line: the text layer writes a line in several pieces
(at a wide gap, a combining mark, a heading's number set at a tab stop before its title, a
table's cut), which the reading order would otherwise take for lines of their own.
"""

from __future__ import annotations

import re
import unicodedata

from pagefleet.layout.lines import is_bold, line_size, line_text
from pagefleet.layout.schema import Line, Span


def merge_rows(lines: list[Line]) -> list[Line]:
    """Join consecutive pieces of one visual line that the PDF wrote as separate lines."""
    out: list[Line] = []
    for line in lines:
        if out and _same_row(out[-1], line):
            out[-1] = join_piece(out[-1], line)
        else:
            out.append(line)
    return out


def join_piece(prev: Line, line: Line) -> Line:
    """One line of ``prev`` and the piece ``line`` right of it."""
    gap = line["bbox"][0] - prev["bbox"][2]
    spans: list[Span] = [Span(**s) for s in line["spans"]]  # copies: the input stays
    if (
        spans
        and prev["spans"]
        and gap > 0.15 * line_size(line)
        and not prev["spans"][-1]["t"].endswith(" ")
    ):
        spans[0]["t"] = " " + spans[0]["t"]
    a, b = prev["bbox"], line["bbox"]
    merged: Line = {
        "bbox": [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])],
        "spans": prev["spans"] + spans,
    }
    if line.get("hy"):
        merged["hy"] = True
    if prev.get("cut"):
        merged["cut"] = True
    return merged


# A section's number alone ("1.", "2.3", "A.", "IV."; not "0.46"), and how far (in sizes) its
# title, led by a letter, may stand from it on the row.
_SECTION_NUMBER = re.compile(r"^\s*(?:[1-9]\d?(?:\.\d{1,2})*\.?|[A-Z]\.|[IVX]{1,4}\.)\s*$")
_TAB_STOP = 6.0


def _same_row(a: Line, b: Line) -> bool:
    (_, ay0, ax1, ay1), (bx0, by0, _, by1) = a["bbox"], b["bbox"]
    overlap = min(ay1, by1) - max(ay0, by0)
    if overlap < 0.6 * min(ay1 - ay0, by1 - by0):
        return False  # (first: most lines are on rows of their own, and this test is cheap)
    gap = bx0 - ax1
    size = line_size(b)
    # A combining mark (a Thai vowel or tone above its consonant) overlaps the letter it
    # sits on; the text layer may cut the line before or after it.
    least = -size if _marked(line_text(a)[-1:]) or _marked(line_text(b)[:1]) else -1.0
    if gap < least:
        return False
    # A heading's number set at a tab stop before its title, which is bolder or larger.
    return gap <= size or (
        gap <= _TAB_STOP * size
        and bool(_SECTION_NUMBER.match(line_text(a)))
        and line_text(b)[:1].isalpha()
        and (is_bold(b) > is_bold(a) or size > 1.1 * line_size(a))
    )


def _marked(char: str) -> bool:
    return bool(char) and unicodedata.category(char).startswith("M")


def rejoined(lines: list[Line], cut: list[bool], taken: set[int]) -> list[tuple[Line, list[int]]]:
    """The lines not ``taken``, each piece that was ``cut`` from the line before it (see
    :class:`~pagefleet.layout.schema.Line`) joined back to it where no table or figure took
    either: a label and its value after a dot leader, a row of numbers whose labels are too
    long for a table's cells, read in the order the text layer set them, not as loose cells
    that the reading order would put in columns of their own. Each line comes with the
    indexes of the lines it was joined from."""
    out: list[tuple[Line, list[int]]] = []
    last = -1
    for i, line in enumerate(lines):
        if i in taken:
            continue
        if cut[i] and last == i - 1 and _beside(out[-1][0], line):
            out[-1] = (join_piece(out[-1][0], line), [*out[-1][1], i])
        else:
            out.append((line, [i]))
        last = i
    return out


def _beside(a: Line, b: Line) -> bool:
    """Whether ``b`` stands right of ``a`` on its row (an earlier filter may have dropped the
    piece ``b`` was cut from, leaving the line before that one)."""
    (_, ay0, ax1, ay1), (bx0, by0, _, by1) = a["bbox"], b["bbox"]
    return bx0 >= ax1 and min(ay1, by1) - max(ay0, by0) >= 0.6 * min(ay1 - ay0, by1 - by0)
