"""Which tables without rules a page keeps: those :mod:`.tables` finds, looked for again in each
column where one took lines from two (:mod:`.gutter_tables`), less a listing's columns, lists
side by side and an index's entries that merely level across a gutter.
"""

from __future__ import annotations

import re
from statistics import median

from pagefleet.layout.columns import find_gutter
from pagefleet.layout.gutter_tables import split_at_gutter
from pagefleet.layout.lines import BULLETS, line_size, line_text
from pagefleet.layout.schema import Bbox, Line
from pagefleet.layout.tables import find_unruled, numeric


def unruled_tables(
    lines: list[Line], free: list[int], code: set[int]
) -> list[tuple[set[int], list[list[str]]]]:
    """The tables without rules among the lines ``free`` (indexes of ``lines``): the indexes
    of each one's lines, and its rows; not a listing's columns (all its lines ``code``, not
    figures: a page set all in a monospaced font), nor an index's entries in two columns
    (see :func:`_across_columns`), nor lists side by side (see :func:`_bulleted`)."""
    boxes = [lines[i]["bbox"] for i in free]
    found: list[tuple[set[int], list[list[str]]]] = []
    for table_lines, rows in _found_in_columns(
        boxes, [line_text(lines[i]) for i in free], [line_size(lines[i]) for i in free]
    ):
        members = {free[k] for k in table_lines}
        if (members <= code and not numeric(rows)) or _bulleted(rows):
            continue
        if not _across_columns(boxes, table_lines, len(rows[0])):
            found.append((members, rows))
    return found


def _found_in_columns(
    boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> list[tuple[list[int], list[list[str]]]]:
    """The page's tables without rules, those that took lines from two columns looked for
    again in each column alone (see :mod:`~pagefleet.layout.gutter_tables`)."""
    found = find_unruled(boxes, texts, sizes)
    gutter = find_gutter(boxes, list(range(len(boxes)))) if len(boxes) >= 4 else None
    if gutter is None:
        return found

    def find(idx: list[int]) -> list[tuple[list[int], list[list[str]]]]:
        some = find_unruled(
            [boxes[i] for i in idx], [texts[i] for i in idx], [sizes[i] for i in idx]
        )
        return [([idx[k] for k in members], rows) for members, rows in some]

    return split_at_gutter(boxes, (gutter[0] + gutter[1]) / 2, found, find)


_BULLETED = re.compile(rf"^\s*[{re.escape(BULLETS)}]\s+\S")


def _bulleted(rows: list[list[str]]) -> bool:
    """Whether a table's body is bulleted items in every column: lists side by side (a
    slide's boxes, a page of two lists), each read down, not rows read across."""
    body = rows[1:]
    if len(body) < 2:
        return False
    return all(
        any(columns) and all(_BULLETED.match(cell) for cell in columns if cell.strip())
        for columns in zip(*body, strict=False)
    )


def _across_columns(boxes: list[Bbox], table: list[int], columns: int) -> bool:
    """Whether a two-column table is rows of two columns of text side by side (an index, a
    list in two columns, whose entries happen to level): a gutter divides the page's lines
    between its columns, on either side the table holds less than half the lines, and the
    other lines on each side start where the table's column starts (or indented a little)."""
    if columns != 2 or len(boxes) < 8:
        return False
    gutter = find_gutter(boxes, list(range(len(boxes))))
    if gutter is None:
        return False
    mid = (gutter[0] + gutter[1]) / 2
    inside = set(table)
    for left_side in (True, False):
        side = [i for i, b in enumerate(boxes) if ((b[0] + b[2]) / 2 < mid) is left_side]
        mine = [i for i in side if i in inside]
        others = [i for i in side if i not in inside]
        if not mine or 2 * len(mine) >= len(side):
            return False
        start = min(boxes[i][0] for i in mine)
        unit = median(boxes[i][3] - boxes[i][1] for i in side)
        aligned = sum(1 for i in others if start - 2 <= boxes[i][0] <= start + 3 * unit)
        if 5 * aligned < 4 * len(others):
            return False
    return True
