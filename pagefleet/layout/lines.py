"""One line as the layout reads it: its text, its size and weight, the markers that open a list
item or a caption, and the box around lines. Kept apart so that the reading order, the
paragraphs and the writer all read a line the same way.
"""

from __future__ import annotations

import re

from pagefleet.layout.schema import Bbox, Line, Page, Span

# A list item starts with a bullet glyph, or a number/letter with "." or ")" then a space.
# U+F0B7 and friends are Symbol/Wingdings bullets that fonts without a ToUnicode map leave
# in the private use area.
BULLETS = "•◦▪▫‣∙·●○■□➢➤►▶✓✔-–—*\uf0b7\uf0a7\uf076\uf0d8\uf0fc\uf06e\uf0a8"
LIST_MARKER = re.compile(
    rf"^\s*(?:[{re.escape(BULLETS)}](?:\s+|$)|\(?(?:\d{{1,3}}|[a-zA-Z]|[ivxlcIVXLC]{{1,5}})[.)](?:\s+|$))"
)


# A figure's or table's caption: it stays text beside a picture, and ends a paragraph.
CAPTION = re.compile(
    r"^\W*(?=[A-Z])(?i:fig(?:ure)?s?|tab(?:le)?s?|abb(?:ildung)?|chart|graph|diagram|scheme|"
    r"plate|map|listing|exhibit|illustration|photo)\.?\s*(?:\d|[IVX]+\b|[A-Z]\.?\d)"
)


def line_text(line: Line) -> str:
    spans = line["spans"]
    # Most lines are one span: its text, without a join.
    if len(spans) == 1:
        return spans[0]["t"]
    return "".join([span["t"] for span in spans])


# A page's text lines read once, where the renderer reads each several times (the furniture,
# the body size, the headings): per text block's index, its lines' texts and sizes.
PageLines = dict[int, tuple[list[str], list[float]]]


def read_lines(page: Page) -> PageLines:
    read: PageLines = {}
    for bi, block in enumerate(page["blocks"]):
        if "lines" not in block:
            continue
        texts: list[str] = []
        sizes: list[float] = []
        for line in block["lines"]:
            spans = line["spans"]
            if len(spans) == 1:  # most lines: line_text and line_size without two calls
                texts.append(spans[0]["t"])
                sizes.append(spans[0]["s"])
            else:
                texts.append(line_text(line))
                sizes.append(line_size(line))
        read[bi] = (texts, sizes)
    return read


# A line this many times taller than wide, with this many characters at least, runs upright.
_UPRIGHT = 2.0
_UPRIGHT_CHARS = 4


def is_upright(line: Line) -> bool:
    x0, y0, x1, y1 = line["bbox"]
    return y1 - y0 > _UPRIGHT * max(x1 - x0, 1.0) and len(line_text(line).strip()) >= _UPRIGHT_CHARS


_ALNUM = re.compile(r"[^\W_]")


def _worded(spans: list[Span]) -> list[Span]:
    """The spans with letters or digits, or all spans when none has any: a bullet glyph set
    large or in another font says nothing about the line's size or weight."""
    worded = [s for s in spans if _ALNUM.search(s["t"])]
    return worded or [s for s in spans if s["t"].strip()]


def line_size(line: Line) -> float:
    """The size of most of the line's characters (bullets and other symbols aside)."""
    spans = line["spans"]
    if len(spans) == 1:
        return spans[0]["s"]
    # Most lines of several spans are set in one size: theirs, unless every span is blank.
    # (Loops, not all()/any() over generators: this runs for every line a chunk has.)
    size = spans[0]["s"] if spans else 0.0
    for span in spans:
        if span["s"] != size:
            break
    else:
        for span in spans:
            if span["t"].strip():
                return size
        return 0.0
    weights: dict[float, int] = {}
    for span in _worded(spans):
        weights[span["s"]] = weights.get(span["s"], 0) + len(span["t"].strip())
    if not weights:
        return 0.0
    return max(weights, key=lambda size: (weights[size], size))


def is_bold(line: Line) -> bool:
    spans = _worded(line["spans"])
    return bool(spans) and all(s.get("b") for s in spans)


_WORD = re.compile(r"[^\W\d_]{3,}")


def labelled(line: Line) -> bool:
    """Whether a line is a bold label, then words in the body's weight, every letter a capital:
    an entry's title in a data dictionary or a glossary ("**PS** – PERIOD OF SERVICE RECODE"),
    which the lines under it describe. (Scripts without case have no such titles.)"""
    spans = _worded(line["spans"])
    if len(spans) < 2 or not spans[0].get("b"):
        return False
    rest = "".join(s["t"] for s in spans if not s.get("b"))
    return bool(_WORD.search(rest)) and all(c.isupper() for c in line_text(line) if c.isalpha())


def union(boxes: list[Bbox]) -> Bbox:
    return [
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    ]


def line_head(line: Line) -> str:
    """The start of a line's text, enough for a list marker (its first span where long)."""
    spans = line["spans"]
    return spans[0]["t"] if spans and len(spans[0]["t"]) >= 8 else line_text(line)


def line_tail(line: Line) -> str:
    """The end of a line's text, trailing spaces dropped (its last span where not blank)."""
    spans = line["spans"]
    tail = spans[-1]["t"].rstrip() if spans else ""
    return tail or line_text(line).rstrip()
