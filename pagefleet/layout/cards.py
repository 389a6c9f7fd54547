"""Grids of cards: records set in boxes side by side and row under row (an electoral roll's
voters, permits, badges), each card a few lines of labels and their values ("Name : Mira
Sethi", "House No : 4"). A reader reads them card by card: each card top to bottom, the cards
of a row left to right, then the next row. Read as lines across the page, the same label of
every card in a row stands level and the rows look like a table's (one line of each card a
row), which interleaves the records.

They are found from a page's layout lines alone (the boxes' rules are not in the layout; cards
set without rules read the same): a label that opens lines level with one another in two
columns or more, row after row, marks the grid (its anchor). Boxes that touch leave no wider
gap between two cards than inside one, so where a card starts is taken from the first row:
its cards start at the top line of their columns (under the last line across the columns
above), and every card starts as far above its anchor; a card ends where the one under it
starts, a single row's at the space under it.

Each card is written as a paragraph of its own, not as a table's cell: the columns of a grid
of cards are no attributes (each card is the same kind of record), so a table would need the
first row of cards for its head.
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import pairwise
from statistics import median

from pagefleet.layout.schema import Bbox

# A label: a word or a few, starting with a letter, before a colon ("House No :", "Age:").
_LABEL = re.compile(r"^\s*([^\W\d_][\w'’.\-/&]*(?:\s+[^\W_][\w'’.\-/&]*){0,3})\s*:")
# A card holds this many lines at least, this many of them labelled, each label of its own.
_MIN_LINES = 3
_MIN_LABELS = 2
# Lines stand level (and labels in one column line up) within this share of a line's height.
_LEVEL = 0.5
# A single row of cards ends at a gap this many lines tall.
_GAP = 2.0


def find_cards(boxes: list[Bbox], texts: list[str]) -> list[list[list[int]]]:
    """The card grids among the lines (``boxes`` and ``texts``, one of each a line): each a
    list of cards in reading order, each card the indexes of its lines top to bottom (a row's
    pieces left to right). A grid takes no line that another grid took."""
    keys: dict[str, list[int]] = defaultdict(list)
    for i, text in enumerate(texts):
        m = _LABEL.match(text)
        if m:
            keys[" ".join(m.group(1).lower().split())].append(i)
    unit = median([b[3] - b[1] for b in boxes]) if boxes else 0.0
    lattices = [(lat, key) for key, idx in keys.items() if (lat := _lattice(boxes, idx, unit))]
    # The label that opens the fewest lines per column of cards (once per card) and lies
    # leftmost, topmost: the grid's anchor; a label set twice per card makes no rows of cards.
    lattices.sort(key=lambda t: (-len(t[0][0]), len(t[0][1]), t[0][0][0], t[0][1][0]))
    grids: list[list[list[int]]] = []
    taken: set[int] = set()
    for (lefts, tops), key in lattices:
        free = [i for i in range(len(boxes)) if i not in taken]
        cards = _cards(boxes, free, lefts, tops, unit)
        if cards is None or not _records(cards, texts, key):
            continue
        grids.append(cards)
        taken.update(i for card in cards for i in card)
    return grids


def _lattice(
    boxes: list[Bbox], idx: list[int], unit: float
) -> tuple[list[float], list[float]] | None:
    """(column lefts, row tops) where the lines ``idx`` (one label's) open two columns or more,
    the k-th of every column level with the k-th of the first; the last row of cards may
    stop short (a roll's last page), so columns further right may hold fewer."""
    if len(idx) < 2:
        return None
    tol = _LEVEL * unit
    columns: list[list[float]] = []
    lefts: list[float] = []
    for i in sorted(idx, key=lambda i: boxes[i][0]):
        if lefts and boxes[i][0] - lefts[-1] <= tol:
            columns[-1].append(boxes[i][1])
        else:
            lefts.append(boxes[i][0])
            columns.append([boxes[i][1]])
    if len(columns) < 2:
        return None
    tops = sorted(columns[0])
    for column in columns[1:]:
        ys = sorted(column)
        if len(ys) > len(tops) or len(ys) < len(tops) - 1:
            return None
        if any(abs(y - top) > tol for y, top in zip(ys, tops, strict=False)):
            return None
    return lefts, tops


def _cards(
    boxes: list[Bbox], free: list[int], lefts: list[float], tops: list[float], unit: float
) -> list[list[int]] | None:
    """The cards of the grid whose anchor lines open at ``lefts`` and ``tops``, or None where
    the lines there make no grid (a line across two columns inside it, a row boundary through
    a line)."""
    tol = _LEVEL * unit
    # Columns: from each anchor's left (a little less: a line set a hair further out) to the
    # next one's; the last as wide as the one before it.
    edges = [left - tol for left in lefts]
    edges.append(edges[-1] + (edges[-1] - edges[-2]))

    def column(box: Bbox) -> int | None:
        """The column a line opens in; None for one that runs on into the next column."""
        for c in range(len(lefts)):
            if edges[c] <= box[0] < edges[c + 1]:
                return c if c == len(lefts) - 1 or box[2] <= edges[c + 1] + tol else None
        return None

    # The grid runs down from the anchors' first row to the first line across its columns
    # below it, and up to the last such line above it.
    across = [
        i
        for i in free
        if boxes[i][0] < edges[-1] and boxes[i][2] > edges[0] and column(boxes[i]) is None
    ]
    ceiling = max((boxes[i][3] for i in across if boxes[i][3] <= tops[0]), default=-1e9)
    floor = min((boxes[i][1] for i in across if boxes[i][1] >= tops[0]), default=1e9)
    if floor <= tops[-1]:
        return None
    inside = [i for i in free if ceiling <= boxes[i][1] and boxes[i][3] <= floor]
    by_column: list[list[int]] = [[] for _ in lefts]
    for i in inside:
        c = column(boxes[i])
        if c is not None:
            by_column[c].append(i)
    # Each card starts as far above its anchor as the first row's cards do: at the top line of
    # each column of the first row (the one nearest its anchor, where columns differ: a title
    # over the first column only is not the card's).
    lead = min(
        tops[0] - min((boxes[i][1] for i in col if boxes[i][1] <= tops[0] + tol), default=tops[0])
        for col in by_column
    )
    pitches = [b - a for a, b in pairwise(tops)]
    if pitches and lead >= min(pitches):
        return None
    starts = [top - lead for top in tops]
    end = min(floor, starts[-1] + max(pitches, default=floor))
    cards: list[list[int]] = []
    for r, start in enumerate(starts):
        stop = starts[r + 1] if r + 1 < len(starts) else end
        for col in by_column:
            card = [i for i in col if start - tol <= boxes[i][1] < stop - tol]
            if any(boxes[i][3] > stop + tol for i in card):
                return None  # a boundary through a line: no rows of cards
            if len(tops) == 1:
                card = _until_gap(boxes, card, unit)
            if card or r + 1 < len(starts):
                cards.append(_top_down(boxes, card))
    return cards


def _until_gap(boxes: list[Bbox], card: list[int], unit: float) -> list[int]:
    """A card's lines down to the first gap wider than two lines: with one row of cards,
    nothing below marks where a card ends but the space after it."""
    kept: list[int] = []
    for i in sorted(card, key=lambda i: boxes[i][1]):
        if kept and boxes[i][1] - max(boxes[j][3] for j in kept) > _GAP * unit:
            break
        kept.append(i)
    return kept


def _top_down(boxes: list[Bbox], card: list[int]) -> list[int]:
    """A card's lines row by row, each row's pieces left to right: a label and its value set
    apart, a label wrapped over two lines beside its value ("Father's" over "Name : ...")."""
    rows: list[list[int]] = []
    for i in sorted(card, key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        y0, y1 = boxes[i][1], boxes[i][3]
        if rows and any(
            min(y1, boxes[j][3]) - max(y0, boxes[j][1])
            > 0.6 * min(y1 - y0, boxes[j][3] - boxes[j][1])
            for j in rows[-1]
        ):
            rows[-1].append(i)
        else:
            rows.append([i])
    return [i for row in rows for i in sorted(row, key=lambda i: boxes[i][0])]


def _records(cards: list[list[int]], texts: list[str], anchor: str) -> bool:
    """Whether the cards are two or more and each a record: lines enough, its anchor label
    once, another label besides."""
    if len(cards) < 2:
        return False
    for card in cards:
        labels = [m.group(1) for i in card if (m := _LABEL.match(texts[i]))]
        named = [" ".join(label.lower().split()) for label in labels]
        if len(card) < _MIN_LINES or named.count(anchor) != 1 or len(set(named)) < _MIN_LABELS:
            return False
    return True
