"""Outline titles in a chunk: the blocks that hold a bookmark's title, alone or with the block
after them, on the page the bookmark points at or the page after or before it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from pagefleet.layout.lines import line_text
from pagefleet.layout.schema import Line, OutlineEntry, Page


class TitleBlock(NamedTuple):
    """A block holding an outline entry's title."""

    shift: int  # 0, 1, 2: on the entry's page, the page after, the page before
    page_number: int
    block: int  # index on the page
    distance: float  # from the height the entry points at; 0.0 where it gives none
    alone: bool  # the block holds the title by itself, else only with the block after it
    missing: int  # the title's words that it (with the block after it) lacks


_TITLE_WORD = re.compile(r"[^\W\d_]+|\d+")
# A block holding a bookmark's title: most of the title's words, and not much else.
_TITLE_COVER = 0.8
_BLOCK_COVER = 0.4
_TITLE_MAX_LINES = 4


def _title_words(text: str) -> Counter[str]:
    return Counter(_TITLE_WORD.findall(text.lower()))


def _holds(title: Counter[str], have: Counter[str]) -> bool:
    """Whether a block with words ``have`` holds a bookmark title with words ``title``.

    Most of the title's words, and few words of other letters: numbers and dates a heading
    carries beyond its bookmark ("Exhibit 2.3.59-1 (07-01-2019) ...") are not held against it.
    """
    common = title & have
    if sum(common.values()) < _TITLE_COVER * sum(title.values()):
        return False
    letters = sum(n for w, n in have.items() if not w.isdigit())
    held = sum(n for w, n in common.items() if not w.isdigit())
    return held >= _BLOCK_COVER * letters


def find_titles(
    pages: Sequence[Page], outline: Sequence[OutlineEntry], kept: dict[tuple[int, int], list[Line]]
) -> dict[int, list[TitleBlock]]:
    """Per entry of the document's ``outline``, the blocks of a chunk's ``pages`` that hold its
    title (:func:`pagefleet.layout.analysis.match_outline` picks one). ``kept``: per (page
    index, block index), the block's lines that are not furniture."""
    index = {page["number"]: pi for pi, page in enumerate(pages)}
    words: dict[tuple[int, int], Counter[str] | None] = {}

    def words_of(pi: int, bi: int) -> Counter[str] | None:
        if (pi, bi) not in words:
            lines = kept.get((pi, bi))
            short = lines is not None and len(lines) <= _TITLE_MAX_LINES
            block = pages[pi]["blocks"][bi]
            if lines is None or not short or block.get("fig") or block.get("code"):
                words[pi, bi] = None
            else:
                words[pi, bi] = _title_words(" ".join(map(line_text, lines)))
        return words[pi, bi]

    found: dict[int, list[TitleBlock]] = {}
    for i, entry in enumerate(outline):
        target = entry.get("page")
        if target is None:
            continue
        title: Counter[str] | None = None
        for shift, number in enumerate((target, target + 1, target - 1)):
            pi = index.get(number)
            if pi is None:
                continue
            if title is None:
                title = _title_words(entry["title"])
            if not title:
                break
            top = entry.get("top")
            blocks = pages[pi]["blocks"]
            for bi, block in enumerate(blocks):
                have = words_of(pi, bi)
                # A block with none of the title's words holds none of it, alone or as the
                # first of two (the second would then hold it alone, and is tried itself).
                if have is None or not title.keys() & have.keys():
                    continue
                distance = abs(block["bbox"][1] - top) if top is not None and not shift else 0.0
                missing = sum((title - have).values())
                alone = _holds(title, have)
                if alone:
                    found.setdefault(i, []).append(
                        TitleBlock(shift, number, bi, distance, True, missing)
                    )
                    if not missing:
                        continue
                # With the block after it: a title set on two lines that the block alone
                # holds only in part ("How to contribute to" / "MuPDF") is found whole.
                after = words_of(pi, bi + 1) if bi + 1 < len(blocks) else None
                if after is None or not _holds(title, have + after):
                    continue
                both = sum((title - have - after).values())
                if not alone or both < missing:
                    found.setdefault(i, []).append(
                        TitleBlock(shift, number, bi, distance, False, both)
                    )
    return found
