"""Ruled tables: the grids a page's rules draw, each cell's text read from inside its rules.

A rule is a path object thin and long enough, or a side of a framed cell, taken as a segment
in page coordinates (origin top-left). A table is a connected set of rules with at least two
rows and two columns, its cells the rectangles its rules close: a rule that stops short
merges the cells on either side of it into one that spans rows or columns (written as HTML,
see :func:`pagefleet.layout.writer.html_table`). Rules that close no rectangles, or a grid
most of whose cells span, draw no table, and its text is left to the text flow.

All of it is here, at extraction, beside the character extraction, and not in
:mod:`pagefleet.layout.tables` beside the tables without rules: a ruled table is read from what
a page's layout dict does not keep, the page's path objects (pdfium) and its characters' boxes
(pdftext's :class:`PageChars`, each cell's text cleaned by pdftext), and the core does not
import pdftext (the Lambda package does not install it). A table without rules is found from
the layout's lines alone, which is what the layout package works on.
"""

from __future__ import annotations

import ctypes
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

import numpy as np
import pypdfium2.raw as pdfium_c
from pdftext.pdf.chars import PageChars
from pdftext.postprocessing import postprocess_text

from pagefleet.layout.schema import Bbox, Line, TableBlock
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
# A grid with fewer than one cell in so many spanning no other is no table.
_SPANNED = 2
_LAYOUT_SET = frozenset(LAYOUT_CODES.tolist())

Segment = tuple[float, float, float]  # (position across, start along, end along)
Region = tuple[int, int, int, int]  # a cell of a grid: (row, column, rows, columns)
Run = tuple[float, float, float, float]  # a run of text: (left, right, middle height, size)


def ruled_tables(
    objects: PageObjects, chars: PageChars, bbox: list[float], height: float
) -> list[TableBlock]:
    """Ruled tables of the page, each cell's text read from inside its rules."""
    left, bottom = bbox[0], bbox[1]
    top = height + bottom  # flips y as pdftext does, so rules and text lines agree
    horizontal: list[Segment] = []
    vertical: list[Segment] = []
    others: list[tuple[float, float, Any]] = []  # centres of the paths that are no rule
    boxes: list[tuple[float, float, float, float, int | None]] = []
    for x0, y0, x1, y1, obj in objects.paths:
        # To top-left page coordinates.
        x0, x1, y0, y1 = x0 - left, x1 - left, top - y1, top - y0
        w, h = x1 - x0, y1 - y0
        if h <= _RULE and w >= _MIN_RULE:
            horizontal.append(((y0 + y1) / 2, x0, x1))
        elif w <= _RULE and h >= _MIN_RULE:
            vertical.append(((x0 + x1) / 2, y0, y1))
        elif w >= _MIN_RULE and h >= _MIN_RULE and _is_rectangle(obj):
            boxes.append((x0, y0, x1, y1, _fill_only(obj)))
        else:
            others.append(((x0 + x1) / 2, (y0 + y1) / 2, obj))
    for x0, y0, x1, y1 in _visible_boxes(boxes):
        horizontal += [(y0, x0, x1), (y1, x0, x1)]
        vertical += [(x0, y0, y1), (x1, y0, y1)]
    if len(horizontal) < 3 or len(vertical) < 3:
        return []
    tables: list[TableBlock] = []
    for xs, grid_ys, hs, vs in _find_grids(horizontal, vertical):
        found = _cell_regions(xs, grid_ys, hs, vs)
        if found is None:
            continue
        ys, regions = found
        runs = _runs(chars, xs, ys)
        if _open_sided(xs, hs, chars) and _grouped(xs, runs):
            continue
        head = len(ys)
        ys, regions = _split_head(xs, ys, regions, runs)
        head = 1 + len(ys) - head
        regions = _split_unruled(regions, xs, ys, runs)
        # Cells that span are a table's exception: where most of the grid is spanned, the
        # rules frame a form or a layout of boxes, not a table.
        single = sum(1 for region in regions if region[2] == region[3] == 1)
        if _SPANNED * single < (len(xs) - 1) * (len(ys) - 1):
            continue
        rows, spans = _cells(chars, xs, ys, regions, head)
        filled = sum(1 for row in rows for cell in row if cell)
        if filled and not (_SPARSE * filled < sum(map(len, rows)) and _plotted(xs, ys, others)):
            table: TableBlock = {"bbox": _grid_bbox(xs, ys), "rows": rows}
            if spans:
                table["span"] = spans
            tables.append(table)
    return tables


def _open_sided(xs: list[float], hs: list[Segment], chars: PageChars) -> bool:
    """Whether the grid's rules across run on past its first or last column rule, two of them
    or more, over text standing there: the table has columns its column rules leave out."""
    cx = (chars.boxes[:, 0] + chars.boxes[:, 2]) / 2
    cy = (chars.boxes[:, 1] + chars.boxes[:, 3]) / 2
    solid = ~np.isin(chars.codes, LAYOUT_CODES)
    for beyond in (
        [(y, a, xs[0]) for y, a, _ in hs if a < xs[0] - _MIN_RULE],
        [(y, xs[-1], b) for y, _, b in hs if b > xs[-1] + _MIN_RULE],
    ):
        if len(beyond) < 2:
            continue
        x0, x1 = min(a for _, a, _ in beyond), max(b for _, _, b in beyond)
        y0, y1 = min(y for y, _, _ in beyond), max(y for y, _, _ in beyond)
        if np.any(solid & (x0 < cx) & (cx < x1) & (y0 < cy) & (cy < y1)):
            return True
    return False


def _grouped(xs: list[float], runs: list[Run]) -> bool:
    """Whether a column of the grid holds columns of its own: two runs of text or more side by
    side on most of its lines (figures set apart in it, "11,062.6   1,540.0   9,522.6"), two
    such lines at least. With open sides (see :func:`_open_sided`) its rules stand between
    groups of a table's columns, around none of its cells: the table is left to the text flow
    (found without rules, see :mod:`pagefleet.layout.tables`)."""
    for left, right in pairwise(xs):
        lines: list[list[Run]] = []
        for run in sorted(
            (r for r in runs if left < (r[0] + r[1]) / 2 < right), key=lambda r: r[2]
        ):
            if lines and run[2] - lines[-1][0][2] < run[3] / 2:
                lines[-1].append(run)
            else:
                lines.append([run])
        side_by_side = sum(1 for line in lines if len(line) > 1)
        if side_by_side >= 2 and 2 * side_by_side > len(lines):
            return True
    return False


def _plotted(xs: list[float], ys: list[float], others: list[tuple[float, float, Any]]) -> bool:
    """Whether lines or curves run through a grid: a plot's data over its gridlines."""
    inside = (o for x, y, o in others if xs[0] < x < xs[-1] and ys[0] < y < ys[-1])
    return sum(1 for obj in inside if curved(obj)) >= _PLOTTED


def _merge(segments: list[Segment]) -> list[Segment]:
    """Join collinear segments that touch or overlap (a rule drawn in pieces, a cell's
    shaded box along its rule)."""
    out: list[Segment] = []
    for line in _edge_groups(sorted(segments)):
        merged: list[Segment] = []
        for pos, a, b in sorted(line, key=lambda s: s[1]):
            if merged and a <= merged[-1][2] + _TOL:
                last = merged[-1]
                merged[-1] = (last[0], last[1], max(last[2], b))
            else:
                merged.append((pos, a, b))
        out += merged
    return out


def _edge_groups(segments: list[Segment]) -> list[list[Segment]]:
    """Segments sorted by position, in groups of those that lie along one line."""
    groups: list[list[Segment]] = []
    for segment in segments:
        if groups and segment[0] - groups[-1][-1][0] <= _TOL:
            groups[-1].append(segment)
        else:
            groups.append([segment])
    return groups


def _find_grids(
    horizontal: list[Segment], vertical: list[Segment]
) -> list[tuple[list[float], list[float], list[Segment], list[Segment]]]:
    """(column edges x, row edges y, horizontal rules, vertical rules) of every connected set
    of rules that makes at least two rows and two columns."""
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
        if len(ys) >= 3 and len(xs) >= 3:
            grids.append((xs, ys, group_h, group_v))
    return grids


def _edges(positions: list[float]) -> list[float]:
    out: list[float] = []
    for p in sorted(positions):
        if not out or p - out[-1] > _TOL:
            out.append(p)
    return out


def _covered(rules: list[Segment], edges: list[float], cross: list[float]) -> list[list[bool]]:
    """``covered[k][i]``: a rule runs along edge ``k`` over the whole span between the crossing
    edges ``i`` and ``i + 1``."""
    out = [[False] * (len(cross) - 1) for _ in edges]
    for pos, a, b in rules:
        k = bisect_left(edges, pos)
        if k == len(edges) or (k and pos - edges[k - 1] < edges[k] - pos):
            k -= 1
        for i in range(bisect_left(cross, a - _TOL), bisect_right(cross, b + _TOL) - 1):
            out[k][i] = True
    return out


def _cell_regions(
    xs: list[float], ys: list[float], hs: list[Segment], vs: list[Segment]
) -> tuple[list[float], list[Region]] | None:
    """The row edges and the cells of a grid: the regions its rules close, each a rectangle
    of the grid's elementary cells (None when one is not: the rules draw no table).

    The grid's outline is closed whether or not it is drawn (a table ruled inside only).
    Rows at the top or bottom that are one cell the width of the grid (a title or a note
    framed with the table) are left out, and the grid starts or ends below or above them.
    """
    nr, nc = len(ys) - 1, len(xs) - 1
    across = _covered(hs, ys, xs)
    down = _covered(vs, xs, ys)
    parent = list(range(nr * nc))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for r in range(nr):
        for c in range(nc):
            if c + 1 < nc and not down[c + 1][r]:
                parent[find(r * nc + c + 1)] = find(r * nc + c)
            if r + 1 < nr and not across[r + 1][c]:
                parent[find((r + 1) * nc + c)] = find(r * nc + c)
    boxes: dict[int, list[int]] = {}
    for i in range(nr * nc):
        r, c = divmod(i, nc)
        box = boxes.setdefault(find(i), [r, c, r, c, 0])
        box[2], box[3], box[4] = max(box[2], r), max(box[3], c), box[4] + 1
        box[1] = min(box[1], c)
    regions: list[Region] = []
    for r0, c0, r1, c1, count in boxes.values():
        if (r1 - r0 + 1) * (c1 - c0 + 1) != count:
            return None
        regions.append((r0, c0, r1 - r0 + 1, c1 - c0 + 1))
    wide = [(r0, r0 + rows) for r0, _, rows, cols in regions if cols == nc]
    first, last = 0, nr
    down_from, up_from = dict(wide), {end: start for start, end in wide}
    while first in down_from and first < last:
        first = down_from[first]
    while last in up_from and last > first:
        last = up_from[last]
    if last - first < 2:
        return None
    kept = [(r0 - first, c0, rows, cols) for r0, c0, rows, cols in regions]
    return ys[first : last + 1], [k for k in kept if k[0] >= 0 and k[0] + k[2] <= last - first]


def _runs(chars: PageChars, xs: list[float], ys: list[float]) -> list[Run]:
    """(left, right, middle height, size) of each run of text in the grid: characters in content
    order on one line, less than half their height apart (a word, or words with their
    spaces)."""
    boxes = chars.boxes
    cx = (boxes[:, 0] + boxes[:, 2]) / 2
    cy = (boxes[:, 1] + boxes[:, 3]) / 2
    inside = (xs[0] < cx) & (cx < xs[-1]) & (ys[0] < cy) & (cy < ys[-1])
    solid = np.flatnonzero(inside & ~np.isin(chars.codes, LAYOUT_CODES))
    if not len(solid):
        return []
    b, y = boxes[solid], cy[solid]
    size = b[:, 3] - b[:, 1]
    gap = b[1:, 0] - b[:-1, 2]
    near = 0.5 * np.maximum(size[1:], size[:-1])
    joined = (np.abs(y[1:] - y[:-1]) < near) & (gap < near) & (gap > -size[:-1])
    starts = np.flatnonzero(np.r_[True, ~joined])
    x0 = np.minimum.reduceat(b[:, 0], starts)
    x1 = np.maximum.reduceat(b[:, 2], starts)
    return list(
        zip(x0.tolist(), x1.tolist(), y[starts].tolist(), size[starts].tolist(), strict=True)
    )


def _split_unruled(
    regions: list[Region], xs: list[float], ys: list[float], runs: list[Run]
) -> list[Region]:
    """Cells that span, cut at the edges inside them that no run of their text crosses and
    that have text on both sides (or none at all): a grid ruled around groups of columns or
    rows (the columns' own rules drawn in a total row only, a row's rules in some columns
    only) keeps its columns and rows, while a label over a group of columns, across their
    edges or beside none of their text, spans them. Cells of the first row are not cut
    across: a head's labels wrap past the rules beside them."""
    along = [(a, b, y) for a, b, y, _ in runs]
    regions = _cut(regions, xs, ys, along)
    down = [(y - size / 2, y + size / 2, (a + b) / 2) for a, b, y, size in runs]
    flipped = [(c, r, w, h) for r, c, h, w in regions if r > 0]
    kept = [region for region in regions if region[0] == 0]
    return kept + [(r, c, h, w) for c, r, w, h in _cut(flipped, ys, xs, down)]


def _cut(
    regions: list[Region],
    edges: list[float],
    across: list[float],
    runs: list[tuple[float, float, float]],
) -> list[Region]:
    """Regions (first across, first along, count across, count along) cut at their inner
    ``edges`` that ``runs`` (start, end along; middle across) leave free (see :func:`_cuts`)."""
    out: list[Region] = []
    for region in regions:
        r0, c0, rows, cols = region
        if cols == 1:
            out.append(region)
            continue
        low, high = edges[c0], edges[c0 + cols]
        top, bottom = across[r0], across[r0 + rows]
        inside = [(a, b) for a, b, m in runs if top < m < bottom and low < (a + b) / 2 < high]
        cuts = [c0, *_cuts(inside, edges, c0, cols, bool(inside)), c0 + cols]
        out += [(r0, s, rows, e - s) for s, e in pairwise(cuts)]
    return out


def _cuts(
    inside: list[tuple[float, float]], xs: list[float], c0: int, cols: int, sided: bool
) -> list[int]:
    """The column edges inside a cell that no run crosses, with runs on both sides if
    ``sided``."""
    return [
        c
        for c in range(c0 + 1, c0 + cols)
        if not any(a < xs[c] - _TOL and xs[c] + _TOL < b for a, b in inside)
        and not (
            sided
            and not (any(b <= xs[c] for _, b in inside) and any(a >= xs[c] for a, _ in inside))
        )
    ]


def _split_head(
    xs: list[float], ys: list[float], regions: list[Region], runs: list[Run]
) -> tuple[list[float], list[Region]]:
    """A head row that holds, in one ruled cell, a label over a group of columns above the
    columns' own labels is two rows: the group's label spans its columns in the first, the
    columns' labels stand in the second, and the head's other cells span both."""
    top, bottom = ys[0], ys[1]
    head = sorted((y, size, a, b) for a, b, y, size in runs if top < y < bottom)
    if not head:
        return ys, regions
    first, size = head[0][0], head[0][1]
    upper = [(a, b) for y, _, a, b in head if y < first + size / 2]
    lower = [(y, a, b) for y, _, a, b in head if y >= first + size / 2]
    if not lower:
        return ys, regions
    grouped = set()
    for r0, c0, rows, cols in regions:
        left, right = xs[c0], xs[c0 + cols]
        over = [1 for a, b in upper if left < (a + b) / 2 < right]
        under = [(a, b) for _, a, b in lower if left < (a + b) / 2 < right]
        if (
            r0 == 0
            and rows == 1
            and cols > 1
            and len(over) == 1
            and _cuts(under, xs, c0, cols, True)
        ):
            grouped.add((r0, c0))
    if not grouped:
        return ys, regions
    cut = (max(y for y, _, _, _ in head if y < first + size / 2) + min(y for y, _, _ in lower)) / 2
    out: list[Region] = []
    for r0, c0, rows, cols in regions:
        if (r0, c0) in grouped:
            out += [(0, c0, 1, cols), (1, c0, 1, cols)]
        else:
            out.append((r0 + (r0 > 0), c0, rows + (r0 == 0), cols))
    return [top, cut, *ys[1:]], out


def _grid_bbox(xs: list[float], ys: list[float]) -> Bbox:
    """The grid's box, rounded as a layout's boxes are."""
    return [round(xs[0], 1), round(ys[0], 1), round(xs[-1], 1), round(ys[-1], 1)]


def _cells(
    chars: PageChars, xs: list[float], ys: list[float], regions: list[Region], head: int
) -> tuple[list[list[str]], list[list[int]]]:
    """The text of each cell of a grid (its characters, by their centres, in content order),
    as rows as wide as the grid, and the cells that span: [row, column, rows, columns].

    A row between two rules that holds several rows of text (a table ruled only above and
    below its body) is cut into those rows (see :func:`_text_rows`), unless it is one of the
    ``head`` rows or a cell spans it and the rows beside.
    """
    cx = (chars.boxes[:, 0] + chars.boxes[:, 2]) / 2
    cy = (chars.boxes[:, 1] + chars.boxes[:, 3]) / 2
    col = np.searchsorted(xs, cx) - 1
    row = np.searchsorted(ys, cy) - 1
    nr, nc = len(ys) - 1, len(xs) - 1
    inside = (col >= 0) & (col < nc) & (row >= 0) & (row < nr)
    owner = np.zeros((nr, nc), dtype=np.int64)
    starting: list[list[int]] = [[] for _ in range(nr)]
    tall: set[int] = set()
    for k, (r0, c0, rows, cols) in enumerate(sorted(regions, key=lambda g: g[:2])):
        owner[r0 : r0 + rows, c0 : c0 + cols] = k
        starting[r0].append(k)
        if rows > 1:
            tall.update(range(r0, r0 + rows))
    ordered = sorted(regions, key=lambda g: g[:2])
    members: list[list[int]] = [[] for _ in ordered]
    owners = owner[row[inside], col[inside]].tolist()
    for i, k in zip(np.flatnonzero(inside).tolist(), owners, strict=True):
        members[k].append(i)
    text = chars.text
    out: list[list[str]] = []
    spans: list[list[int]] = []
    for r in range(nr):
        slot = {i: j for j, k in enumerate(starting[r]) for i in members[k]}
        chars_of_row = sorted(slot)
        # The head's labels may wrap alike in every column.
        whole = r in tall or r < head < nr
        for sub in [chars_of_row] if whole else _text_rows(chars_of_row, chars, slot):
            pieces: list[list[str]] = [[] for _ in starting[r]]
            for i in sub:
                pieces[slot[i]].append(text[i])
            cells = [""] * nc
            for j, k in enumerate(starting[r]):
                r0, c0, rows, cols = ordered[k]
                cells[c0] = " ".join(
                    postprocess_text("".join(pieces[j]).replace(HYPHEN, "-")).split()
                )
                if rows > 1 or cols > 1:
                    spans.append([len(out), c0, rows, cols])
            out.append(cells)
    return out, spans


def _text_rows(members: list[int], chars: PageChars, columns: Mapping[int, int]) -> list[list[int]]:
    """The characters of one grid row, as the rows of text it holds (``columns``: each
    character's cell in the row).

    The row's text lines are the vertical bands its characters' boxes cover (a sub- or
    superscript overlaps its line's band). The row is cut at the bands when at least two of
    them, and half of all, have text in every cell the row uses; a band with text in one
    cell only continues the row above it (a cell's text wrapped). Otherwise the grid row
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
    # A space or line break goes with the character before it in its cell.
    last = dict.fromkeys(columns.values(), 0)
    for i in members:
        if i in band_of:
            last[columns[i]] = row_of[band_of[i]]
        out[last[columns[i]]].append(i)
    return [sub for sub in out if sub]


def _fill_only(obj: Any) -> int | None:
    """The fill colour (RGBA packed) of a path filled and not stroked; None otherwise."""
    mode, stroke = ctypes.c_int(), ctypes.c_int()
    if not pdfium_c.FPDFPath_GetDrawMode(obj, mode, stroke) or stroke.value or not mode.value:
        return None
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetFillColor(obj, r, g, b, a):
        return None
    return r.value << 24 | g.value << 16 | b.value << 8 | a.value


def _visible_boxes(
    boxes: list[tuple[float, float, float, float, int | None]],
) -> list[tuple[float, float, float, float]]:
    """The boxes whose edges show: a box filled and not stroked inside another filled box of
    its colour draws no edge of its own (a spreadsheet's cell padding), so its sides are no
    rules."""
    if len(boxes) < 2:
        return [box[:4] for box in boxes]
    frame = np.array([box[:4] for box in boxes])
    fills = np.array([-1 if box[4] is None else box[4] for box in boxes])
    out = []
    for k, (x0, y0, x1, y1, fill) in enumerate(boxes):
        if fill is not None:
            around = (
                (frame[:, 0] <= x0)
                & (frame[:, 1] <= y0)
                & (frame[:, 2] >= x1)
                & (frame[:, 3] >= y1)
                & (fills == fill)
            )
            around[k] = False
            if around.any():
                continue
        out.append((x0, y0, x1, y1))
    return out


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
