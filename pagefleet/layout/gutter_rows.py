"""Rows read across a gutter: where the two sides of a gap are not two columns to read one after
the other but one grid read row by row (a table whose cells are paragraphs, a form's labels and
values, columns parted by a break across the page, boxes each opening with a title).
"""

from __future__ import annotations

from bisect import bisect_right
from statistics import median

from pagefleet.layout.columns import cut_bands, find_gutter
from pagefleet.layout.schema import Bbox


def boxes_under(boxes: list[Bbox], bands: list[list[int]]) -> list[int]:
    """The lines under the first band when they stand in columns each opening with a title (a
    slide's boxes under its title, whose items are spaced wider than the gap that cuts bands
    and whose titled columns the title's width hid); empty otherwise."""
    rest = [i for band in bands[1:] for i in band]
    gutter = find_gutter(boxes, rest) if len(rest) >= 4 else None
    if gutter is None:
        return []
    mid = (gutter[0] + gutter[1]) / 2
    left = [i for i in rest if boxes[i][2] <= mid]
    right = [i for i in rest if boxes[i][0] >= mid]
    if len(left) + len(right) < len(rest) or not left or not right:
        return []
    return rest if _titled(boxes, left) and _titled(boxes, right) else []


def cell_rows(
    boxes: list[Bbox], left: list[int], right: list[int]
) -> list[tuple[list[int], list[int]]]:
    """The rows of a table without rules whose cells are paragraphs, when ``left`` and
    ``right`` (the two sides of a gutter) are its columns: each side falls into blocks at
    vertical gaps, the blocks of the two sides start level, one for one, three rows at least
    (two where every block opens with a title, a grid of cards), and two rows at least hold a
    paragraph of several lines on both sides (so lines paired across the gutter, a form's
    labels, an index's entries, stay columns). A block on one side wholly above the other
    side's text (a title set at the left over the grid) is a row of its own. Empty otherwise.
    """
    if len(left) < 4 or len(right) < 4:
        return []
    lb, rb = cut_bands(boxes, left), cut_bands(boxes, right)
    lead: list[tuple[list[int], list[int]]] = []
    for side, other in ((lb, right), (rb, left)):
        top = min(boxes[i][1] for i in other)
        while len(side) > 1 and max(boxes[i][3] for i in side[0]) <= top:
            block = side.pop(0)
            lead.append((block, []) if side is lb else ([], block))
    if len(lb) != len(rb) or len(lb) < 2:
        return []
    if len(lb) == 2 and not all(_titled(boxes, block) for block in lb + rb):
        return []
    unit = median(boxes[i][3] - boxes[i][1] for i in left + right)
    for a, b in zip(lb, rb, strict=True):
        if abs(min(boxes[i][1] for i in a) - min(boxes[i][1] for i in b)) > 0.5 * unit:
            return []
    if sum(1 for a, b in zip(lb, rb, strict=True) if len(a) > 1 and len(b) > 1) < 2:
        return []
    return lead + list(zip(lb, rb, strict=True))


def field_rows(
    boxes: list[Bbox], left: list[int], right: list[int], labels: set[int]
) -> list[tuple[list[int], list[int]]]:
    """The fields of a form, when ``left`` (the left side of a gutter) is its labels, most of
    them ending in a colon, and ``right`` their values, most labels level with a value's first
    line: each label with the lines of the right side from its height down to the next
    label's (a value on several lines). Empty otherwise; so are columns whose lines merely
    pair up (two columns of lettered labels, an index), which read column by column."""
    heads = sorted(left, key=lambda i: boxes[i][1])
    if len(heads) < 2 or 3 * len(labels.intersection(heads)) < 2 * len(heads):
        return []
    if min(boxes[j][1] for j in right) < boxes[heads[0]][1] - 0.5 * (
        boxes[heads[0]][3] - boxes[heads[0]][1]
    ):
        return []  # text on the right above the first label: no field of the form
    level = sum(
        1
        for i in heads
        if any(
            min(boxes[i][3], boxes[j][3]) - max(boxes[i][1], boxes[j][1])
            >= 0.5 * min(boxes[i][3] - boxes[i][1], boxes[j][3] - boxes[j][1])
            for j in right
        )
    )
    if 3 * level < 2 * len(heads):
        return []
    tops = [boxes[i][1] for i in heads[1:]]
    values: list[list[int]] = [[] for _ in heads]
    for j in sorted(right, key=lambda j: boxes[j][1]):
        values[bisect_right(tops, (boxes[j][1] + boxes[j][3]) / 2)].append(j)
    return [([i], value) for i, value in zip(heads, values, strict=True)]


def break_rows(
    boxes: list[Bbox], left: list[int], right: list[int]
) -> list[tuple[list[int], list[int]]]:
    """The two sides of a gutter cut where a gap some lines tall runs across both: a break
    across the page (a figure set across both columns, the references under a paper's last
    section), above which both columns are read before the text below it, both resuming
    level below it, each part lines on both sides. Empty otherwise."""
    if not left or not right:
        return []
    unit = median(boxes[i][3] - boxes[i][1] for i in left + right)
    order = sorted(left + right, key=lambda i: boxes[i][1])
    parts = [[order[0]]]
    reach = boxes[order[0]][3]
    for i in order[1:]:
        if boxes[i][1] - reach >= _BREAK * unit:
            parts.append([])
        parts[-1].append(i)
        reach = max(reach, boxes[i][3])
    if len(parts) < 2:
        return []
    sides = set(left)
    rows = [([i for i in p if i in sides], [i for i in p if i not in sides]) for p in parts]
    # Both columns resume level below each break: a gap that pictures or a table left in one
    # column and in the other at different heights is no break. Each part holds lines of
    # text on both sides: rows of a form spaced wide apart, one field a side, are no parts.
    for k, (a, b) in enumerate(rows):
        if len(a) < 2 or len(b) < 2:
            return []
        if k and abs(min(boxes[i][1] for i in a) - min(boxes[i][1] for i in b)) > 0.5 * unit:
            return []
    return rows


# A gap across the page this many line heights tall at least is a break, not a paragraph's.
_BREAK = 2.5


def _titled(boxes: list[Bbox], block: list[int]) -> bool:
    """Whether a block's top line is taller than the lines under it: a card's or a box's
    title over its text. Two columns of an article whose paragraphs happen to start level
    rarely both open every paragraph with a heading."""
    top, *rest = sorted(block, key=lambda i: boxes[i][1])
    if not rest:
        return False
    height = median(boxes[i][3] - boxes[i][1] for i in rest)
    return boxes[top][3] - boxes[top][1] >= _TITLE * height


# A title's line is this many times as tall as the text under it at least (14 pt over 10 pt).
_TITLE = 1.2
