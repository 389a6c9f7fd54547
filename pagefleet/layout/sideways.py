"""A region of a page set sideways (a landscape table turned onto a portrait page), read in
its own frame.

The text layer gives text set at a right angle one word a line, each box tall and narrow:
read as the page stands, a sideways table came out a word a paragraph, the short words (a
unit, a number; boxes no taller than wide) read first among the page's flat lines, the others
last (mineru's demo1.pdf, page 5: Table 1 turned a quarter to the left). Where many upright
words fill a good share of the page's height, they and the short words among them are turned
back into their own frame, joined into lines and read there (rows of a table across, a
caption), and their blocks are turned back onto the page: read after the page's flat text, as
upright lines always were (see :func:`pagefleet.layout.reading_order.reading_order`), and as pdfium
gives them when the table comes last in the content stream.
"""

from __future__ import annotations

from itertools import pairwise
from statistics import median

from pagefleet.layout.lines import is_upright
from pagefleet.layout.schema import Bbox, Block, Line

# A sideways region holds so many upright words (lines.is_upright; a table of a few rows),
# and reaches over this share of the height of the page's text (a table's heads turned
# upright over its columns are short: they stay where they are).
_MIN_WORDS = 12
_MIN_REACH = 0.4
# A short word of the region: no wider than this many times an upright word's thickness.
_THICK = 1.5


def find_sideways(lines: list[Line]) -> tuple[list[int], bool] | None:
    """The indexes of the lines of a sideways region (see the module's docstring), and
    whether its text runs upwards (turned a quarter to the left, as landscape tables are);
    None where the page has none."""
    boxes = [line["bbox"] for line in lines]
    upright = [i for i, line in enumerate(lines) if is_upright(line)]
    if len(upright) < _MIN_WORDS:
        return None
    x0 = min(boxes[i][0] for i in upright)
    y0 = min(boxes[i][1] for i in upright)
    x1 = max(boxes[i][2] for i in upright)
    y1 = max(boxes[i][3] for i in upright)
    top = min(box[1] for box in boxes)
    bottom = max(box[3] for box in boxes)
    if y1 - y0 < _MIN_REACH * (bottom - top):
        return None
    thick = median(boxes[i][2] - boxes[i][0] for i in upright)
    members = [
        i
        for i, box in enumerate(boxes)
        if x0 <= (box[0] + box[2]) / 2 <= x1
        and y0 <= (box[1] + box[3]) / 2 <= y1
        and box[2] - box[0] <= _THICK * thick
    ]
    return members, _runs_upwards(boxes, upright)


def _runs_upwards(boxes: list[Bbox], upright: list[int]) -> bool:
    """Whether the words of a line follow one another upwards: of the upright words the text
    layer gives one after the other on one line (their boxes side by side along it), more
    stand above the word before them than below it; upwards where as many do."""
    up = down = 0
    for a, b in pairwise(upright):
        (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = boxes[a], boxes[b]
        if min(ax1, bx1) - max(ax0, bx0) < 0.5 * min(ax1 - ax0, bx1 - bx0):
            continue  # not on one line
        up += by1 <= ay0
        down += by0 >= ay1
    return up >= down


def turn(line: Line, upwards: bool, reach: float) -> Line:
    """``line`` in its own frame: the page turned so that its text runs left to right, lines
    under one another (``reach``: the page's bottom or right edge, to keep places positive)."""
    x0, y0, x1, y1 = line["bbox"]
    turned = line.copy()
    turned["bbox"] = (
        [reach - y1, x0, reach - y0, x1] if upwards else [y0, reach - x1, y1, reach - x0]
    )
    return turned


def turn_back(blocks: list[Block], upwards: bool, reach: float) -> list[Block]:
    """Blocks read in a sideways frame (see :func:`turn`) with their boxes, and their lines',
    on the page again."""
    for block in blocks:
        block["bbox"] = _back(block["bbox"], upwards, reach)
        if "lines" in block:
            for line in block["lines"]:
                line["bbox"] = _back(line["bbox"], upwards, reach)
    return blocks


def _back(box: Bbox, upwards: bool, reach: float) -> Bbox:
    a0, b0, a1, b1 = box
    return [b0, reach - a1, b1, reach - a0] if upwards else [reach - b1, a0, reach - b0, a1]
