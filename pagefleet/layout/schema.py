"""The page layout a runner extracts and the completion step renders.

A layout is plain JSON (it travels through S3 inside every chunk result), so it is kept compact:
coordinates are rounded to 0.1 pt, only fields the renderer reads are stored, and flags that are
usually false are left out. Coordinates are in points, origin top-left, y growing downwards.

Every page dict depends only on that page's content (rule 5): nothing in it refers to another
page, so a chunk PDF yields the same dicts as the whole document.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict, final

Bbox = list[float]  # [x0, y0, x1, y1]


class Span(TypedDict):
    """A run of text in one style on one line."""

    t: str  # text, with pdftext's ligature and whitespace clean-up applied
    s: float  # effective font size in points (font size times the text matrix scale)
    b: NotRequired[bool]  # bold
    i: NotRequired[bool]  # italic
    u: NotRequired[str]  # external link target; links into other pages are dropped (rule 5)
    m: NotRequired[bool]  # monospaced font (a code listing's, or code inline)


class Line(TypedDict):
    bbox: Bbox
    spans: list[Span]
    hy: NotRequired[bool]  # ends in a hyphen the PDF marks as a soft (line-break) hyphen
    # Cut from the line before it (one run of text in the PDF) only so that a table may take
    # the two as cells; never stored: the segmenter joins them back or drops the flag.
    cut: NotRequired[bool]


@final
class TextBlock(TypedDict):
    """A paragraph, list item or heading candidate, lines in reading order."""

    bbox: Bbox
    lines: list[Line]
    fig: NotRequired[bool]  # the labels of a plot: one block of figure text, never a heading
    code: NotRequired[bool]  # a code listing: its lines kept as set, never a heading


@final
class TableBlock(TypedDict):
    """A table: rows of cell texts, each row as wide as the table."""

    bbox: Bbox
    rows: list[list[str]]
    # The cells that span rows or columns, each [row, column, rows, columns]; the places they
    # cover besides their own hold empty strings. Left out when no cell spans.
    span: NotRequired[list[list[int]]]


@final
class ImageBlock(TypedDict):
    """A picture of the page (an image it holds, or a drawing rendered) written as an asset."""

    bbox: Bbox
    image: str  # the asset's name, unique in the document (it carries the page number)
    # What it shows, digested: the same picture on many pages (a logo) is furniture.
    key: NotRequired[str]
    # A drawing's labels, each its lines, in reading order: written as text after it, and
    # left out with it.
    labels: NotRequired[list[list[Line]]]


# Tell them apart by key: ``"rows"``, ``"lines"`` or ``"image" in block``. All are @final, so
# that mypy narrows the union on that test (a TypedDict that is not final might carry another's
# key too).
Block = TextBlock | TableBlock | ImageBlock


class Page(TypedDict):
    number: int  # 1-based page number in the whole document
    ocr: bool  # the text came from OCR, not from the PDF's text layer
    width: float
    height: float
    blocks: list[Block]  # in reading order


class OutlineEntry(TypedDict):
    """One bookmark of the document outline."""

    title: str
    level: int  # 1 for top-level bookmarks
    page: int | None  # 1-based target page, None when it points nowhere
    # Where on the page the destination points, from the top in layout coordinates, when it
    # says (many producers point at the heading's baseline or just above it).
    top: NotRequired[float]
