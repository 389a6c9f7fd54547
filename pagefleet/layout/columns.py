"""Columns: the gutter between two columns of lines, the bands a page's lines fall into at
horizontal gaps, and the pieces of a line cut at a narrow gutter. The reading order, the
mind-map trees and the tables without rules all look for columns the same way.
"""

from __future__ import annotations

from itertools import pairwise
from statistics import median

from pagefleet.layout.schema import Bbox

_COLUMN_LINES = 6


def columns_between(boxes: list[Bbox], idx: list[int]) -> list[list[int]] | None:
    """The lines above a stretch of columns, the columns' lines and those below, where lines
    across the page run on into and out of the columns with no gap to make the columns a band
    of their own (a scanned flyer: its introduction, two columns, a list under them), too many
    crossing lines for :func:`find_gutter`; None where no stretch of lines narrower than the page's
    text shows a gutter."""
    if len(idx) < 8:
        return None
    order = sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0]))
    lo = min(boxes[i][0] for i in idx)
    hi = max(boxes[i][2] for i in idx)
    narrow = [boxes[i][2] - boxes[i][0] < 0.6 * (hi - lo) for i in order]
    best, start = (0, 0), 0
    for k, (was, now) in enumerate(pairwise([False, *narrow, False])):
        if now and not was:
            start = k
        elif was and not now and k - start > best[1] - best[0]:
            best = (start, k)
    a, b = best
    # Two lines a side at least, and fewer lines than the whole (whose gutter was looked for).
    gutter = find_gutter(boxes, order[a:b]) if 4 <= b - a < len(order) else None
    if gutter is None:
        return None
    # The columns stand between the first line of the lower-starting side and the last of the
    # higher-ending one: a short line above or below them (a heading under the columns) is not
    # of a column.
    mid = (gutter[0] + gutter[1]) / 2
    sides = (
        [i for i in order[a:b] if boxes[i][2] <= mid],
        [i for i in order[a:b] if boxes[i][0] >= mid],
    )
    # Columns of running text: lines enough a side, most of them a good share of the page's
    # width (not a formula and its number, nor a table's labels and figures).
    if any(
        len(side) < _COLUMN_LINES
        or median(boxes[i][2] - boxes[i][0] for i in side) < 0.35 * (hi - lo)
        for side in sides
    ):
        return None
    top = max(min(boxes[i][1] for i in side) for side in sides)
    bottom = min(max(boxes[i][3] for i in side) for side in sides)
    while a < b and boxes[order[a]][3] <= top:
        a += 1
    while b > a and boxes[order[b - 1]][1] >= bottom:
        b -= 1
    if b - a < 4 or find_gutter(boxes, order[a:b]) is None:
        return None
    return [part for part in (order[:a], order[a:b], order[b:]) if part]


def pieces_across(boxes: list[Bbox], idx: list[int], g0: float, g1: float) -> dict[int, int]:
    """Left piece -> right piece of lines cut at a narrow gutter (g0, g1): level (overlapping
    by most of their height), of one height, and closer than a gutter may be."""
    unit = median(boxes[i][3] - boxes[i][1] for i in idx)
    floor = _wide_gutter(unit)
    if g1 - g0 >= floor:
        return {}
    left = sorted((i for i in idx if g0 - floor < boxes[i][2] <= g1), key=lambda i: boxes[i][1])
    right = [i for i in idx if g0 <= boxes[i][0] < g1 + floor]
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for i in left:
        a = boxes[i]
        for j in right:
            b = boxes[j]
            if j in taken or not 0 <= b[0] - a[2] < floor:
                continue
            ha, hb = a[3] - a[1], b[3] - b[1]
            level = min(a[3], b[3]) - max(a[1], b[1]) >= 0.6 * min(ha, hb)
            if level and not _differ(ha, hb):
                pairs[i] = j
                taken.add(j)
                break
    return pairs


def cut_bands(boxes: list[Bbox], idx: list[int]) -> list[list[int]]:
    """``idx`` cut at every horizontal gap wider than a line's height."""
    order = sorted(idx, key=lambda i: boxes[i][1])
    unit = median(boxes[i][3] - boxes[i][1] for i in idx)
    bands = [[order[0]]]
    reach = boxes[order[0]][3]
    for i in order[1:]:
        if boxes[i][1] - reach > 0.8 * unit:
            bands.append([])
        bands[-1].append(i)
        reach = max(reach, boxes[i][3])
    return bands


def find_gutter(boxes: list[Bbox], idx: list[int]) -> tuple[float, float, bool] | None:
    """The widest nearly-uncrossed vertical band in the middle of the lines, if columns, and
    whether it is a narrow gap between columns of prose (see :func:`_prose`)."""
    lo = min(boxes[i][0] for i in idx)
    hi = max(boxes[i][2] for i in idx)
    span = hi - lo
    unit = median(boxes[i][3] - boxes[i][1] for i in idx)
    allowed = int(0.08 * len(idx))
    events = sorted([(boxes[i][0], 1) for i in idx] + [(boxes[i][2], -1) for i in idx])
    runs: list[tuple[float, float]] = []
    depth, run_start = 0, None
    for x, step in events:
        if depth <= allowed < depth + step and run_start is not None:
            runs.append((run_start, x))
            run_start = None
        depth += step
        if depth <= allowed and run_start is None:
            run_start = x
    window = (lo + 0.2 * span, lo + 0.8 * span)
    clipped = [(max(a, window[0]), min(b, window[1])) for a, b in runs]
    for g0, g1 in sorted(clipped, key=lambda r: r[0] - r[1]):
        if g1 - g0 < max(_NARROW * unit, 2.0):
            break
        left = [i for i in idx if boxes[i][2] <= g1 and boxes[i][0] < g0]
        right = [i for i in idx if boxes[i][0] >= g0 and boxes[i][2] > g1]
        if not _column(boxes, left, unit) or not _column(boxes, right, unit):
            continue
        top = max(min(boxes[i][1] for i in left), min(boxes[i][1] for i in right))
        bottom = min(max(boxes[i][3] for i in left), max(boxes[i][3] for i in right))
        if bottom - top < 2 * unit:  # the two sides do not stand side by side
            continue
        if g1 - g0 >= _wide_gutter(unit) or _sizes_differ(boxes, left, right):
            return g0, g1, False
        if _prose(boxes, left, right, unit):
            return g0, g1, True
    return None


def _column(boxes: list[Bbox], side: list[int], unit: float) -> bool:
    """Whether one side of a gap can be a column: two lines at least, or one box two lines
    tall (a table or a figure standing in for its lines: a ruled table filling a column)."""
    return len(side) >= 2 or (len(side) == 1 and boxes[side[0]][3] - boxes[side[0]][1] >= 2 * unit)


# A column of running text: most of its lines this many line heights long at least, some 45
# characters (a table's cells that hold paragraphs, a form's labels and values, a list's
# short items are shorter).
_MEASURE = 18.0


def _prose(boxes: list[Bbox], left: list[int], right: list[int], unit: float) -> bool:
    """Whether both sides of a narrow gap are single columns of running text, three lines at
    least each, most of them a full measure long and starting at the column's edge (indents
    aside): a journal's or a newsletter's columns set close, which read column by column
    whatever the gap. A table's columns of paragraphs are shorter, and more than one stand
    on a side of any gap between them."""
    for side in (left, right):
        if len(side) < 3 or median(boxes[i][2] - boxes[i][0] for i in side) < _MEASURE * unit:
            return False
        edge = min(boxes[i][0] for i in side)
        if 5 * sum(1 for i in side if boxes[i][0] > edge + 2 * unit) > len(side):
            return False
    return True


# A gap narrower than a line's height is a gutter only between text of different sizes and
# leading: the captions beside an illustration set a few points short of the body text's
# column (an illustrated book, a scan's OCR layer), more lines to the height than the body.
# Between lines of one size, or lines paired row by row (a symbol and what it means, where a
# formula's tall box makes one side's lines taller), such a gap is a table's or a form's,
# whose rows read across.
_NARROW = 0.25
_SIZES_DIFFER = 1.25


def _wide_gutter(unit: float) -> float:
    """The width from which a gap between columns is a gutter whatever the text beside it:
    most of a line's height (``unit``)."""
    return max(0.8 * unit, 4.0)


def _differ(a: float, b: float) -> bool:
    """Whether two heights or pitches differ by ``_SIZES_DIFFER`` or more."""
    return max(a, b) >= _SIZES_DIFFER * max(min(a, b), 1e-6)


def _sizes_differ(boxes: list[Bbox], left: list[int], right: list[int]) -> bool:
    a = median(boxes[i][3] - boxes[i][1] for i in left)
    b = median(boxes[i][3] - boxes[i][1] for i in right)
    if not _differ(a, b):
        return False
    p = _pitch(boxes, left, 3 * max(a, b))
    q = _pitch(boxes, right, 3 * max(a, b))
    if p is None or q is None:
        return False
    return _differ(p, q)


def _pitch(boxes: list[Bbox], side: list[int], most: float) -> float | None:
    """The usual distance from one line's top to the next one's on ``side`` (paragraph gaps
    left out); None with fewer than two such steps."""
    tops = sorted(boxes[i][1] for i in side)
    steps = [y1 - y0 for y0, y1 in pairwise(tops) if 0 < y1 - y0 < most]
    return median(steps) if len(steps) >= 2 else None
