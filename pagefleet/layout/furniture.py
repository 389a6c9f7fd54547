"""Page furniture: running heads and feet repeated across pages, page numbers, rotated stamps
in the side margins, and pictures repeated across pages (a logo).

A page's candidates are the lines in its top or bottom margin that are set off from the body,
the rotated lines beside the body, and its pictures; a candidate is furniture when its text,
digits ignored, recurs in the same margin on enough of the document's pages, or when it is only
a page number, or a rotated line in a side margin, or, in a document too short to show
repetition, a top-margin line smaller than the page's body text or a bottom line led or ended by
its page number and no smaller than the body text, or when the number it starts or ends with
runs with the page numbers (56 on one page, 57 on the next) on enough pages; a line in the page's
outermost row that no gap sets off is furniture when its text is furniture where a gap does set
it off, or when it is a page number alone in the row; a picture is furniture when it recurs on
enough pages, and a big one (a tenth of the page or more) when it is on half the pages: a slide
deck shows its pipeline diagram again on a few slides, and its template's background on all.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import NamedTuple

from pagefleet.layout.lines import PageLines, line_text, read_lines
from pagefleet.layout.schema import Bbox, Line, Page

# The band of a picture's key; a picture of a tenth of the page or more has a band of its own.
PICTURE = "picture"
BIG_PICTURE = "big picture"
_BIG = 0.1
# A rotated line beside the body, in a side margin: a stamp ("arXiv:...", a printer's slug).
SIDE = "side"
# A top-margin line smaller than the page's body text: a running head on a document too short
# for it to recur (the line's "top" key stands for it as well, to count its repeats).
SMALL_HEAD = "small head"
# A line of the page's last row led or ended by a number, as large as the body text at least
# ("206 Law Enforcement, Courts, and Prisons"): a running foot with its page number, on a
# document too short for it to recur (a footnote led by its number is set smaller).
SHORT_FOOT = "short foot"
# The number a margin line starts or ends with, less the page's number ("56 A. Author" on the
# page after "Title 55"): a running head's page number when it recurs ("top folio", "bottom
# folio"; the key's text is the difference, its size the line's).
FOLIO = " folio"
# A line in the page's first or last row, in the margin band, that no gap sets off from the
# body ("top edge", "bottom edge"; the key is the line's "top" or "bottom" key otherwise): a
# running foot that a tall line of the body (a formula) comes close to on one page.
EDGE = " edge"
TOP_EDGE, BOTTOM_EDGE = "top" + EDGE, "bottom" + EDGE
# Lines this close to the top or bottom edge (share of the page height) may be headers/footers;
# on a page with wide margins, lines this close to the page's first or last line.
_MARGIN = 0.12
# Documents of this many pages or fewer are too short to show a running head by repetition.
_SHORT = 2
# A line this many times taller than wide is set rotated; in the outer share of the page's
# width given by _SIDE, outside every other line, it is a stamp in the margin.
_ROTATED = 3.0
_SIDE = 0.15
# A running head is a short line.
_HEAD_WORDS = 15
_DIGITS = re.compile(r"\d+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:page\s*)?(?:#|[ivxlcdm]{1,6})(?:\s*(?:of|/)\s*#)?[-–—\s]*$", re.IGNORECASE
)
# A page label: a number after a capital letter or three ("A-3" in an appendix, "S12" in a
# supplement, "GE98" in a book of abstracts); keyed as a page number.
_PAGE_LABEL = re.compile(r"^[A-Z]{1,3}[-.]?\d{1,4}$")
# A running head's page number: a number apart from the words at the line's start or end.
_FOLIO = re.compile(r"^(\d{1,4})\s+\D.*[^\W\d_]|[^\W\d_].*\D\s(\d{1,4})$")
# A running foot's words beside its page number: two words or more, no number among them.
_FOOT_WORDS = re.compile(r"^\D*[^\W\d_]{2,}\W+[^\W\d_]{2,}\D*$")
# OCR misreads a line's punctuation from page to page ("第一篇" and "第一-篇"), and its sizes
# are the boxes' heights: an OCR line's key is its letters and digits.
_OCR_NOISE = re.compile(r"[^\w\s/]")


class LineRef(NamedTuple):
    """A line of a sequence of pages."""

    page_index: int  # of the page in the sequence
    block: int
    line: int


class MarginKey(NamedTuple):
    """A margin line's identity across pages, or a picture's."""

    band: str  # "top" or "bottom"; "picture"
    text: str  # digits as "#"; a picture's key
    # The line's size, rounded: a running head that repeats the title (on every other page
    # of an article) is set smaller than the title it repeats, which is no furniture.
    size: int = 0


# A line with its place on the page: (top, bottom, block index, line index, line); a plain
# tuple, as one is built per line (see pagefleet.layout.writer).
_Placed = tuple[float, float, int, int, Line]


def find_furniture(pages: Sequence[Page]) -> set[LineRef]:
    """Lines that are page furniture: headers and footers repeated across pages, page numbers
    (pictures that are furniture are left out: they have no lines).

    A candidate lies in the top or bottom margin and is set off from the body by the widest
    gap between the body's edge and the page's edge; it is furniture when its text, digits
    ignored, recurs in the same margin on several pages, or when it is only a page number.
    """
    margins = [margin_candidates(page, read_lines(page)) for page in pages]
    counts: Counter[MarginKey] = Counter()
    for found in margins:
        counts.update(found.keys())
    furniture = furniture_among(counts, counts, len(pages), len(pages))
    return {
        LineRef(pi, bi, li)
        for pi, found in enumerate(margins)
        for key, places in found.items()
        if key in furniture and key.band not in (PICTURE, BIG_PICTURE)
        for bi, li in places
    }


def furniture_among(
    keys: Iterable[MarginKey], counts: Counter[MarginKey], seen: int, total: int
) -> frozenset[MarginKey]:
    """Which of ``keys`` are furniture in a document of ``total`` pages, given on how many of
    the ``seen`` pages in hand each key is (``counts``): its pages, extrapolated to ``total``,
    reach the threshold, or it is a page number."""
    need = _need(total)

    def recurs(key: MarginKey) -> bool:
        return counts[key] * total >= need * seen

    return frozenset(
        key
        for key in keys
        if key.band == SIDE
        or (key.band in (SMALL_HEAD, SHORT_FOOT) and total <= _SHORT)
        or (key.band.endswith(EDGE) and recurs(key._replace(band=key.band.removesuffix(EDGE))))
        or (
            key.band not in (SMALL_HEAD, SHORT_FOOT, TOP_EDGE, BOTTOM_EDGE)
            and recurs(key)
            and (key.band != BIG_PICTURE or 2 * counts[key] >= seen)
        )
        or (key.band in ("top", "bottom") and _PAGE_NUMBER.match(key.text))
    )


def _need(total: int) -> int:
    """Pages a margin line must recur on to be furniture. Short documents need the line on
    2-3 pages; long ones on 5% of them, so that a table row or a title that recurs a few times
    in 400 pages stays."""
    return 2 if total <= 3 else max(3, math.ceil(0.05 * total))


def margin_candidates(page: Page, read: PageLines) -> dict[MarginKey, list[tuple[int, int]]]:
    """The page's candidates by key, with their (block, line) places: its margin lines, and
    its pictures that have a key (their line is -1). ``read``: the page's lines' texts and
    sizes."""
    found: dict[MarginKey, list[tuple[int, int]]] = {}
    body: float | None = None
    ocr = page.get("ocr", False)
    for band, bi, li, line in _margin_lines(page):
        text = read[bi][0][li]
        key = _furniture_key(_OCR_NOISE.sub("", text) if ocr else text)
        size = 0.0 if ocr else read[bi][1][li]
        found.setdefault(MarginKey(band, key, round(size)), []).append((bi, li))
        if band in (SIDE, TOP_EDGE) or len(text.split()) > _HEAD_WORDS or ocr:
            continue
        body = _body_size(read) if body is None else body
        folio = _FOLIO.match(text.strip())
        # A foot led or ended by a page number, no smaller than the body (a footnote is).
        foot = bool(
            folio
            and size >= 0.9 * body
            and line["bbox"][3] > _last_top(page)
            and _FOOT_WORDS.match(
                text.strip().removeprefix(folio.group(1) or "").removesuffix(folio.group(2) or "")
            )
        )
        if band == BOTTOM_EDGE:
            if foot:
                found.setdefault(MarginKey(SHORT_FOOT, key, round(size)), []).append((bi, li))
            continue
        if band == "top" and size < 0.9 * body:
            found.setdefault(MarginKey(SMALL_HEAD, key, round(size)), []).append((bi, li))
        # Set as running text, not as a heading: "2 Methods" atop the second page is no folio.
        if folio and size <= 1.1 * body and not all(s.get("b") for s in line["spans"]):
            number = int(folio.group(1) or folio.group(2))
            offset = str(number - page["number"])
            found.setdefault(MarginKey(band + FOLIO, offset, round(size)), []).append((bi, li))
        if band == "bottom" and foot:
            found.setdefault(MarginKey(SHORT_FOOT, key, round(size)), []).append((bi, li))
    area = (page["width"] * page["height"]) or 1.0
    for bi, block in enumerate(page["blocks"]):
        if "key" in block:
            x0, y0, x1, y1 = block["bbox"]
            band = BIG_PICTURE if (x1 - x0) * (y1 - y0) >= _BIG * area else PICTURE
            found.setdefault(MarginKey(band, block["key"]), []).append((bi, -1))
    return found


def _margin_lines(page: Page) -> Iterator[tuple[str, int, int, Line]]:
    """(band, block index, line index, line) of the lines set off in the top/bottom margin,
    and of the rotated lines in a side margin."""
    height = page["height"] or 1.0
    width = page["width"] or 1.0
    upright: list[tuple[int, int, Line]] = []
    rotated: list[tuple[int, int, Line]] = []
    for bi, block in enumerate(page["blocks"]):
        if "lines" in block:
            for li, line in enumerate(block["lines"]):
                (rotated if _rotated(line) else upright).append((bi, li, line))
    if upright and rotated:
        left = min(line["bbox"][0] for _, _, line in upright)
        right = max(line["bbox"][2] for _, _, line in upright)
        for bi, li, line in rotated:
            x0, _, x1, _ = line["bbox"]
            if (
                (x1 <= left and x1 <= width * _SIDE) or (x0 >= right and x0 >= width * (1 - _SIDE))
            ) and not _captions_table(line["bbox"], page, width):
                yield SIDE, bi, li, line
    placed = sorted(
        ((line["bbox"][1], line["bbox"][3], bi, li, line) for bi, li, line in upright),
        key=itemgetter(0),
    )
    if not placed:
        return
    # The bands reach from the page's edge, or from its text's edge where its margins are wide.
    top_edge = max(height * _MARGIN, placed[0][0] + height * _MARGIN / 2)
    bottom_edge = min(
        height * (1 - _MARGIN), max(item[1] for item in placed) - height * _MARGIN / 2
    )
    top = [item for item in placed if item[1] <= top_edge]
    heads = 0
    if len(top) < len(placed):
        # The top margin's lines above the widest gap before the body.
        heads = _widest_gap([*top, placed[len(top)]])
        for _, _, bi, li, line in top[:heads]:
            yield "top", bi, li, line
    feet = len(placed)
    bottom = [item for item in placed if item[0] >= bottom_edge]
    if len(bottom) < len(placed):
        first = len(placed) - len(bottom)
        cut = _widest_gap(placed[first - 1 :])
        # On a page of a few lines the bands meet: a line is one band's candidate only.
        feet = max(first - 1 + cut, heads) if cut else len(placed)
        for _, _, bi, li, line in placed[feet:]:
            yield "bottom", bi, li, line
    if len(placed) < 2:
        return
    # The outermost rows where no gap set them off: the lines level with the first (last).
    if not heads:
        row = [item for item in placed if item[0] < placed[0][1] and item[1] <= top_edge]
        yield from _edge_row("top", row)
    if feet == len(placed):
        last = max(item[0] for item in placed)
        row = [item for item in placed[heads:] if item[1] > last and item[0] >= bottom_edge]
        yield from _edge_row("bottom", row)


def _captions_table(box: Bbox, page: Page, width: float) -> bool:
    """Whether a rotated line stands level with a table, nearer to it than to the page's
    edge: the caption of a table set sideways (segment reads such a table in its own frame),
    not a stamp in the margin."""
    x0, y0, x1, y1 = box
    edge = min(x0, width - x1)
    return any(
        min(y1, b[3]) - max(y0, b[1]) > 0.5 * (y1 - y0) and max(b[0] - x1, x0 - b[2]) < edge
        for block in page["blocks"]
        if "rows" in block
        for b in [block["bbox"]]
    )


def _edge_row(band: str, row: list[_Placed]) -> Iterator[tuple[str, int, int, Line]]:
    """The lines of a page's outermost row that no gap sets off: a page number alone in the
    row is a candidate of ``band`` as if set off (a table's row has cells beside it); other
    lines are edge candidates."""
    if len(row) == 1 and _PAGE_NUMBER.match(_furniture_key(line_text(row[0][4]))):
        yield band, row[0][2], row[0][3], row[0][4]
        return
    for _, _, bi, li, line in row:
        yield band + EDGE, bi, li, line


def _rotated(line: Line) -> bool:
    x0, y0, x1, y1 = line["bbox"]
    return y1 - y0 > _ROTATED * max(x1 - x0, 1.0) and len(line_text(line).strip()) > 3


def _last_top(page: Page) -> float:
    """The top of the page's lowest line: a line reaching below it is in the last row."""
    return max(
        (
            line["bbox"][1]
            for block in page["blocks"]
            if "lines" in block
            for line in block["lines"]
        ),
        default=0.0,
    )


def _body_size(read: PageLines) -> float:
    """The size of most of the page's text."""
    # A dict, not a Counter: a Counter's missing key is a call into Python. Of sizes as
    # common, the first seen, as Counter.most_common has it.
    chars: dict[float, int] = {}
    for texts, sizes in read.values():
        for text, size in zip(texts, sizes, strict=True):
            chars[size] = chars.get(size, 0) + len(text)
    return max(chars, key=chars.__getitem__)


def _widest_gap(items: list[_Placed]) -> int:
    """Index after which the widest vertical gap (at least half a line) in ``items`` lies."""
    best, at = 0.0, 0
    reach = items[0][1]
    for i in range(1, len(items)):
        gap = items[i][0] - reach
        if gap > best and gap >= 0.5 * (items[i][1] - items[i][0]):
            best, at = gap, i
        reach = max(reach, items[i][1])
    return at


def _furniture_key(text: str) -> str:
    if _PAGE_LABEL.match(text.strip()):
        return "#"
    # Runs of spaces as one, none at either end (str.split() splits where a regex's \s does).
    text = " ".join(text.lower().split())
    # Digits vary from page to page in running heads ("Page 3", "2.3.59-12"), but a line
    # of numbers only (a table row) must match exactly to count as repeated.
    worded = (
        _ASCII_LETTER.search(text) is not None  # str.isalpha's letters, where all are ASCII
        if text.isascii()
        else any(c.isalpha() for c in text)
    )
    return _DIGITS.sub("#", text) if worded or len(text) <= 4 else text
