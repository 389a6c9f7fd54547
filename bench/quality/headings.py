"""Heading recall: the PDF's outline titles found as Markdown headings, in outline order, and
whether their levels step as the outline's do."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from bench.quality.words import markdown_words, words

_HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)


@dataclass
class HeadingScore:
    recall: float | None  # share of outline titles found as headings
    levels: float | None  # share of consecutive found titles whose level steps agree


def _bare(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@dataclass(frozen=True)
class _Words:
    words: list[str]
    bare: list[str]  # the same words without their accents


def _read(words_: list[str]) -> _Words:
    return _Words(words_, [_bare(w) for w in words_])


def _holds(heading: _Words, title: _Words) -> bool:
    """Whether the words of ``title`` are in ``heading`` in order, or its letters are those of
    a run of the heading's words.

    The second reading is for word breaks the two texts make differently: a bookmark's
    hyphen where the page sets an em dash ("FDCs-magnitude", one word, against "FDCs",
    "magnitude"), or a bookmark holding TeX's accent markup ("Lema{^i }tre") for the page's
    "Lemaître". The run starts and ends at word breaks, so "Art" is not held by "Start".
    """
    if not title.words:
        return False
    it = iter(heading.words)
    if all(w in it for w in title.words):
        return True
    letters = "".join(title.bare)
    for start in range(len(heading.bare)):
        run = ""
        for word in heading.bare[start:]:
            run += word
            if not letters.startswith(run):
                break
            if run == letters:
                return True
    return False


def heading_score(markdown: str, outline: Sequence[dict[str, Any]]) -> HeadingScore:
    """Outline titles found as headings, in outline order.

    A heading holds a title when the title's words are in it in order, so a heading carrying
    a number or a date its bookmark lacks ("Exhibit 2.3.59-1 (07-01-2019) Command Code") counts,
    or when the title's letters are those of a run of the heading's words (``_holds``).
    """
    if not outline:
        return HeadingScore(None, None)
    headings = [
        (len(m.group(1)), _read(markdown_words(m.group(2)))) for m in _HEADING.finditer(markdown)
    ]
    titles = [_read(words(entry["title"])) for entry in outline]
    # The most titles matched in order (an LCS with "holds" as the match): a greedy walk
    # would let one title matched too far ahead (a running head set as a heading) lose all
    # the titles before that point.
    n, m = len(titles), len(headings)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = max(below[j], row[j + 1])
            if below[j + 1] + 1 > row[j] and _holds(headings[j][1], titles[i]):
                row[j] = below[j + 1] + 1
    found: list[tuple[int, int]] = []  # (outline level, markdown level)
    i = j = 0
    while i < n and j < m:
        if best[i][j] == best[i + 1][j]:
            i += 1
        elif best[i][j] == best[i][j + 1]:
            j += 1
        else:
            found.append((outline[i]["level"], headings[j][0]))
            i, j = i + 1, j + 1
    steps = list(pairwise(found))
    agree = sum((b[0] > a[0]) == (b[1] > a[1]) and (b[0] < a[0]) == (b[1] < a[1]) for a, b in steps)
    return HeadingScore(len(found) / len(outline), agree / len(steps) if steps else None)
