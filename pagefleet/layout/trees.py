"""Mind maps: a tree of short blocks (the nodes) beside their branches, read node by node,
each node before its branch, as a reader follows the tree, instead of column by column.
"""

from __future__ import annotations

from pagefleet.layout.columns import cut_bands, find_gutter
from pagefleet.layout.schema import Bbox


def tree_rows(
    boxes: list[Bbox], idx: list[int], g0: float, g1: float
) -> list[tuple[list[int], list[int]]]:
    """A mind map's nodes, each with its branch: where the leftmost gutter's left side is
    short blocks standing far apart (its lines cover under ``_SPARSE`` of its height), or one
    block the right side reaches far above and below (the root), the right side's bands are
    cut into one group a block, each holding its block's middle, centred on it as nearly as
    can be (see :func:`_centred_groups`). Read node by node, each before its branch, the
    tree reads depth first, as pdfium has it; read column by column, every level of the tree
    came before the next (mineru's introduction.pdf: 52.7% of its words in order, 95.0%
    now). Empty otherwise.
    """
    left = [i for i in idx if boxes[i][2] <= g1]
    deeper = find_gutter(boxes, left) if len(left) >= 4 else None
    if deeper is not None and not deeper[2]:
        # The leftmost gutter is the nodes' (the gutter chosen is the widest).
        return tree_rows(boxes, idx, deeper[0], deeper[1])
    right = [i for i in idx if boxes[i][0] >= g0]
    if not left or not right or len(left) + len(right) < len(idx):
        return []
    nodes = cut_bands(boxes, left)
    top = min(boxes[i][1] for i in left)
    height = max(boxes[i][3] for i in left) - top
    if len(nodes) > 1 and sum(boxes[i][3] - boxes[i][1] for i in left) >= _SPARSE * height:
        return []
    if len(nodes) > _MAX_NODES or any(len(node) > _NODE_LINES for node in nodes):
        return []
    middles = [(min(boxes[i][1] for i in n) + max(boxes[i][3] for i in n)) / 2 for n in nodes]
    bands = cut_bands(boxes, right)
    tops = [min(boxes[i][1] for i in band) for band in bands]
    bottoms = [max(boxes[i][3] for i in band) for band in bands]
    groups = _centred_groups(tops, bottoms, middles)
    # Each branch centred on its node: captions in a column whose figures are pictures (not
    # lines) stand far apart too, but beside text that is not centred on them.
    if groups is None or any(
        abs((tops[a] + bottoms[b - 1]) / 2 - middle) > _OFF_CENTRE * (bottoms[b - 1] - tops[a])
        for (a, b), middle in zip(groups, middles, strict=True)
    ):
        return []
    if len(nodes) == 1 and (tops[0] > top - height or bottoms[-1] < top + 2 * height):
        return []  # a root's branches reach above and below it, farther than it is tall
    return [
        (node, [i for band in bands[a:b] for i in band])
        for node, (a, b) in zip(nodes, groups, strict=True)
    ]


def _centred_groups(
    tops: list[float], bottoms: list[float], middles: list[float]
) -> list[tuple[int, int]] | None:
    """The bands (``tops``, ``bottoms``, in order) cut into one run a middle (in order), each
    run holding its middle within its height, the runs' centres as near their middles as can
    be (least total distance); None where no cut holds every middle in its run."""
    n, m = len(middles), len(tops)
    inf = float("inf")
    # best[k][e]: least distance for the first k middles over the first e bands.
    best = [[inf] * (m + 1) for _ in range(n + 1)]
    back = [[0] * (m + 1) for _ in range(n + 1)]
    best[0][0] = 0.0
    for k, middle in enumerate(middles):
        for a in range(m):
            if best[k][a] == inf or tops[a] > middle:
                continue
            for b in range(a + 1, m + 1):
                if bottoms[b - 1] < middle:
                    continue
                cost = best[k][a] + abs((tops[a] + bottoms[b - 1]) / 2 - middle)
                if cost < best[k + 1][b]:
                    best[k + 1][b], back[k + 1][b] = cost, a
    if best[n][m] == inf:
        return None
    runs: list[tuple[int, int]] = []
    b = m
    for k in range(n, 0, -1):
        runs.append((back[k][b], b))
        b = back[k][b]
    return runs[::-1]


# A mind map's nodes: lines covering under this share of their column's height, blocks of so
# many lines at most, so many blocks a column at most (the cut is quadratic in the bands).
_SPARSE = 0.25
_NODE_LINES = 6
_MAX_NODES = 24
# A branch's middle is this share of its height from its node's at most (xmind's: 0.31).
_OFF_CENTRE = 0.35
