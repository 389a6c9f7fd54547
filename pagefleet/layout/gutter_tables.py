"""Tables without rules on a page set in two columns, looked for column by column.

The unruled-table finder (:func:`~pagefleet.layout.tables.find_unruled`) groups the whole
page's lines into rows by height. On a page of two columns, a table set in one column takes
the lines of the other column that stand level with its rows as cells (a paper's Table 1 in
the right column, the left column's prose its first column), or is not found at all (its rows
with a line of prose beside them are no table rows); two tables side by side, one a column,
become one table whose rows pair lines that only share a height (mineru's demo3.pdf, pages 5
to 8: 93.0% of its words in order, 97.2% looked for column by column). So each column's lines
are searched alone too, and a table found across the gutter stays only where it spans the
gutter whole: a results table set across both columns, its rows level on both sides.
"""

from __future__ import annotations

from collections.abc import Callable

from pagefleet.layout.schema import Bbox

Found = list[tuple[list[int], list[list[str]]]]


def split_at_gutter(
    boxes: list[Bbox], mid: float, found: Found, find: Callable[[list[int]], Found]
) -> Found:
    """The tables of a page set in two columns parted at ``mid``: those ``found`` across the
    page (tables as indexes of ``boxes`` and rows) that stand in one column or span the
    gutter whole (see :func:`_taken_apart`), then those ``find`` finds among one column's
    lines (indexes in, indexes out) in place of a table taken apart, or beside the other
    column's prose (see :func:`_beside_prose`). ``found`` itself where the lines that no table
    took do not make a column of running text on each side."""
    side_of = [-1 if box[2] <= mid else 1 if box[0] >= mid else 0 for box in boxes]
    tabled = {i for members, _ in found for i in members}
    lo = min(box[0] for box in boxes)
    hi = max(box[2] for box in boxes)
    prose = {
        i
        for i, box in enumerate(boxes)
        if side_of[i] and i not in tabled and box[2] - box[0] >= _COLUMN_WIDTH * (hi - lo)
    }
    if any(sum(1 for i in prose if side_of[i] == side) < _COLUMN_LINES for side in (-1, 1)):
        return found
    by_side = {
        side: find(lines) if len(lines) >= 2 else []
        for side in (-1, 1)
        for lines in [[i for i, s in enumerate(side_of) if s == side]]
    }
    out = [table for table in found if not _taken_apart(boxes, side_of, table[0], by_side)]
    used = {i for members, _ in out for i in members}
    apart = tabled - used
    for side in (-1, 1):
        for members, rows in by_side[side]:
            if used.intersection(members):
                continue
            if apart.intersection(members) or _beside_prose(boxes, side_of, members, prose):
                out.append((members, rows))
                used.update(members)
    return out


# A column of running text: so many lines at least, each this share of the page's text width
# long at least (as segment's _columns_between has it). A gap inside a table on a page of one
# column, or between a form's boxes, has no such columns on its sides.
_COLUMN_LINES = 6
_COLUMN_WIDTH = 0.35


def _beside_prose(
    boxes: list[Bbox], side_of: list[int], members: list[int], prose: set[int]
) -> bool:
    """Whether the other column, level with a table found in one column alone, holds lines
    most of them running text (see :data:`_COLUMN_WIDTH`). A table across the page that the
    page's finder missed (a results table over both columns) makes tables of its halves in
    each column, each beside the other's short cells."""
    side = side_of[members[0]]
    top = min(boxes[i][1] for i in members)
    bottom = max(boxes[i][3] for i in members)
    beside = [
        i
        for i, box in enumerate(boxes)
        if side_of[i] == -side and top < (box[1] + box[3]) / 2 < bottom
    ]
    return bool(beside) and 2 * len(prose.intersection(beside)) > len(beside)


def _taken_apart(
    boxes: list[Bbox], side_of: list[int], members: list[int], by_side: dict[int, Found]
) -> bool:
    """Whether a table across the gutter is lines of two columns: the page goes on in
    columns outside it (lines on both sides above or below it), and its rows do not stand
    level on both sides (see :data:`_LEVEL`), or, level only in part, on one side its lines
    are not what that column's lines alone make tables of: none (prose whose lines stood
    level with a table's rows), or a table going on beyond them (the rest of a table set
    beside another, whose rows stopped levelling)."""
    mine = set(members)
    if not {-1, 1} <= {side_of[i] for i in mine}:
        return False
    top = min(boxes[i][1] for i in mine)
    bottom = max(boxes[i][3] for i in mine)
    outside = {
        side_of[i]
        for i, box in enumerate(boxes)
        if i not in mine and side_of[i] and (box[3] <= top or box[1] >= bottom)
    }
    if outside != {-1, 1}:
        return False
    level = _level_rows(boxes, side_of, mine)
    if level >= _LEVEL:
        return False
    if level < _UNLEVEL:
        return True
    for side, tables in by_side.items():
        own = {i for i in mine if side_of[i] == side}
        alone = {i for table, _ in tables if own.intersection(table) for i in table}
        if alone != own:
            return True
    return False


# A table across the gutter with this share of its rows, on either side, level with a row on
# the other side is one table, whatever each column's lines alone make of it (a results
# table set across a two-column page: mineru's demo3.pdf, page 6, 0.96); under the second
# share it is two things side by side (two tables whose rows are set on different pitches).
_LEVEL = 0.9
_UNLEVEL = 0.5


def _level_rows(boxes: list[Bbox], side_of: list[int], mine: set[int]) -> float:
    """The share of the table's rows, on both sides, with a row of the other side at their
    height (their middles within a fifth of the shorter one's height)."""
    rows = {side: _rows(boxes, [i for i in mine if side_of[i] == side]) for side in (-1, 1)}
    level = sum(
        1
        for side in (-1, 1)
        for a in rows[side]
        if any(
            abs(a[0] + a[1] - b[0] - b[1]) <= 0.4 * min(a[1] - a[0], b[1] - b[0])
            for b in rows[-side]
        )
    )
    return level / (len(rows[-1]) + len(rows[1]))


def _rows(boxes: list[Bbox], idx: list[int]) -> list[tuple[float, float]]:
    """The (top, bottom) of each row of lines (lines overlapping by half a line's height)."""
    out: list[tuple[float, float]] = []
    for i in sorted(idx, key=lambda i: boxes[i][1]):
        y0, y1 = boxes[i][1], boxes[i][3]
        if out and y0 < out[-1][1] - 0.5 * (y1 - y0):
            out[-1] = (min(out[-1][0], y0), max(out[-1][1], y1))
        else:
            out.append((y0, y1))
    return out
