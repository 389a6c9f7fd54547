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
