"""The document-wide decisions (rule 5), made once for the whole document from its chunks.

Everything that needs the whole document is decided here: repeated page headers and footers,
the body size, heading levels, the blocks the outline points at, and the vocabulary that
repairs hyphenation. A chunk on its own yields :class:`ChunkLayout` (its margin-line
candidates) and, given which of those are furniture, :class:`ChunkStats`: compact counts that
:class:`Analysis` merges into the document's facts, exactly as if they were counted over the
whole document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from pagefleet.layout.furniture import MarginKey, furniture_among, margin_candidates
from pagefleet.layout.headings import (
    HeadingShape,
    HeadingStyle,
    bucket,
    heading_shape,
    shape_style,
    style_levels,
)
from pagefleet.layout.inline import lower_words
from pagefleet.layout.lines import PageLines, read_lines
from pagefleet.layout.schema import Line, OutlineEntry, Page
from pagefleet.layout.titles import TitleBlock, find_titles

if TYPE_CHECKING:
    from pagefleet.layout.replay import Written


# A block across chunks: (page number, block index on the page); a plain tuple, as one is
# built per block (see pagefleet.layout.writer).
BlockRef = tuple[int, int]


@dataclass(eq=False)
class ChunkLayout:
    """A chunk's pages, with what they say on their own and (filled in by
    :func:`pagefleet.layout.replay.write_chunks`) what the document's analysis made of them.
    ``outline`` is the whole document's."""

    pages: Sequence[Page]
    outline: Sequence[OutlineEntry]
    read: list[PageLines]  # per page, its lines' texts and sizes
    # Per page, the margin-line candidates by key, with their (block, line) places.
    margin: list[dict[MarginKey, list[tuple[int, int]]]]
    keys: Counter[MarginKey]  # pages each candidate key is on
    stats: ChunkStats | None = None
    written: Written | None = None

    @classmethod
    def of(cls, pages: Sequence[Page], outline: Sequence[OutlineEntry]) -> ChunkLayout:
        read = [read_lines(page) for page in pages]
        margin = [margin_candidates(page, lines) for page, lines in zip(pages, read, strict=True)]
        keys: Counter[MarginKey] = Counter()
        for found in margin:
            keys.update(found.keys())
        return cls(pages, outline, read, margin, keys)


def analyse(chunks: Sequence[ChunkLayout], total: int) -> Analysis:
    """The analysis of a document of ``total`` pages from ``chunks`` (in page order); each
    chunk's statistics are counted again where the furniture it has changed.

    With every page in hand this is the document's analysis. With some, it is a forecast that
    lets the chunks in hand be written before the rest lands: a margin line is furniture when
    its pages, extrapolated from the pages in hand to ``total``, reach the threshold.
    """
    seen = sum(len(c.pages) for c in chunks)
    counts: Counter[MarginKey] = Counter()
    for chunk in chunks:
        counts.update(chunk.keys)
    for chunk in chunks:
        furniture = furniture_among(chunk.keys, counts, seen, total)
        if chunk.stats is None or chunk.stats.furniture != furniture:
            chunk.stats = ChunkStats.of(chunk, furniture)
    return Analysis.of(chunks)


@dataclass
class ChunkStats:
    """A chunk's share of the document's facts, given which of its margin keys are furniture:
    merged over the chunks in page order, they are the facts counted over the whole document."""

    furniture: frozenset[MarginKey]
    # (page index in the chunk, block index) -> the block's lines that are not furniture, for
    # text blocks that keep any.
    lines: dict[tuple[int, int], list[Line]]
    # Characters per size bucket on text-layer pages, in order of first appearance.
    sizes: Counter[float]
    vocabulary: set[str]
    # Text blocks that could be headings (not a plot's labels, not OCR): their shape.
    shapes: dict[BlockRef, HeadingShape | None]
    kinds: set[HeadingShape]  # the shapes, once each
    titles: dict[int, list[TitleBlock]]  # outline entry index -> the blocks here holding its title
    furniture_pictures: set[tuple[int, int]]  # (page index in the chunk, block index)

    @classmethod
    def of(cls, chunk: ChunkLayout, furniture: frozenset[MarginKey]) -> ChunkStats:
        lines: dict[tuple[int, int], list[Line]] = {}
        # Characters per size as set, in order of first appearance, bucketed at the end once
        # per size, not per line: the same counts, and the buckets in the order the lines
        # first show them (a bucket's sizes come after the first of them).
        chars: dict[float, int] = {}
        texts_kept: list[str] = []  # every line kept, for the vocabulary
        texts_by_block: dict[tuple[int, int], list[str]] = {}  # for the outline's titles
        shapes: dict[BlockRef, HeadingShape | None] = {}
        pictures: set[tuple[int, int]] = set()
        for pi, page in enumerate(chunk.pages):
            gone: dict[int, set[int]] = {}  # block index -> its furniture's line indexes
            for key, places in chunk.margin[pi].items():
                if key in furniture:
                    for bi, li in places:
                        gone.setdefault(bi, set()).add(li)
            ocr = page["ocr"]
            read = chunk.read[pi]
            for bi, block in enumerate(page["blocks"]):
                if "lines" not in block:
                    if -1 in gone.get(bi, ()):
                        pictures.add((pi, bi))
                    continue
                kept = block["lines"]
                texts, line_sizes = read[bi]
                if bi in gone:
                    keep = [li for li in range(len(kept)) if li not in gone[bi]]
                    kept = [kept[li] for li in keep]
                    texts = [texts[li] for li in keep]
                    line_sizes = [line_sizes[li] for li in keep]
                if not kept:
                    continue
                lines[pi, bi] = kept
                texts_by_block[pi, bi] = texts
                # A plot's labels or a listing are never a heading; OCR has no font sizes to
                # rank.
                if not block.get("fig") and not block.get("code") and not ocr:
                    shapes[page["number"], bi] = heading_shape(kept, texts, line_sizes)
                texts_kept += texts
                # OCR lines never make the body size.
                if not ocr:
                    for text, size in zip(texts, line_sizes, strict=True):
                        chars[size] = chars.get(size, 0) + len(text)
        # No word runs across a line break: the chunk's lines are searched in two goes, those
        # all ASCII (lower_words' quick path) and the rest.
        plain = [text for text in texts_kept if text.isascii()]
        vocabulary = set(lower_words("\n".join(plain)))
        if len(plain) < len(texts_kept):
            rest = [text for text in texts_kept if not text.isascii()]
            vocabulary.update(lower_words("\n".join(rest)))
        sizes: Counter[float] = Counter()
        for size, count in chars.items():
            sizes[bucket(size)] += count
        kinds = {shape for shape in shapes.values() if shape is not None}
        titles = find_titles(chunk.pages, chunk.outline, texts_by_block)
        return cls(furniture, lines, sizes, vocabulary, shapes, kinds, titles, pictures)


@dataclass
class Analysis:
    """Whole-document facts the writing of any one block depends on."""

    body_size: float
    levels: dict[HeadingStyle, int]
    vocabulary: Vocabulary
    # (page number, block index) -> level: the blocks the outline's entries point at.
    bookmarked: dict[BlockRef, int]
    by_page: dict[int, dict[BlockRef, int]]  # the same, by page number

    @classmethod
    def of(cls, chunks: Sequence[ChunkLayout]) -> Analysis:
        sizes: Counter[float] = Counter()
        kinds: set[HeadingShape] = set()
        titles: dict[int, list[TitleBlock]] = {}
        shapes: dict[BlockRef, HeadingShape | None] = {}
        stats = [c.stats for c in chunks if c.stats is not None]
        for s in stats:
            sizes.update(s.sizes)  # in page order: ties go to the size seen first
            kinds |= s.kinds
            for i, found in s.titles.items():
                titles.setdefault(i, []).extend(found)
        body = sizes.most_common(1)[0][0] if sizes else 0.0
        bookmarked = match_outline(chunks[0].outline if chunks else (), titles)
        styles: dict[HeadingStyle, Counter[int]] = {}
        for shape in kinds:
            style = shape_style(shape, body)
            if style:
                styles.setdefault(style, Counter())
        if bookmarked:
            for s in stats:
                shapes.update(s.shapes)
        by_page: dict[int, dict[BlockRef, int]] = {}
        for ref, level in bookmarked.items():
            by_page.setdefault(ref[0], {})[ref] = level
            bookmark = shapes.get(ref)
            style = None if bookmark is None else shape_style(bookmark, body)
            if style:
                styles[style][level] += 1
        vocabulary = Vocabulary([s.vocabulary for s in stats])
        return cls(body, style_levels(styles), vocabulary, bookmarked, by_page)


class Vocabulary:
    """Every chunk's words, asked a word at a time (by a hyphen at a line's end)."""

    def __init__(self, parts: list[set[str]]) -> None:
        self.parts = parts
        self.known: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        key = cast(str, word)  # Container's signature; the writer asks for words only
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = any(key in part for part in self.parts)
        return found


def match_outline(
    outline: Sequence[OutlineEntry], titles: dict[int, list[TitleBlock]]
) -> dict[BlockRef, int]:
    """The block each outline entry points at, with the entry's level (0: the block continues
    the heading of the block before it, a title set on two lines in two styles).

    The entry's page (or the page after it, or before it: producers point at the end of the
    previous page too) is searched for a short block holding the title's words, or two
    consecutive ones that do together; of several, the one that lacks the fewest of the
    title's words, then the one nearest the height the destination gives, else the first in
    reading order. The block keeps its own words (a bookmark may
    drop a number or a date the heading has). A block an earlier entry took is not taken again.
    """
    out: dict[BlockRef, int] = {}
    for i in sorted(titles):
        best: tuple[tuple[int, int, int, float, int], list[BlockRef]] | None = None
        for shift, number, bi, distance, alone, missing in titles[i]:
            ref = (number, bi)
            if ref in out:
                continue
            if alone:
                refs = [ref]
            elif (number, bi + 1) not in out:
                refs = [ref, (number, bi + 1)]
            else:
                continue
            key = (shift, missing, len(refs), distance, bi)
            if best is None or key < best[0]:
                best = key, refs
        if best is not None:
            level = min(max(outline[i]["level"], 1), 6)
            out.update({ref: level if k == 0 else 0 for k, ref in enumerate(best[1])})
    return out
