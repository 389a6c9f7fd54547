"""Ruled grids with cells that span, from their rules to the Markdown or HTML written."""

from __future__ import annotations

from pagefleet.layout.writer import html_table
from runner.converters.text_layer.tables import (
    _cell_regions,
    _merge,
    _split_unruled,
    _visible_boxes,
)


def test_a_rule_beside_shaded_cell_boxes_is_one_rule() -> None:
    # Boxes' sides a hair left of the rule, sorted before it: the rule still joins them all.
    pieces = [(160.1, 84.3, 91.9), (160.1, 99.4, 107.0), (160.15, 69.4, 734.9)]
    assert [(a, b) for _, a, b in _merge(pieces)] == [(69.4, 734.9)]


def test_merged_cells_title_row_and_partial_rules_make_regions() -> None:
    xs, ys = [0.0, 50.0, 100.0, 150.0], [0.0, 20.0, 40.0, 60.0, 80.0]
    # A title row the grid's width; below it, the first column's two lower rows one cell.
    hs = [(0.0, 0.0, 150.0), (20.0, 0.0, 150.0), (40.0, 0.0, 150.0), (60.0, 50.0, 150.0)]
    hs.append((80.0, 0.0, 150.0))
    vs = [(0.0, 0.0, 80.0), (50.0, 20.0, 80.0), (100.0, 20.0, 80.0), (150.0, 0.0, 80.0)]
    found = _cell_regions(xs, ys, hs, vs)
    assert found is not None
    rows, regions = found
    assert rows == ys[1:]
    single = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]
    assert sorted(regions) == sorted([(r, c, 1, 1) for r, c in single] + [(1, 0, 2, 1)])


def test_cells_that_are_no_rectangles_make_no_table() -> None:
    xs, ys = [0.0, 50.0, 100.0], [0.0, 20.0, 40.0]
    # The rule between the rows stops halfway, the column rule too: an L-shaped region.
    hs = [(0.0, 0.0, 100.0), (20.0, 50.0, 100.0), (40.0, 0.0, 100.0)]
    vs = [(0.0, 0.0, 40.0), (50.0, 20.0, 40.0), (100.0, 0.0, 40.0)]
    assert _cell_regions(xs, ys, hs, vs) is None


def test_a_cell_over_a_group_of_columns_is_cut_where_its_text_is() -> None:
    xs, ys = [0.0, 40.0, 80.0, 120.0], [0.0, 20.0]
    # Two numbers, one a column: cut; a label across an edge: spans.
    numbers = [(10.0, 30.0, 10.0, 8.0), (90.0, 110.0, 10.0, 8.0)]
    assert _split_unruled([(0, 0, 1, 3)], xs, ys, numbers) == [
        (0, 0, 1, 1),
        (0, 1, 1, 1),
        (0, 2, 1, 1),
    ]
    label = [(30.0, 70.0, 10.0, 8.0), (90.0, 110.0, 10.0, 8.0)]
    assert _split_unruled([(0, 0, 1, 3)], xs, ys, label) == [(0, 0, 1, 2), (0, 2, 1, 1)]
    # Text in one column only: a label beside none of the others' text spans them all.
    assert _split_unruled([(0, 0, 1, 3)], xs, ys, label[:1]) == [(0, 0, 1, 3)]


def test_spanning_cells_are_written_as_html_with_a_head_of_two_rows() -> None:
    rows = [
        ["School", "Pupils", "", "Teachers"],
        ["", "Girls", "Boys", ""],
        ["Hill & Dale", "214", "198", "<17>"],
    ]
    spans = [[0, 0, 2, 1], [0, 1, 1, 2], [0, 3, 2, 1]]
    assert html_table(rows, spans) == (
        "<table>\n"
        '<tr><th rowspan="2">School</th><th colspan="2">Pupils</th>'
        '<th rowspan="2">Teachers</th></tr>\n'
        "<tr><th>Girls</th><th>Boys</th></tr>\n"
        "<tr><td>Hill &amp; Dale</td><td>214</td><td>198</td><td>&lt;17&gt;</td></tr>\n"
        "</table>"
    )
    # A first column merged down the body is no head.
    body = html_table([["Region", "City"], ["North", "Oslo"], ["", "Bodo"]], [[1, 0, 2, 1]])
    assert body.count("<th>") == 2 and '<td rowspan="2">North</td>' in body


def test_a_padding_box_inside_a_box_of_its_colour_draws_no_rules() -> None:
    blue, white = 0x548ED4FF, 0xFFFFFFFF
    cell, padding = (70.8, 72.2, 395.0, 100.4, blue), (73.3, 88.3, 392.3, 98.4, blue)
    stroked = (73.3, 88.3, 392.3, 98.4, None)  # an outline shows, whatever it lies in
    other = (73.3, 88.3, 392.3, 98.4, white)  # another colour shows against the box
    assert _visible_boxes([cell, padding, stroked, other]) == [
        b[:4] for b in (cell, stroked, other)
    ]


def test_a_cell_spanning_rows_is_cut_where_its_lines_sit_in_the_rows_beside() -> None:
    xs, ys = [0.0, 100.0, 140.0], [0.0, 20.0, 40.0, 60.0]
    # Below the head, the first column's two rows are one ruled cell holding one line each.
    lines = [(5.0, 60.0, 30.0, 8.0), (5.0, 70.0, 50.0, 8.0), (110.0, 130.0, 30.0, 8.0)]
    regions = [(0, 0, 1, 1), (0, 1, 1, 1), (1, 0, 2, 1), (1, 1, 1, 1), (2, 1, 1, 1)]
    assert sorted(_split_unruled(regions, xs, ys, lines)) == sorted(
        [(0, 0, 1, 1), (0, 1, 1, 1), (1, 0, 1, 1), (2, 0, 1, 1), (1, 1, 1, 1), (2, 1, 1, 1)]
    )
    # One label in the middle of the rows it spans: it stays one cell for both.
    label = [(5.0, 60.0, 40.0, 8.0)]
    assert (1, 0, 2, 1) in _split_unruled(regions, xs, ys, label)
