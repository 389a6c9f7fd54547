"""Ruled tables: grids of horizontal and vertical rules whose cells are unambiguous.

Rules are given as segments in page coordinates (origin top-left). A table is a connected set
of rules where every horizontal rule spans the whole table width and every vertical rule the
whole height, with at least two rows and two columns: merged or partial cells make the grid
ambiguous, and such a table is left to the text flow instead.
"""

from __future__ import annotations

from pagefleet.layout.schema import Bbox

Segment = tuple[float, float, float]  # (position across, start along, end along)

_TOL = 2.0


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


def find_grids(
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


def grid_bbox(xs: list[float], ys: list[float]) -> Bbox:
    return [round(xs[0], 1), round(ys[0], 1), round(xs[-1], 1), round(ys[-1], 1)]


# --- tables without rules: columns of short cells whose whitespace gaps line up over rows ---

# A table needs this many rows in a row, and its cells this short on average (characters).
_MIN_ROWS = 3
_MAX_MEAN_CELL = 28
_MAX_CELL_WORDS = 10


def find_unruled(
    boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> list[tuple[list[int], list[list[str]]]]:
    """Tables without rules among a page's lines: (indexes of its lines, rows of cell texts).

    Lines are grouped into rows by vertical overlap; a row with two or more cells apart by
    a clear gap (1.5 font sizes) is a table row. Three or more such rows, one under the other,
    make a table when their cells fall into columns that no cell crosses (the x ranges of the
    cells, merged where they overlap, stay apart) and the cells are short: two columns of
    running text have long lines, a table has short cells.
    """
    order = sorted(range(len(boxes)), key=lambda i: (boxes[i][1], boxes[i][0]))
    rows: list[list[int]] = []
    bottom = -1e9
    for i in order:
        y0, y1 = boxes[i][1], boxes[i][3]
        if rows and (y0 + y1) / 2 < bottom:
            rows[-1].append(i)
            bottom = max(bottom, y1)
        else:
            rows.append([i])
            bottom = y1
    runs: list[list[list[int]]] = []
    for row in rows:
        row.sort(key=lambda i: boxes[i][0])
        cells = _cells(row, boxes, sizes)
        if len(cells) < 2:
            runs.append([])
            continue
        if runs and runs[-1]:
            prev = runs[-1][-1]
            height = max(boxes[i][3] - boxes[i][1] for i in row)
            gap = min(boxes[i][1] for i in row) - max(boxes[i][3] for i in prev)
            if gap > 2.5 * height:
                runs.append([])
        if not runs:
            runs.append([])
        runs[-1].append(row)
    tables: list[tuple[list[int], list[list[str]]]] = []
    for run in runs:
        if len(run) < _MIN_ROWS:
            continue
        table = _table(run, boxes, texts, sizes)
        if table is not None:
            tables.append(table)
    return tables


def _cells(row: list[int], boxes: list[Bbox], sizes: list[float]) -> list[list[int]]:
    """The row's lines grouped into cells: lines closer than a clear gap are one cell."""
    cells: list[list[int]] = []
    for i in row:
        if cells and boxes[i][0] - boxes[cells[-1][-1]][2] < 1.5 * max(sizes[i], 1.0):
            cells[-1].append(i)
        else:
            cells.append([i])
    return cells


def _table(
    run: list[list[int]], boxes: list[Bbox], texts: list[str], sizes: list[float]
) -> tuple[list[int], list[list[str]]] | None:
    spans = sorted(
        (boxes[c[0]][0], boxes[c[-1]][2]) for row in run for c in _cells(row, boxes, sizes)
    )
    bands: list[list[float]] = []
    for x0, x1 in spans:
        if bands and x0 <= bands[-1][1] + _TOL:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    if len(bands) < 2:
        return None
    grid: list[list[str]] = []
    lengths: list[int] = []
    for row in run:
        cells = ["" for _ in bands]
        for cell in _cells(row, boxes, sizes):
            text = " ".join(texts[i].strip() for i in cell)
            col = next(k for k, b in enumerate(bands) if b[0] - _TOL <= boxes[cell[0]][0] <= b[1])
            cells[col] = f"{cells[col]} {text}".strip()
            lengths.append(len(text))
            if len(text.split()) > _MAX_CELL_WORDS:
                return None
        grid.append(cells)
    if sum(lengths) / len(lengths) > _MAX_MEAN_CELL:
        return None
    # Every column holds something in at least two rows: not one stray wide line.
    if any(sum(1 for row in grid if row[k]) < 2 for k in range(len(bands))):
        return None
    return [i for row in run for i in row], grid
