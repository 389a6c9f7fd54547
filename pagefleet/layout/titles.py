"""Outline titles in a chunk: the blocks that hold a bookmark's title, alone or with the block
after them, on the page the bookmark points at or the page after or before it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from pagefleet.layout.schema import Block, OutlineEntry, Page


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


def _title_words(text: str) -> _Words:
    words = _TITLE_WORD.findall(text.lower())
    return _Words(Counter(words), len(words))


def _letters(words: _Words) -> int:
    """How many of the words are not numbers (counted only for a block that holds most of a
    title: few do)."""
    return sum(n for w, n in words.counts.items() if not w.isdigit())


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
    letters = _letters(have) + (_letters(after) if after is not None else 0)
    return held, held_letters >= _BLOCK_COVER * letters


def _block_words(block: Block, texts: list[str] | None) -> _Words | None:
    """The words of a block that may hold a title, given the ``texts`` of its lines not
    furniture."""
    if texts is None or len(texts) > _TITLE_MAX_LINES or block.get("fig") or block.get("code"):
        return None
    return _title_words(" ".join(texts))


def find_titles(
    pages: Sequence[Page], outline: Sequence[OutlineEntry], kept: dict[tuple[int, int], list[str]]
) -> dict[int, list[TitleBlock]]:
    """Per entry of the document's ``outline``, the blocks of a chunk's ``pages`` that hold its
    title (:func:`pagefleet.layout.analysis.match_outline` picks one). ``kept``: per (page
    index, block index), the texts of the block's lines that are not furniture."""
    index = {page["number"]: pi for pi, page in enumerate(pages)}
    # Per page index, its blocks' words (None: a block that holds no title), counted once a
    # page is searched: a page is searched for every entry that points at it or beside it.
    words: dict[int, list[_Words | None]] = {}

    def words_on(pi: int) -> list[_Words | None]:
        if pi not in words:
            words[pi] = [
                _block_words(block, kept.get((pi, bi)))
                for bi, block in enumerate(pages[pi]["blocks"])
            ]
        return words[pi]

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
            held_by = words_on(pi)
            for bi, (block, have) in enumerate(zip(blocks, held_by, strict=True)):
                # A block with none of the title's words holds none of it, alone or as the
                # first of two (the second would then hold it alone, and is tried itself).
                if have is None or title.counts.keys().isdisjoint(have.counts):
                    continue
                held, alone = _held(title, have)
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
                after = held_by[bi + 1] if bi + 1 < len(blocks) else None
                if after is None:
                    continue
                held, both = _held(title, have, after)
                if both and (not alone or title.total - held < missing):
                    found.setdefault(i, []).append(
                        TitleBlock(shift, number, bi, distance, False, title.total - held)
                    )
    return found
