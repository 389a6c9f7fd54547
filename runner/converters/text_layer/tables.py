"""Ruled tables: the grids a page's rules draw, each cell's text read from inside its rules.

A rule is a path object thin and long enough, or a side of a framed cell, taken as a segment
in page coordinates (origin top-left). A table is a connected set of rules where every
horizontal rule spans the whole table width and every vertical rule the whole height, with at
least two rows and two columns: merged or partial cells make the grid ambiguous, and such a
table is left to the text flow instead.

All of it is here, at extraction, beside the character extraction, and not in
:mod:`pagefleet.layout.tables` beside the tables without rules: a ruled table is read from what
a page's layout dict does not keep, the page's path objects (pdfium) and its characters' boxes
(pdftext's :class:`PageChars`, each cell's text cleaned by pdftext), and the core does not
import pdftext (the Lambda package does not install it). A table without rules is found from
the layout's lines alone, which is what the layout package works on.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import numpy as np
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import PageChars
from pdftext.postprocessing import postprocess_text

from pagefleet.layout.schema import Bbox, Block, ImageBlock, Line, TableBlock
from runner.converters.text_layer.chars import HYPHEN, LAYOUT_CODES
from runner.converters.text_layer.objects import PageObjects, curved

# Path objects this thin are rules; this long at least to count as a table border.
_RULE = 2.5
_MIN_RULE = 4.0
# Rules this close (points) touch, or are one.
_TOL = 2.0
# A grid with fewer than one cell in so many filled, and so many lines or curves drawn over it,
# is a plot's, not a table.
_SPARSE = 3
_PLOTTED = 2
_LAYOUT_SET = frozenset(LAYOUT_CODES.tolist())

Segment = tuple[float, float, float]  # (position across, start along, end along)


def ruled_tables(
    objects: PageObjects, chars: PageChars, bbox: list[float], height: float
) -> list[TableBlock]:
    """Ruled tables of the page, each cell's text read from inside its rules."""
    left, bottom = bbox[0], bbox[1]
    top = height + bottom  # flips y as pdftext does, so rules and text lines agree
    horizontal: list[Segment] = []
    vertical: list[Segment] = []
    others: list[tuple[float, float, Any]] = []  # centres of the paths that are no rule
    for x0, y0, x1, y1, obj in objects.paths:
        # To top-left page coordinates.
        x0, x1, y0, y1 = x0 - left, x1 - left, top - y1, top - y0
        w, h = x1 - x0, y1 - y0
        if h <= _RULE and w >= _MIN_RULE:
            horizontal.append(((y0 + y1) / 2, x0, x1))
        elif w <= _RULE and h >= _MIN_RULE:
            vertical.append(((x0 + x1) / 2, y0, y1))
        elif w >= _MIN_RULE and h >= _MIN_RULE and _is_rectangle(obj):
            horizontal += [(y0, x0, x1), (y1, x0, x1)]
            vertical += [(x0, y0, y1), (x1, y0, y1)]
        else:
            others.append(((x0 + x1) / 2, (y0 + y1) / 2, obj))
    if len(horizontal) < 3 or len(vertical) < 3:
        return []
    tables: list[TableBlock] = []
    for xs, ys in _find_grids(horizontal, vertical):
        rows = _cells(chars, xs, ys)
        filled = sum(1 for row in rows for cell in row if cell)
        if filled and not (_SPARSE * filled < sum(map(len, rows)) and _plotted(xs, ys, others)):
            tables.append({"bbox": _grid_bbox(xs, ys), "rows": rows})
    return tables


def _plotted(xs: list[float], ys: list[float], others: list[tuple[float, float, Any]]) -> bool:
    """Whether lines or curves run through a grid: a plot's data over its gridlines."""
    inside = (o for x, y, o in others if xs[0] < x < xs[-1] and ys[0] < y < ys[-1])
    return sum(1 for obj in inside if curved(obj)) >= _PLOTTED


def _merge(segments: list[Segment]) -> list[Segment]:
    """Join collinear segments that touch or overlap (a rule drawn in pieces)."""
    out: list[Segment] = []
    for pos, a, b in sorted(segments):
        if out and abs(out[-1][0] - pos) <= _TOL and a <= out[-1][2] + _TOL:
            last = out[-1]
            out[-1] = (last[0], last[1], max(last[2], b))
        else:
            out.append((pos, a, b))
    return out


def _find_grids(
    horizontal: list[Segment], vertical: list[Segment]
) -> list[tuple[list[float], list[float]]]:
    """(column edges x, row edges y) of every unambiguous ruled grid."""
    hs, vs = _merge(horizontal), _merge(vertical)
    # Group rules into connected sets: a horizontal and a vertical rule touch when they cross.
    parent = list(range(len(hs) + len(vs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (y, x0, x1) in enumerate(hs):
        for j, (x, y0, y1) in enumerate(vs):
            if x0 - _TOL <= x <= x1 + _TOL and y0 - _TOL <= y <= y1 + _TOL:
                parent[find(i)] = find(len(hs) + j)
    groups: dict[int, tuple[list[Segment], list[Segment]]] = {}
    for i, h in enumerate(hs):
        groups.setdefault(find(i), ([], []))[0].append(h)
    for j, v in enumerate(vs):
        groups.setdefault(find(len(hs) + j), ([], []))[1].append(v)
    grids = []
    for group_h, group_v in groups.values():
        ys = _edges([h[0] for h in group_h])
        xs = _edges([v[0] for v in group_v])
        if len(ys) < 3 or len(xs) < 3:
            continue
        full_width = all(h[1] <= xs[0] + _TOL and h[2] >= xs[-1] - _TOL for h in group_h)
        full_height = all(v[1] <= ys[0] + _TOL and v[2] >= ys[-1] - _TOL for v in group_v)
        if full_width and full_height:
            grids.append((xs, ys))
    return grids


def _edges(positions: list[float]) -> list[float]:
    out: list[float] = []
    for p in sorted(positions):
        if not out or p - out[-1] > _TOL:
            out.append(p)
    return out


def _grid_bbox(xs: list[float], ys: list[float]) -> Bbox:
    """The grid's box, rounded as a layout's boxes are."""
    return [round(xs[0], 1), round(ys[0], 1), round(xs[-1], 1), round(ys[-1], 1)]


def _cells(chars: PageChars, xs: list[float], ys: list[float]) -> list[list[str]]:
    """The text of each cell of a grid: its characters (by their centres), in content order.

    A row between two rules that holds several rows of text (a table ruled only above and
    below its body) is cut into those rows (see :func:`_text_rows`), the head row excepted.
    """
    cx = (chars.boxes[:, 0] + chars.boxes[:, 2]) / 2
    cy = (chars.boxes[:, 1] + chars.boxes[:, 3]) / 2
    col = np.searchsorted(xs, cx) - 1
    row = np.searchsorted(ys, cy) - 1
    inside = (col >= 0) & (col < len(xs) - 1) & (row >= 0) & (row < len(ys) - 1)
    text = chars.text
    members: list[list[int]] = [[] for _ in ys[1:]]
    for i, r in zip(np.flatnonzero(inside).tolist(), row[inside].tolist(), strict=True):
        members[r].append(i)
    columns = col.tolist()
    out: list[list[str]] = []
    for r, chars_of_row in enumerate(members):
        # The first row of several is the head, whose labels may wrap alike in every column.
        subs = [chars_of_row] if r == 0 < len(members) - 1 else None
        for sub in subs or _text_rows(chars_of_row, chars, columns, len(xs) - 1):
            pieces: list[list[str]] = [[] for _ in xs[1:]]
            for i in sub:
                pieces[columns[i]].append(text[i])
            out.append(
                [
                    " ".join(postprocess_text("".join(p).replace(HYPHEN, "-")).split())
                    for p in pieces
                ]
            )
    return out


def _text_rows(
    members: list[int], chars: PageChars, columns: list[int], width: int
) -> list[list[int]]:
    """The characters of one grid row, as the rows of text it holds.

    The row's text lines are the vertical bands its characters' boxes cover (a sub- or
    superscript overlaps its line's band). The row is cut at the bands when at least two of
    them, and half of all, have text in every column the row uses; a band with text in one
    column only continues the row above it (a cell's text wrapped). Otherwise the grid row
    is one row.
    """
    codes = chars.codes
    solid = [i for i in members if codes[i] not in _LAYOUT_SET]
    if len(solid) < 2:
        return [members]
    boxes = chars.boxes
    bands: list[list[float]] = []
    for y0, y1 in sorted((float(boxes[i, 1]), float(boxes[i, 3])) for i in solid):
        if bands and y0 < bands[-1][1] - 0.25 * min(y1 - y0, bands[-1][1] - bands[-1][0]):
            bands[-1][1] = max(bands[-1][1], y1)
        else:
            bands.append([y0, y1])
    if len(bands) < 2:
        return [members]
    starts = [b[0] for b in bands]
    band_of: dict[int, int] = {}
    used: list[set[int]] = [set() for _ in bands]
    for i in solid:
        k = max(0, bisect_right(starts, (boxes[i, 1] + boxes[i, 3]) / 2) - 1)
        band_of[i] = k
        used[k].add(columns[i])
    # Rows of data fill every column the grid row uses, band after band; a header whose
    # cells wrap does not (its long labels take more lines than its short ones).
    everywhere = set().union(*used)
    full = sum(1 for cols in used if cols == everywhere)
    if len(everywhere) < 2 or full < 2 or 2 * full < len(bands):
        return [members]
    # Bands with text in one column only join the row above (before the first full band,
    # the row below).
    row_of: list[int] = []
    current, full_seen = 0, False
    for cols in used:
        if len(cols) >= 2:
            current += full_seen
            full_seen = True
        row_of.append(current)
    out: list[list[int]] = [[] for _ in range(current + 1)]
    last = [0] * width  # a space or line break goes with the character before it in its cell
    for i in members:
        if i in band_of:
            last[columns[i]] = row_of[band_of[i]]
        out[last[columns[i]]].append(i)
    return [sub for sub in out if sub]


def _is_rectangle(obj: Any) -> bool:
    """A path of four level and upright segments: how most producers draw a framed cell (a
    plot's line through five points is none)."""
    return 4 <= pdfium_c.FPDFPath_CountSegments(obj) <= 5 and not curved(obj)


def lines_outside(lines: list[Line], tables: list[TableBlock]) -> list[Line]:
    """The lines that are not in a table: the table's cells hold their text."""
    return [ln for ln in lines if not any(centred_in(ln["bbox"], t["bbox"]) for t in tables)]


def centred_in(box: list[float], frame: list[float]) -> bool:
    """Whether ``box``'s centre lies in ``frame``."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return frame[0] <= cx <= frame[2] and frame[1] <= cy <= frame[3]


def place_blocks(blocks: list[Block], placed: Sequence[TableBlock | ImageBlock]) -> list[Block]:
    """Tables and pictures go before the first block that starts below them and shares their
    columns."""
    out: list[Block] = list(blocks)
    for table in sorted(placed, key=lambda t: t["bbox"][1]):
        top, x0, x1 = table["bbox"][1], table["bbox"][0], table["bbox"][2]
        at = next(
            (
                i
                for i, b in enumerate(out)
                if "lines" in b and b["bbox"][1] >= top and b["bbox"][0] < x1 and b["bbox"][2] > x0
            ),
            len(out),
        )
        out.insert(at, table)
    return out
