"""Page geometry: a page's blocks in reading order, from the lines of one page.

Pure functions over :class:`~pagefleet.layout.schema.Line` dicts, so the same code orders lines
from the PDF text layer and lines from OCR. Only one page is ever looked at (rule 5). This is the
entry point (:func:`page_blocks`): it takes out what reads as one box (listings, plots, cards,
tables without rules, a region set sideways) and composes the reading order of the rest
(:mod:`.reading_order`) with the paragraphs (:mod:`.paragraphs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from statistics import median

from pagefleet.layout.cards import find_cards
from pagefleet.layout.lines import is_upright, line_size, line_text, union
from pagefleet.layout.listings import find_listings
from pagefleet.layout.paragraphs import paragraphs
from pagefleet.layout.plots import find_figures
from pagefleet.layout.reading_order import reading_order, row_order
from pagefleet.layout.rows import merge_rows, rejoined
from pagefleet.layout.schema import Bbox, Block, Line
from pagefleet.layout.sideways import find_sideways, turn, turn_back
from pagefleet.layout.unruled import unruled_tables


def page_blocks(lines: list[Line], tables: Sequence[Block] = ()) -> list[Block]:
    """A page's blocks in reading order: paragraphs, code listings, the labels of a plot as one
    figure block, each card of a grid of cards as one (:mod:`.cards`), tables without rules,
    and ``tables`` (ruled, found apart, their text out of ``lines``) where their boxes stand in
    the reading order: a table filling a column reads with that column, before the column
    beside it.

    Lines set upright beside a page of lines set flat (a preprint server's stamp along the
    margin), larger than the flat text, are figure text too: their size would rank them as
    headings. Others stay text: a printer's slug, read as a note; a form's section label set
    upright in bold at the text's size ("Tax and Credits"), a run-in heading as before. A region
    set sideways (a landscape table turned onto the page) is read in its own frame, after the
    rest (:mod:`.sideways`).
    """
    sideways = find_sideways(lines)
    turned: list[Block] = []
    if sideways is not None:
        lines, turned = _read_sideways(lines, *sideways)
    blocks = _page_blocks(merge_rows(lines), tables) + turned
    upright = [line for line in lines if is_upright(line)]
    if not upright or 2 * len(upright) >= len(lines):
        return blocks
    usual = median(line_size(line) for line in lines if not is_upright(line))
    for block in blocks:
        if "lines" not in block or not all(is_upright(ln) for ln in block["lines"]):
            continue
        if any(line_size(ln) > 1.1 * usual for ln in block["lines"]):
            block["fig"] = True
    return blocks


def _read_sideways(
    lines: list[Line], members: list[int], upwards: bool
) -> tuple[list[Line], list[Block]]:
    """The page's lines less a region set sideways (see :mod:`~pagefleet.layout.sideways`),
    and the region's blocks, read in its own frame: its words ordered along its lines, so
    that the pieces of a line follow one another to be joined, then read as a page is."""
    inside = set(members)
    reach = max(max(lines[i]["bbox"][2], lines[i]["bbox"][3]) for i in members)
    region = [turn(lines[i], upwards, reach) for i in members]
    order = row_order([line["bbox"] for line in region], list(range(len(region))))
    blocks = _page_blocks(merge_rows([region[k] for k in order]), ())
    rest = [line for i, line in enumerate(lines) if i not in inside]
    return rest, turn_back(blocks, upwards, reach)


def _page_blocks(lines: list[Line], tables: Sequence[Block]) -> list[Block]:
    # Each listing, figure and table takes part in the reading order as one box (a stand-in
    # line).
    cut = [bool(line.get("cut")) for line in lines]
    if any(cut):
        lines = [_uncut(line) for line in lines]
    stand_ins: dict[int, list[Block]] = {}
    taken: set[int] = set()
    rest_lines = [_stand_in(stand_ins, table["bbox"], table) for table in tables]
    listings = find_listings(lines)
    code = {i for listing in listings for i in listing}
    free = [i for i in range(len(lines)) if i not in code]
    for figure in find_figures([lines[i] for i in free]):
        labels = [lines[free[k]] for k in figure]
        box = union([line["bbox"] for line in labels])
        # The labels come out in the order the PDF wrote them (axis by axis, the legend).
        rest_lines.append(_stand_in(stand_ins, box, {"bbox": box, "lines": labels, "fig": True}))
        taken.update(free[k] for k in figure)
    # A grid of cards reads card by card, before its rows can make a table's.
    free = [i for i in range(len(lines)) if i not in taken]
    for cards in find_cards([lines[i]["bbox"] for i in free], [line_text(lines[i]) for i in free]):
        grid: list[Block] = []
        for card in cards:
            held = [lines[free[k]] for k in card]
            # Each card one paragraph, never a heading nor run on into the card beside it (as
            # the writer continues a paragraph at a column's top): set apart as a plot's labels.
            grid.append({"bbox": union([ln["bbox"] for ln in held]), "lines": held, "fig": True})
        rest_lines.append(_stand_in(stand_ins, union([b["bbox"] for b in grid]), *grid))
        taken.update(free[k] for card in cards for k in card)
    # A table set in a monospaced font, under a head that is not, is a table; columns a
    # listing lines up (its comments) are the listing's.
    free = [i for i in range(len(lines)) if i not in taken]
    for members, rows in unruled_tables(lines, free, code):
        box = union([lines[i]["bbox"] for i in members])
        rest_lines.append(_stand_in(stand_ins, box, {"bbox": box, "rows": rows}))
        taken |= members
    if any(cut):
        # Rows whose pieces no table took may make one as whole lines, as they did before
        # they were cut: a label and a run of numbers, two cells, when the numbers cut apart
        # leave some rows without a cell for each column.
        joined = rejoined(lines, cut, taken)
        if len(joined) < len(lines) - len(taken):
            whole = [line for line, _ in joined]
            whole_code = {k for k, (_, parts) in enumerate(joined) if set(parts) <= code}
            for members, rows in unruled_tables(whole, list(range(len(whole))), whole_code):
                box = union([whole[k]["bbox"] for k in members])
                rest_lines.append(_stand_in(stand_ins, box, {"bbox": box, "rows": rows}))
                taken.update(i for k in members for i in joined[k][1])
    # A table taken from a listing parts it: its lines above the table and below are two.
    parts = [
        list(part)
        for listing in listings
        for out, part in groupby(listing, lambda i: i in taken)
        if not out
    ]
    for kept in parts:
        if len(kept) >= 2:
            box = union([lines[i]["bbox"] for i in kept])
            block: Block = {"bbox": box, "lines": [lines[i] for i in kept], "code": True}
            rest_lines.append(_stand_in(stand_ins, box, block))
            taken.update(kept)
    rest = [line for line, _ in rejoined(lines, cut, taken)]
    if not stand_ins:
        return [block for region in reading_order(rest) for block in paragraphs(region)]
    rest += rest_lines
    blocks: list[Block] = []
    for region in reading_order(rest):
        run: list[Line] = []
        for line in region:
            if id(line) in stand_ins:
                blocks += paragraphs(run)
                blocks += stand_ins[id(line)]
                run = []
            else:
                run.append(line)
        blocks += paragraphs(run)
    return blocks


def _uncut(line: Line) -> Line:
    if "cut" not in line:
        return line
    plain = line.copy()
    del plain["cut"]
    return plain


def _stand_in(stand_ins: dict[int, list[Block]], box: Bbox, *blocks: Block) -> Line:
    line: Line = {"bbox": box, "spans": []}
    stand_ins[id(line)] = list(blocks)
    return line
