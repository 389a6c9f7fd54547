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


class _Words(NamedTuple):
    """A block's words, or a title's, counted."""

    counts: dict[str, int]
    total: int
    letters: int  # of them, the words that are not numbers


def _title_words(text: str) -> _Words:
    counts = Counter(_TITLE_WORD.findall(text.lower()))
    letters = sum(n for w, n in counts.items() if not w.isdigit())
    return _Words(counts, counts.total(), letters)


def _held(title: _Words, have: _Words, after: _Words | None = None) -> tuple[int, bool]:
    """How many of the title's words a block with words ``have`` (and the block after it, with
    ``after``) holds, and whether it holds the title.

    Most of the title's words, and few words of other letters: numbers and dates a heading
    carries beyond its bookmark ("Exhibit 2.3.59-1 (07-01-2019) ...") are not held against it.
    (Counted word by word: Counter's arithmetic builds a Counter in Python per operation, and
    a title is tried against every block of three pages.)
    """
    held = held_letters = 0
    for w, n in title.counts.items():
        found = have.counts.get(w, 0) + (after.counts.get(w, 0) if after is not None else 0)
        if found:
            common = min(n, found)
            held += common
            if not w.isdigit():
                held_letters += common
    if held < _TITLE_COVER * title.total:
        return held, False
    letters = have.letters + (after.letters if after is not None else 0)
    return held, held_letters >= _BLOCK_COVER * letters


def find_titles(
    pages: Sequence[Page], outline: Sequence[OutlineEntry], kept: dict[tuple[int, int], list[Line]]
) -> dict[int, list[TitleBlock]]:
    """Per entry of the document's ``outline``, the blocks of a chunk's ``pages`` that hold its
    title (:func:`pagefleet.layout.analysis.match_outline` picks one). ``kept``: per (page
    index, block index), the block's lines that are not furniture."""
    index = {page["number"]: pi for pi, page in enumerate(pages)}
    words: dict[tuple[int, int], _Words | None] = {}

    def words_of(pi: int, bi: int) -> _Words | None:
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
        title: _Words | None = None
        for shift, number in enumerate((target, target + 1, target - 1)):
            pi = index.get(number)
            if pi is None:
                continue
            if title is None:
                title = _title_words(entry["title"])
            if not title.total:
                break
            top = entry.get("top")
            blocks = pages[pi]["blocks"]
            for bi, block in enumerate(blocks):
                have = words_of(pi, bi)
                if have is None:
                    continue
                held, alone = _held(title, have)
                # A block with none of the title's words holds none of it, alone or as the
                # first of two (the second would then hold it alone, and is tried itself).
                if not held:
                    continue
                distance = abs(block["bbox"][1] - top) if top is not None and not shift else 0.0
                missing = title.total - held
                if alone:
                    found.setdefault(i, []).append(
                        TitleBlock(shift, number, bi, distance, True, missing)
                    )
                    if not missing:
                        continue
                # With the block after it: a title set on two lines that the block alone
                # holds only in part ("How to contribute to" / "MuPDF") is found whole.
                after = words_of(pi, bi + 1) if bi + 1 < len(blocks) else None
                if after is None:
                    continue
                held, both = _held(title, have, after)
                if both and (not alone or title.total - held < missing):
                    found.setdefault(i, []).append(
                        TitleBlock(shift, number, bi, distance, False, title.total - held)
                    )
    return found
