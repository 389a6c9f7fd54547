"""Headings by font: what a block's lines say of it being a heading, which blocks are one against
the body size, and the level of each heading style."""

from __future__ import annotations

import re
from collections import Counter

from pagefleet.layout.lines import BULLETS, labelled
from pagefleet.layout.schema import Line

_HEADING_WORD = re.compile(r"[^\W\d_]{3,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


# Plain tuples, as they are built per block written (see pagefleet.layout.writer).
# What the heading test needs of a block, whatever the body size turns out to be: (size bucket,
# bold, words, whether it passes the tests of a bold run-in heading but the size).
HeadingShape = tuple[float, bool, int, bool]
# A heading's style, the unit heading levels are given to: (size bucket, bold).
HeadingStyle = tuple[float, bool]


def bucket(size: float) -> float:
    return round(size * 2) / 2


def heading_shape(lines: list[Line], texts: list[str], sizes: list[float]) -> HeadingShape | None:
    """What decides whether a block is a heading, but the body size; None: never a heading.
    ``texts`` and ``sizes`` are the lines' texts and sizes."""
    if not lines or len(lines) > 3:
        return None
    text = " ".join(texts).strip()
    # A heading has a word: "76a 76b" or "(c)" in bold is a form's field number.
    if not text or len(text) > 150 or not _HEADING_WORD.search(text):
        return None
    if text[0] in BULLETS and (len(text) == 1 or text[1].isspace()):
        return None  # a bullet point set large (slides) is a list item, not a heading
    size = bucket(max(sizes))
    # Every span with text bold; or an entry's title that opens with a bold label (labelled).
    bold = _all_bold(lines) or (len(lines) == 1 and labelled(lines[0]))
    words = len(text.split())
    run_in = (
        bold
        and words <= 12
        and not text.endswith((".", ",", ";"))
        and (text[0].isupper() or text[0].isdigit())
    )
    return size, bold, words, run_in


def _all_bold(lines: list[Line]) -> bool:
    """Whether every span of the lines that holds text is bold (a loop: this runs for every
    block that could be a heading)."""
    for line in lines:
        for span in line["spans"]:
            if not span.get("b") and span["t"].strip():
                return False
    return True


def shape_style(shape: HeadingShape, body: float) -> HeadingStyle | None:
    """(size, bold) of a block of this shape that looks like a heading, else None."""
    size, bold, words, run_in = shape
    if size >= body * 1.15 and words <= 25:
        return size, bold
    if run_in and size >= body - 0.5:
        return size, bold
    return None


def style_levels(styles: dict[HeadingStyle, Counter[int]]) -> dict[HeadingStyle, int]:
    """Heading level per (size, bold) style, largest first.

    A style that outline entries were found in takes their most common level; any other takes
    one level below the nearest larger style (or level 1), so font ranking fills in only where
    the outline says nothing. Without an outline this is plain ranking by size.
    """
    levels: dict[HeadingStyle, int] = {}
    above = 0
    for style in sorted(styles, key=lambda s: (-s[0], not s[1])):
        seen = styles[style]
        level = seen.most_common(1)[0][0] if seen else above + 1
        levels[style] = min(max(level, 1), 6)
        above = levels[style]
    return levels
