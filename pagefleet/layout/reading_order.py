"""Reading order: a page's lines grouped into regions (columns left to right, band by band), in
the order a reader takes them. It composes the finding of columns (:mod:`.columns`), the grids
read across a gutter (:mod:`.gutter_rows`) and the mind maps (:mod:`.trees`).
"""

from __future__ import annotations

from bisect import bisect_right

from pagefleet.layout.columns import columns_between, cut_bands, find_gutter, pieces_across
from pagefleet.layout.gutter_rows import boxes_under, break_rows, cell_rows, field_rows
from pagefleet.layout.lines import is_upright, line_tail
from pagefleet.layout.rows import join_piece
from pagefleet.layout.schema import Bbox, Line
from pagefleet.layout.trees import tree_rows


def row_order(boxes: list[Bbox], idx: list[int]) -> list[int]:
    """Top to bottom; boxes sharing a row (vertical overlap) left to right."""
    order = sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0]))
    out: list[int] = []
    row: list[int] = []
    row_bottom = -1e9
    for i in order:
        y0, y1 = boxes[i][1], boxes[i][3]
        if row and y0 < row_bottom - 0.5 * (y1 - y0):
            row.append(i)
            row_bottom = max(row_bottom, y1)
            continue
        out.extend(sorted(row, key=lambda j: boxes[j][0]))
        row, row_bottom = [i], y1
    out.extend(sorted(row, key=lambda j: boxes[j][0]))
    return out


def _regions(
    boxes: list[Bbox],
    idx: list[int],
    out: list[list[int]],
    joins: set[tuple[int, int]],
    labels: set[int],
) -> None:
    """Append the regions of ``idx`` in reading order: columns left to right, band by band.

    A gutter is a vertical band that almost no line crosses, with text on both sides of it
    side by side. Lines that do cross it (a title, a wide figure or table) cut the page into
    bands; within a band the left column is read before the right one. Each side is searched
    again for a gutter of its own (three columns). Without a gutter the region is read row by
    row, so a borderless table reads across.

    A gutter narrower than a line's height (see :func:`.columns.find_gutter`) is crossed by a line
    the text layer wrote in two pieces, one on each side, level and of one height, closer than a
    gutter (an OCR layer cuts lines at an illustration's edge): the pair is added to ``joins`` and
    reads as one spanning line; not between two columns of prose, whose lines are all level.
    """
    gutter = find_gutter(boxes, idx) if len(idx) >= 4 else None
    if gutter is None:
        bands = cut_bands(boxes, idx)
        if len(bands) == 1:
            parts = columns_between(boxes, idx)
            if parts is None:
                out.append(row_order(boxes, idx))
            for part in parts or ():
                _regions(boxes, part, out, joins, labels)
            return
        boxed = boxes_under(boxes, bands)
        if boxed:
            _regions(boxes, bands[0], out, joins, labels)
            _regions(boxes, boxed, out, joins, labels)
            return
        for band in bands:
            _regions(boxes, band, out, joins, labels)
        return
    g0, g1, prose = gutter
    if _read_lead_bands(boxes, idx, g0, g1, out, joins, labels):
        return
    if not prose:
        tree = tree_rows(boxes, idx, g0, g1)
        if tree:
            for row in tree:
                for part in row:
                    _regions(boxes, part, out, joins, labels)
            return
    mid = (g0 + g1) / 2
    # Between columns of prose set close, every line is level with one across the gap.
    pieces = {} if prose else pieces_across(boxes, idx, g0, g1)
    joins.update(pieces.items())
    joined = set(pieces) | set(pieces.values())

    def crossing(i: int) -> bool:
        return (boxes[i][0] < g0 and boxes[i][2] > g1) or i in joined

    spanning = sorted((i for i in idx if crossing(i)), key=lambda i: (boxes[i][1], boxes[i][0]))
    tops = [boxes[i][1] for i in spanning]
    sides: list[tuple[list[int], list[int]]] = [([], []) for _ in range(len(spanning) + 1)]
    for i in idx:
        if not crossing(i):
            side = sides[bisect_right(tops, (boxes[i][1] + boxes[i][3]) / 2)]
            side[0 if (boxes[i][0] + boxes[i][2]) / 2 < mid else 1].append(i)
    for k, (left, right) in enumerate(sides):
        # A table whose cells are paragraphs reads row by row, each row's cells left to right.
        # A form's fields, label beside value, read row by row too; so are columns parted by
        # a break across the page.
        rows = (
            cell_rows(boxes, left, right)
            or field_rows(boxes, left, right, labels)
            or break_rows(boxes, left, right)
        )
        for row in rows or [(left, right)]:
            for part in row:
                if part:
                    _regions(boxes, part, out, joins, labels)
        if k < len(spanning):
            # Spanning lines with nothing beside them in between (a two-line title, the two
            # pieces of one line) stay one region.
            if k and not sides[k][0] and not sides[k][1]:
                out[-1].append(spanning[k])
            else:
                out.append([spanning[k]])


def _read_lead_bands(
    boxes: list[Bbox],
    idx: list[int],
    g0: float,
    g1: float,
    out: list[list[int]],
    joins: set[tuple[int, int]],
    labels: set[int],
) -> bool:
    """Read the bands atop ``idx`` that a line crosses the gutter (g0, g1) in, each on its own,
    then the rest; False where there are none. A paper's authors set side by side, each
    centred over a column of their own, cross the page's gutter: searched for columns with
    the page's text, their rows were cut at each author that crosses it and read across
    (names, then departments); on their own, their own gutters part them, author by author.
    """
    bands = cut_bands(boxes, idx)
    lead = 0
    while lead < len(bands) - 1 and any(boxes[i][0] < g0 and boxes[i][2] > g1 for i in bands[lead]):
        lead += 1
    if not lead:
        return False
    for band in bands[:lead]:
        _regions(boxes, band, out, joins, labels)
    _regions(boxes, [i for band in bands[lead:] for i in band], out, joins, labels)
    return True


def reading_order(lines: list[Line]) -> list[list[Line]]:
    """Lines grouped into regions (columns, bands), in reading order.

    Lines set upright (a preprint server's stamp along the margin, a rotated axis title) read
    last, each a region of its own: their tall boxes would otherwise join every line beside
    them into one row and hide the gutter between columns.
    """
    if not lines:
        return []
    boxes = [line["bbox"] for line in lines]
    upright = [i for i, line in enumerate(lines) if is_upright(line)]
    flat = [i for i in range(len(lines)) if i not in upright]
    regions: list[list[int]] = []
    joins: set[tuple[int, int]] = set()
    if flat:
        labels = {i for i in flat if line_tail(lines[i]).endswith(":")}
        _regions(boxes, flat, regions, joins, labels)
    regions += [[i] for i in upright]
    out: list[list[Line]] = []
    for region in regions:
        ordered: list[Line] = []
        for k, i in enumerate(region):
            if k and (region[k - 1], i) in joins and lines[i]["spans"] and ordered[-1]["spans"]:
                ordered[-1] = join_piece(ordered[-1], lines[i])
            else:
                ordered.append(lines[i])
        if ordered:
            out.append(ordered)
    return out
