"""Markdown for a document from its page layouts, a chunk (a page range) at a time.

The completion step hands over a document's chunks as their results land; the whole document in
one process is one chunk, through the same code. Everything that needs the whole document is
decided once for it (rule 5): heading levels, repeated page headers and footers, the body size,
the vocabulary that repairs hyphenation, the blocks the outline points at, paragraphs, lists and
footnotes that run across a page or chunk break.

- A chunk on its own yields :class:`ChunkLayout` (its margin-line candidates) and, given which of
  those are furniture, :class:`_Stats`: compact counts that :class:`_Analysis` merges into the
  document's facts, exactly as if they were counted over the whole document.
- A chunk is written (:func:`_write`) against the analysis known when it is prepared, and the
  writing records, page by page, every answer it took from it (:class:`_Page`). When the
  analysis changes (more chunks landed, or all), a chunk is written again from its first page
  whose answers changed, until the writer is back in the state the old writing was in.
- :func:`_stitch` joins the chunks' writing: across a boundary the writer replays the next
  chunk's blocks from the state the chunk before left until it is in the state that chunk's own
  writing was in, and takes the rest of that writing as it is.

It imports nothing heavier than the standard library, and runs in time linear in the number of
spans.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, cast

from pagefleet.layout.schema import Block, Line, OutlineEntry, Page, Span, TextBlock
from pagefleet.layout.segment import BULLETS, LIST_MARKER, continues, line_size, line_text

# Lines this close to the top or bottom edge (share of the page height) may be headers/footers.
_MARGIN = 0.12
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:page\s*)?(?:#|[ivxlcdm]{1,6})(?:\s*(?:of|/)\s*#)?[-–—\s]*$", re.IGNORECASE
)
# Han, kana and CJK punctuation and full-width forms.
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_HEADING_WORD = re.compile(r"[^\W\d_]{3,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_ESCAPE = re.compile(r"([\\`*_\[\]<>])")
_BLOCK_START = re.compile(r"^(#{1,6}(?:\s|$)|[>+|~]|[-*=](?:\s|[-*=]*$)|\d+[.)](?:\s|$))")


class LineRef(NamedTuple):
    """A line of a sequence of pages."""

    page_index: int  # of the page in the sequence
    block: int
    line: int


class MarginKey(NamedTuple):
    """A margin line's identity across pages."""

    band: str  # "top" or "bottom"
    text: str  # digits as "#"


class HeadingStyle(NamedTuple):
    """A heading's style: headings of one style share a level."""

    size: float  # bucket
    bold: bool


class TitleBlock(NamedTuple):
    """A block holding an outline entry's title."""

    shift: int  # 0, 1, 2: on the entry's page, the page after, the page before
    page_number: int
    block: int  # index on the page
    distance: float  # from the height the entry points at; 0.0 where it gives none
    alone: bool  # the block holds the title by itself, else only with the block after it


# The records built for every line or block stay plain tuples: a NamedTuple costs several
# times as much to build, and all of them together made rendering 5-8% slower.
# A line with its place on the page: (top, bottom, block index, line index, line).
_Placed = tuple[float, float, int, int, Line]
# A block across chunks: (page number, block index on the page).
_Ref = tuple[int, int]
# What the heading test needs of a block, whatever the body size turns out to be: (size bucket,
# bold, words, whether it passes the tests of a bold run-in heading but the size).
_Shape = tuple[float, bool, int, bool]


def render_document(pages: Sequence[Page], outline: Sequence[OutlineEntry] | None = None) -> str:
    """The Markdown of a whole document from all its page layouts, in page order.

    ``outline`` is the document's bookmarks (:func:`pagefleet.layout.outline.read_outline`);
    where given, the block each bookmark points at becomes a heading at the bookmark's depth,
    in the block's own words, and font sizes rank only the headings the outline lacks.
    """
    return render_chunks([ChunkLayout.of(pages, outline or ())])


def render_chunks(chunks: Sequence[ChunkLayout]) -> str:
    """The Markdown of a document from its chunks: every page of it, in page order."""
    doc, written = prepare(chunks, sum(len(c.pages) for c in chunks))
    return _stitch(written, doc)


def prepare(chunks: Sequence[ChunkLayout], total: int) -> tuple[_Analysis, list[_Written]]:
    """The analysis of a document of ``total`` pages from ``chunks`` (in page order), and each
    chunk's writing against it: kept from before where it took the same answers, else redone.

    With every page in hand this is the document's analysis. With some, it is a forecast that
    lets the chunks in hand be written before the rest lands: a margin line is furniture when
    its pages, extrapolated from the pages in hand to ``total``, reach the threshold.
    """
    seen = sum(len(c.pages) for c in chunks)
    counts: Counter[MarginKey] = Counter()
    for chunk in chunks:
        counts.update(chunk.keys)
    need = _need(total)
    for chunk in chunks:
        furniture = frozenset(
            key
            for key in chunk.keys
            if counts[key] * total >= need * seen or _PAGE_NUMBER.match(key.text)
        )
        if chunk.stats is None or chunk.stats.furniture != furniture:
            chunk.stats = _Stats.of(chunk, furniture)
    doc = _Analysis.of(chunks)
    written: list[_Written] = []
    for chunk in chunks:
        chunk.written = _written(chunk, doc)
        written.append(chunk.written)
    return doc, written


def _need(total: int) -> int:
    """Pages a margin line must recur on to be furniture. Short documents need the line on
    2-3 pages; long ones on 5% of them, so that a table row or a title that recurs a few times
    in 400 pages stays."""
    return 2 if total <= 3 else max(3, math.ceil(0.05 * total))


@dataclass(eq=False)
class ChunkLayout:
    """A chunk's pages, with what they say on their own and (filled in by :func:`prepare`) what
    the document's analysis made of them. ``outline`` is the whole document's."""

    pages: Sequence[Page]
    outline: Sequence[OutlineEntry]
    # Per page, the margin-line candidates by key, with their (block, line) places.
    margin: list[dict[MarginKey, list[tuple[int, int]]]]
    keys: Counter[MarginKey]  # pages each candidate key is on
    stats: _Stats | None = None
    written: _Written | None = None

    @classmethod
    def of(cls, pages: Sequence[Page], outline: Sequence[OutlineEntry]) -> ChunkLayout:
        margin: list[dict[MarginKey, list[tuple[int, int]]]] = []
        keys: Counter[MarginKey] = Counter()
        for page in pages:
            found: dict[MarginKey, list[tuple[int, int]]] = {}
            for band, bi, li, line in _margin_lines(page):
                key = MarginKey(band, _furniture_key(line_text(line)))
                found.setdefault(key, []).append((bi, li))
            margin.append(found)
            keys.update(found.keys())
        return cls(pages, outline, margin, keys)


def find_furniture(pages: Sequence[Page]) -> set[LineRef]:
    """Lines that are page furniture: headers and footers repeated across pages, page numbers.

    A candidate lies in the top or bottom margin and is set off from the body by the widest
    gap between the body's edge and the page's edge; it is furniture when its text, digits
    ignored, recurs in the same margin on several pages, or when it is only a page number.
    """
    chunk = ChunkLayout.of(pages, ())
    prepare([chunk], len(pages))
    assert chunk.stats is not None
    furniture = chunk.stats.furniture
    return {
        LineRef(pi, bi, li)
        for pi, found in enumerate(chunk.margin)
        for key, places in found.items()
        if key in furniture
        for bi, li in places
    }


@dataclass
class _Stats:
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
    shapes: dict[_Ref, _Shape | None]
    kinds: set[_Shape]  # the shapes, once each
    titles: dict[int, list[TitleBlock]]  # outline entry index -> the blocks here holding its title

    @classmethod
    def of(cls, chunk: ChunkLayout, furniture: frozenset[MarginKey]) -> _Stats:
        lines: dict[tuple[int, int], list[Line]] = {}
        sizes: Counter[float] = Counter()
        vocabulary: set[str] = set()
        shapes: dict[_Ref, _Shape | None] = {}
        for pi, page in enumerate(chunk.pages):
            gone = {
                place
                for key, places in chunk.margin[pi].items()
                if key in furniture
                for place in places
            }
            ocr = page["ocr"]
            for bi, block in enumerate(page["blocks"]):
                if "lines" not in block:
                    continue
                kept = block["lines"]
                if gone:
                    kept = [ln for li, ln in enumerate(kept) if (bi, li) not in gone]
                if not kept:
                    continue
                lines[pi, bi] = kept
                texts = [line_text(line) for line in kept]
                # A plot's labels are never a heading; OCR has no font sizes to rank.
                if not block.get("fig") and not ocr:
                    shapes[page["number"], bi] = _heading_shape(kept, texts)
                # No word runs across a line break: the lines are searched in one go.
                vocabulary.update(map(str.lower, _WORD.findall("\n".join(texts))))
                # OCR lines never make the body size.
                if not ocr:
                    for line, text in zip(kept, texts, strict=True):
                        sizes[_bucket(line_size(line))] += len(text)
        kinds = {shape for shape in shapes.values() if shape is not None}
        return cls(furniture, lines, sizes, vocabulary, shapes, kinds, _find_titles(chunk, lines))


@dataclass
class _Analysis:
    """Whole-document facts the writing of any one block depends on."""

    body_size: float
    levels: dict[HeadingStyle, int]
    vocabulary: _Vocabulary
    # (page number, block index) -> level: the blocks the outline's entries point at.
    bookmarked: dict[_Ref, int]
    by_page: dict[int, dict[_Ref, int]]  # the same, by page number

    @classmethod
    def of(cls, chunks: Sequence[ChunkLayout]) -> _Analysis:
        sizes: Counter[float] = Counter()
        kinds: set[_Shape] = set()
        titles: dict[int, list[TitleBlock]] = {}
        shapes: dict[_Ref, _Shape | None] = {}
        stats = [c.stats for c in chunks if c.stats is not None]
        for s in stats:
            sizes.update(s.sizes)  # in page order: ties go to the size seen first
            kinds |= s.kinds
            for i, found in s.titles.items():
                titles.setdefault(i, []).extend(found)
        body = sizes.most_common(1)[0][0] if sizes else 0.0
        bookmarked = _match_outline(chunks[0].outline if chunks else (), titles)
        styles: dict[HeadingStyle, Counter[int]] = {}
        for shape in kinds:
            style = _shape_style(shape, body)
            if style:
                styles.setdefault(style, Counter())
        if bookmarked:
            for s in stats:
                shapes.update(s.shapes)
        by_page: dict[int, dict[_Ref, int]] = {}
        for ref, level in bookmarked.items():
            by_page.setdefault(ref[0], {})[ref] = level
            bookmark = shapes.get(ref)
            style = None if bookmark is None else _shape_style(bookmark, body)
            if style:
                styles[style][level] += 1
        vocabulary = _Vocabulary([s.vocabulary for s in stats])
        return cls(body, _style_levels(styles), vocabulary, bookmarked, by_page)


class _Vocabulary:
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


class _Asked:
    """The vocabulary as one chunk's writing sees it: every answer recorded."""

    def __init__(self, vocabulary: Container[str]) -> None:
        self.vocabulary = vocabulary
        self.words: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        # No cache of its own: the document's vocabulary keeps the answers it worked out.
        found = self.words[cast(str, word)] = word in self.vocabulary
        return found


# A block for the writer: (kind, block, page number, heading level); kind is "table",
# "figure", "note" or "text".
_Event = tuple[str, Block, int, int | None]


@dataclass
class _Page:
    """Where a chunk's writing stood as one of its pages began, and what the page's blocks
    took from the analysis: a writing is redone from its first page whose answers changed."""

    writer: _Writer  # a copy as the page began; its parts are the last part written then
    event: int  # index of the page's first block in the chunk's events
    parts: int  # parts written before the page
    bookmarked: dict[_Ref, int]
    levels: dict[HeadingStyle, int] = field(default_factory=dict)
    words: dict[str, bool] = field(default_factory=dict)


@dataclass
class _Written:
    """A chunk written against an analysis: the writer as its last block left it (the parts
    written, a paragraph maybe still open), per block what went in and the state after, and
    per page where the writing stood and the answers it took."""

    stats: _Stats
    body: float
    pages: list[_Page]
    writer: _Writer
    events: list[_Event]
    states: list[_State]
    counts: list[int]  # parts written after each block
    joined: _Joined

    def stale(self, chunk: ChunkLayout, doc: _Analysis) -> tuple[int, int] | None:
        """The first and last page whose answers ``doc`` changes; None: it writes the same."""
        changed = [
            i
            for i, (page, done) in enumerate(zip(chunk.pages, self.pages, strict=True))
            if done.bookmarked != doc.by_page.get(page["number"], {})
            or any(doc.levels.get(s) != level for s, level in done.levels.items())
            or any((w in doc.vocabulary) != found for w, found in done.words.items())
        ]
        return (changed[0], changed[-1]) if changed else None


def _written(chunk: ChunkLayout, doc: _Analysis) -> _Written:
    """The chunk's writing against ``doc``: as it was where that takes the same answers."""
    assert chunk.stats is not None
    old = chunk.written
    if old is None or old.stats is not chunk.stats or old.body != doc.body_size:
        return _write(chunk, doc, None, 0, 0)
    stale = old.stale(chunk, doc)
    return old if stale is None else _write(chunk, doc, old, *stale)


def _write(
    chunk: ChunkLayout, doc: _Analysis, old: _Written | None, start: int, last: int
) -> _Written:
    """The chunk's blocks through a writer that starts as at a document's start; or ``old``
    written again from page ``start`` until, past page ``last``, the writer is in the state
    ``old`` was in at the end of a page (from there ``old`` goes on as the new writing would)."""
    assert chunk.stats is not None
    stats = chunk.stats
    asked = _Asked(doc.vocabulary)
    if old is None:
        out = _Writer(asked)
        before: list[_Part] = []
        pages: list[_Page] = []
        events: list[_Event] = []
        states: list[_State] = []
        counts: list[int] = []
    else:
        snap = old.pages[start]
        out = snap.writer.resume(asked, snap.writer.parts[-1] if snap.writer.parts else None)
        before = old.writer.parts[: snap.parts - 1] if snap.parts else []
        pages = old.pages[:start]
        events = old.events[: snap.event]
        states = old.states[: snap.event]
        counts = old.counts[: snap.event]
    for pi in range(start, len(chunk.pages)):
        page = chunk.pages[pi]
        number = page["number"]
        if old is not None and pi > last and pages and states:
            j = len(states) - 1
            if states[j] == old.states[j]:
                # In step again: the rest of ``old`` is what the writing would be.
                return _caught_up(old, pi, before + out.parts, pages, events, states, counts)
        done = _Page(
            out.resume(asked, out.parts[-1] if out.parts else None),
            len(events),
            len(before) + len(out.parts),
            doc.by_page.get(number, {}),
        )
        pages.append(done)
        asked.words = done.words
        blocks: list[Block] = []
        refs: list[int] = []
        for bi, block in enumerate(page["blocks"]):
            if "lines" in block:
                lines = stats.lines.get((pi, bi))
                if lines is None:
                    continue
                if lines is not block["lines"]:
                    block = {**block, "lines": lines}
            blocks.append(block)
            refs.append(bi)
        notes = _footnotes(blocks, page["height"], doc.body_size)
        for i, (block, bi) in enumerate(zip(blocks, refs, strict=True)):
            ref = (number, bi)
            level: int | None = None
            if "rows" in block:
                kind = "table"
            elif block.get("fig"):
                kind = "figure"
            elif i in notes and ref not in done.bookmarked:
                kind = "note"
            else:
                kind = "text"
                level = done.bookmarked.get(ref)
                shape = None if page["ocr"] else stats.shapes[ref]
                style = (
                    None
                    if level is not None or shape is None
                    else _shape_style(shape, doc.body_size)
                )
                if style is not None:
                    level = done.levels[style] = doc.levels[style]
            event = (kind, block, number, level)
            out.apply(event)
            events.append(event)
            states.append(out.state(number))
            counts.append(len(before) + len(out.parts))
    out.parts = before + out.parts
    return _Written(stats, doc.body_size, pages, out, events, states, counts, _Joined.of(out.parts))


def _caught_up(
    old: _Written,
    pi: int,
    parts: list[_Part],
    pages: list[_Page],
    events: list[_Event],
    states: list[_State],
    counts: list[int],
) -> _Written:
    """``old`` with its pages before ``pi`` written again (``parts`` and the rest), in the
    state ``old`` was in as page ``pi`` began."""
    j = len(events) - 1
    k = old.counts[j]
    # The last part both have written may still grow in ``old`` (a heading's second line).
    parts = (parts[:-1] if k else parts) + old.writer.parts[k - 1 if k else 0 :]
    shift = counts[j] - k
    pages += [replace(p, parts=p.parts + shift) for p in old.pages[pi:]]
    events += old.events[j + 1 :]
    states += old.states[j + 1 :]
    counts += [c + shift for c in old.counts[j + 1 :]]
    writer = replace(old.writer, parts=parts)
    return _Written(old.stats, old.body, pages, writer, events, states, counts, _Joined.of(parts))


def _stitch(written: Sequence[_Written], doc: _Analysis) -> str:
    """The chunks' writing as one document."""
    out = _Output()
    carry: _Writer | None = None  # where the chunk before left off
    live: _Writer | None = None  # replaying a chunk's blocks, not yet in its writing's state
    for chunk in written:
        if carry is None and live is None:
            # The first chunk was written from the document's start.
            out.add_written(chunk, 0)
            carry = chunk.writer
            continue
        if live is None:
            assert carry is not None
            live = carry.resume(doc.vocabulary, out.take_last())
        for j, event in enumerate(chunk.events):
            live.apply(event)
            if live.state(event[2]) == chunk.states[j]:
                # From here on the chunk's own writing goes on as the replay would; the last
                # part both have written may still grow (a heading's second line).
                k = chunk.counts[j]
                out.add(live.parts[:-1] if k else live.parts)
                out.add_written(chunk, k - 1 if k else 0)
                carry, live = chunk.writer, None
                break
    if live is None:
        if carry is None:
            return ""
        live = carry.resume(doc.vocabulary, out.take_last())
    live.close()
    out.add(live.parts)
    return out.finish()


def _separator(before: str, kind: str) -> str:
    """Items of one list ("bullet", "ordered") are joined by a single newline."""
    return "\n" if kind == before and kind in ("bullet", "ordered") else "\n\n"


@dataclass
class _Joined:
    """A chunk's parts as Markdown: each part's span in it, so that any run of them is a slice."""

    text: str
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, parts: list[_Part]) -> _Joined:
        pieces: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        at = 0
        for i, (kind, text) in enumerate(parts):
            if i:
                separator = _separator(parts[i - 1][0], kind)
                pieces.append(separator)
                at += len(separator)
            pieces.append(text)
            starts.append(at)
            at += len(text)
            ends.append(at)
        return cls("".join(pieces), starts, ends)


@dataclass
class _Output:
    """The document's Markdown as it is stitched, its last part held back: the next chunk's
    replay may still change it."""

    pieces: list[str] = field(default_factory=list)
    kind: str = ""  # of the last part in pieces
    last: _Part | None = None

    def _put(self, kind: str, text: str) -> None:
        if self.pieces:
            self.pieces.append(_separator(self.kind, kind))
        self.pieces.append(text)
        self.kind = kind

    def add(self, parts: Sequence[_Part]) -> None:
        for part in parts:
            if self.last is not None:
                self._put(*self.last)
            self.last = part

    def add_written(self, chunk: _Written, start: int) -> None:
        """The chunk's own parts from ``start`` on, the run before its last as one slice."""
        parts = chunk.writer.parts
        if start >= len(parts):
            return
        if self.last is not None:
            self._put(*self.last)
        if start < len(parts) - 1:
            joined = chunk.joined
            self._put(parts[start][0], joined.text[joined.starts[start] : joined.ends[-2]])
            self.kind = parts[-2][0]
        self.last = parts[-1]

    def take_last(self) -> _Part | None:
        last, self.last = self.last, None
        return last

    def finish(self) -> str:
        if self.last is not None:
            self._put(*self.last)
        return "".join(self.pieces) + ("\n" if self.pieces else "")


def _footnotes(blocks: list[Block], height: float, body: float) -> set[int]:
    """Indexes of footnote blocks: small print low on the page with no body text below it."""
    small = {
        i
        for i, b in enumerate(blocks)
        if "lines" in b
        and b["bbox"][1] >= height * 0.6
        and max(line_size(line) for line in b["lines"]) <= body * 0.9
    }
    return {
        i
        for i in small
        if not any(
            j not in small
            and "lines" in other
            and other["bbox"][1] > blocks[i]["bbox"][1]
            and other["bbox"][0] < blocks[i]["bbox"][2]
            and other["bbox"][2] > blocks[i]["bbox"][0]
            for j, other in enumerate(blocks)
        )
    }


def _margin_lines(page: Page) -> Iterator[tuple[str, int, int, Line]]:
    """(band, block index, line index, line) of the lines set off in the top/bottom margin."""
    height = page["height"] or 1.0
    placed = sorted(
        (
            (line["bbox"][1], line["bbox"][3], bi, li, line)
            for bi, block in enumerate(page["blocks"])
            if "lines" in block
            for li, line in enumerate(block["lines"])
        ),
        key=lambda item: item[0],
    )
    if not placed:
        return
    top = [item for item in placed if item[1] <= height * _MARGIN]
    if len(top) < len(placed):
        # The top margin's lines above the widest gap before the body.
        cut = _widest_gap([*top, placed[len(top)]])
        for _, _, bi, li, line in top[:cut]:
            yield "top", bi, li, line
    bottom = [item for item in placed if item[0] >= height * (1 - _MARGIN)]
    if len(bottom) < len(placed):
        first = len(placed) - len(bottom)
        cut = _widest_gap(placed[first - 1 :])
        for _, _, bi, li, line in placed[first - 1 + cut :] if cut else ():
            yield "bottom", bi, li, line


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
    text = _SPACES.sub(" ", text.strip().lower())
    # Digits vary from page to page in running heads ("Page 3", "2.3.59-12"), but a line
    # of numbers only (a table row) must match exactly to count as repeated.
    return _DIGITS.sub("#", text) if any(c.isalpha() for c in text) or len(text) <= 4 else text


def _style_levels(styles: dict[HeadingStyle, Counter[int]]) -> dict[HeadingStyle, int]:
    """Heading level per style, largest first.

    A style that outline entries were found in takes their most common level; any other takes
    one level below the nearest larger style (or level 1), so font ranking fills in only where
    the outline says nothing. Without an outline this is plain ranking by size.
    """
    levels: dict[HeadingStyle, int] = {}
    above = 0
    for style in sorted(styles, key=lambda s: (-s.size, not s.bold)):
        seen = styles[style]
        level = seen.most_common(1)[0][0] if seen else above + 1
        levels[style] = min(max(level, 1), 6)
        above = levels[style]
    return levels


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


def _find_titles(
    chunk: ChunkLayout, kept: dict[tuple[int, int], list[Line]]
) -> dict[int, list[TitleBlock]]:
    """Per outline entry, the blocks of this chunk that hold its title (see _match_outline)."""
    index = {page["number"]: pi for pi, page in enumerate(chunk.pages)}
    words: dict[tuple[int, int], Counter[str] | None] = {}

    def words_of(pi: int, bi: int) -> Counter[str] | None:
        if (pi, bi) not in words:
            lines = kept.get((pi, bi))
            short = lines is not None and len(lines) <= _TITLE_MAX_LINES
            if lines is None or not short or chunk.pages[pi]["blocks"][bi].get("fig"):
                words[pi, bi] = None
            else:
                words[pi, bi] = _title_words(" ".join(map(line_text, lines)))
        return words[pi, bi]

    found: dict[int, list[TitleBlock]] = {}
    for i, entry in enumerate(chunk.outline):
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
            blocks = chunk.pages[pi]["blocks"]
            for bi, block in enumerate(blocks):
                have = words_of(pi, bi)
                # A block with none of the title's words holds none of it, alone or as the
                # first of two (the second would then hold it alone, and is tried itself).
                if have is None or not title.keys() & have.keys():
                    continue
                alone = _holds(title, have)
                if not alone:
                    after = words_of(pi, bi + 1) if bi + 1 < len(blocks) else None
                    if after is None or not _holds(title, have + after):
                        continue
                distance = abs(block["bbox"][1] - top) if top is not None and not shift else 0.0
                found.setdefault(i, []).append(TitleBlock(shift, number, bi, distance, alone))
    return found


def _match_outline(
    outline: Sequence[OutlineEntry], titles: dict[int, list[TitleBlock]]
) -> dict[_Ref, int]:
    """The block each outline entry points at, with the entry's level (0: the block continues
    the heading of the block before it, a title set on two lines in two styles).

    The entry's page (or the page after it, or before it: producers point at the end of the
    previous page too) is searched for a short block holding the title's words, or two
    consecutive ones that do together; of several, the one nearest the height the destination
    gives, else the first in reading order. The block keeps its own words (a bookmark may
    drop a number or a date the heading has). A block an earlier entry took is not taken again.
    """
    out: dict[_Ref, int] = {}
    for i in sorted(titles):
        best: tuple[tuple[int, int, float, int], list[_Ref]] | None = None
        for shift, number, bi, distance, alone in titles[i]:
            ref = (number, bi)
            if ref in out:
                continue
            if alone:
                refs = [ref]
            elif (number, bi + 1) not in out:
                refs = [ref, (number, bi + 1)]
            else:
                continue
            key = (shift, len(refs), distance, bi)
            if best is None or key < best[0]:
                best = key, refs
        if best is not None:
            level = min(max(outline[i]["level"], 1), 6)
            out.update({ref: level if k == 0 else 0 for k, ref in enumerate(best[1])})
    return out


def _bucket(size: float) -> float:
    return round(size * 2) / 2


def _heading_shape(lines: list[Line], texts: list[str]) -> _Shape | None:
    """What decides whether a block is a heading, but the body size; None: never a heading.
    ``texts`` are the lines' texts."""
    if not lines or len(lines) > 3:
        return None
    text = " ".join(texts).strip()
    # A heading has a word: "76a 76b" or "(c)" in bold is a form's field number.
    if not text or len(text) > 150 or not _HEADING_WORD.search(text):
        return None
    if text[0] in BULLETS and (len(text) == 1 or text[1].isspace()):
        return None  # a bullet point set large (slides) is a list item, not a heading
    size = _bucket(max(line_size(line) for line in lines))
    spans = [s for line in lines for s in line["spans"] if s["t"].strip()]
    bold = all(s.get("b") for s in spans)
    words = len(text.split())
    run_in = (
        bold
        and words <= 12
        and not text.endswith((".", ",", ";"))
        and (text[0].isupper() or text[0].isdigit())
    )
    return size, bold, words, run_in


def _shape_style(shape: _Shape, body: float) -> HeadingStyle | None:
    """The style of a block of this shape that looks like a heading, else None."""
    size, bold, words, run_in = shape
    if size >= body * 1.15 and words <= 25:
        return HeadingStyle(size, bold)
    if run_in and size >= body - 0.5:
        return HeadingStyle(size, bold)
    return None


# (kind, markdown): items of one list ("bullet", "ordered") are joined by a single newline.
_Part = tuple[str, str]
# What the writer's next steps depend on (see _Writer.state).
_State = tuple[
    tuple[int, int, int, int] | None,
    tuple[str, ...],
    tuple[float, ...],
    tuple[int, float] | None,
    _Part | None,
]


@dataclass
class _Writer:
    vocabulary: Container[str]
    parts: list[_Part] = field(default_factory=list)
    # The paragraph being built stays open until the next block, which may continue it.
    open_para: TextBlock | None = None
    open_page: int = 0
    # Footnotes wait for the paragraph they interrupt to end.
    notes: list[str] = field(default_factory=list)
    list_indents: list[float] = field(default_factory=list)
    list_at: tuple[int, float] = (0, 0.0)  # page and top of the last list item

    def apply(self, event: _Event) -> None:
        kind, block, page, level = event
        if "rows" in block:
            self.table(block["rows"])
        elif kind == "figure":
            self.figure(block)
        elif kind == "note":
            self.footnote(block)
        else:
            self.block(block, page, level)

    def state(self, page: int) -> _State:
        """All that the writing of blocks from ``page`` on depends on: two writers in the same
        state write the same from there. The open paragraph is told by its first and last
        line objects and its length; the last list item's place only counts on its page."""
        para = self.open_para
        return (
            None
            if para is None
            else (self.open_page, id(para["lines"][0]), id(para["lines"][-1]), len(para["lines"])),
            tuple(self.notes),
            tuple(self.list_indents),
            self.list_at if self.list_at[0] == page else None,
            self.parts[-1] if self.parts else None,
        )

    def resume(self, vocabulary: Container[str], last: _Part | None) -> _Writer:
        """A writer in this one's state, whose parts so far end in ``last``."""
        para = self.open_para
        return _Writer(
            vocabulary,
            [last] if last is not None else [],
            None if para is None else {"bbox": para["bbox"], "lines": list(para["lines"])},
            self.open_page,
            list(self.notes),
            list(self.list_indents),
            self.list_at,
        )

    def block(self, block: TextBlock, page: int, level: int | None) -> None:
        para = self.open_para
        if level is None and para is not None and self._broken(para, block, page):
            para["lines"].extend(block["lines"])
            self.open_page = page
            return
        self.close()
        if level is not None:
            self.list_indents.clear()
            text = _plain(block["lines"], self.vocabulary)
            if level == 0 and self.parts and self.parts[-1][0] == "heading":
                self.parts[-1] = ("heading", self.parts[-1][1] + " " + text)
            else:
                self.parts.append(("heading", "#" * max(level, 1) + " " + text))
            return
        marker = LIST_MARKER.match(line_text(block["lines"][0]))
        if marker:
            self._list_item(block, marker.group(), page)
            return
        self.list_indents.clear()
        self.open_para = {"bbox": block["bbox"], "lines": list(block["lines"])}
        self.open_page = page

    def _broken(self, para: TextBlock, block: TextBlock, page: int) -> bool:
        """Whether ``block`` picks up ``para`` after a page or column break."""
        new_column = block["bbox"][1] < para["lines"][-1]["bbox"][1]
        return (page != self.open_page or new_column) and continues(para, block)

    def figure(self, block: TextBlock) -> None:
        """The labels of a plot, as one paragraph of plain text."""
        self.close()
        self.list_indents.clear()
        text = _plain(block["lines"], self.vocabulary)
        if text:
            self.parts.append(("para", _escape_start(text)))

    def footnote(self, block: TextBlock) -> None:
        text = _inline(block["lines"], self.vocabulary)
        if self.open_para is None:
            self.parts.append(("note", _escape_start(text)))
        else:
            self.notes.append(_escape_start(text))

    def table(self, rows: list[list[str]]) -> None:
        self.close()
        self.list_indents.clear()
        width = max(len(row) for row in rows)
        cells = [[_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
        lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
        self.parts.append(("table", "\n".join(lines)))

    def close(self) -> None:
        """End the open paragraph, and write the footnotes that waited for it."""
        if self.open_para is not None:
            text = _inline(self.open_para["lines"], self.vocabulary)
            if text:
                self.parts.append(("para", _escape_start(text)))
            self.open_para = None
        self.parts.extend(("note", note) for note in self.notes)
        self.notes.clear()

    def _list_item(self, block: TextBlock, marker: str, page: int) -> None:
        x0 = block["lines"][0]["bbox"][0]
        top = block["bbox"][1]
        if page == self.list_at[0] and top < self.list_at[1] - 1:
            # Higher up the same page than the item before: the next column, whose items
            # are not nested under the last one of the column before.
            self.list_indents.clear()
        self.list_at = (page, top)
        while self.list_indents and x0 < self.list_indents[-1] - 2:
            self.list_indents.pop()
        if not self.list_indents or x0 > self.list_indents[-1] + 2:
            self.list_indents.append(x0)
        depth = len(self.list_indents) - 1
        lines = _strip_prefix(block["lines"], len(marker))
        text = _inline(lines, self.vocabulary)
        symbol = marker.strip().strip("()")
        kind = "bullet"
        if symbol[:1] in BULLETS:
            bullet = "- "
        elif symbol[:-1].isdigit():
            kind, bullet = "ordered", f"{symbol[:-1]}. "
        else:
            bullet = "- " + _escape(marker.strip()) + " "
        self.parts.append((kind, "    " * depth + bullet + text))


def _strip_prefix(lines: list[Line], count: int) -> list[Line]:
    """The lines without the first ``count`` characters (a list marker)."""
    spans: list[Span] = []
    for span in lines[0]["spans"]:
        text = span["t"]
        if count >= len(text):
            count -= len(text)
            continue
        spans.append({**span, "t": text[count:].lstrip() if count else text})
        count = 0
    return [{**lines[0], "spans": spans}, *lines[1:]]


def _segments(
    lines: list[Line], vocabulary: Container[str]
) -> Iterator[tuple[str, bool, bool, str]]:
    """(text, bold, italic, url) runs of a paragraph, lines joined and hyphenation repaired."""
    for i, line in enumerate(lines):
        spans = line["spans"]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        for j, span in enumerate(spans):
            text = span["t"]
            if j == len(spans) - 1 and nxt is not None:
                text = _join(text, nxt, vocabulary)
            yield text, bool(span.get("b")), bool(span.get("i")), span.get("u", "")


def _join(text: str, nxt: Line, vocabulary: Container[str]) -> str:
    """The end of a line as it reads before the next line: hyphen dropped or a space added."""
    stripped = text.rstrip()
    if stripped and _CJK.match(stripped[-1]) and _CJK.match(line_text(nxt).lstrip()[:1]):
        return stripped  # Chinese and Japanese wrap between characters, with no space
    if not stripped.endswith("-") or len(stripped) < 2 or not stripped[-2].isalpha():
        return stripped + " "
    following = line_text(nxt)  # only read where a hyphen or a CJK character asks
    head = _WORD.findall(stripped[:-1])
    tail = _WORD.findall(following)
    if not head or not tail or not following.lstrip()[:1].isalpha():
        return stripped
    joined = (head[-1] + tail[0]).lower()
    hyphenated = f"{head[-1]}-{tail[0]}".lower()
    if joined in vocabulary or (hyphenated not in vocabulary and following.lstrip()[0].islower()):
        return stripped[:-1]
    return stripped


def _inline(lines: list[Line], vocabulary: Container[str]) -> str:
    """Paragraph text with bold, italic and links as Markdown."""
    # (pieces, bold, italic, url): pieces are joined once, a paragraph can have 1000s of spans
    runs: list[tuple[list[str], bool, bool, str]] = []
    for text, bold, italic, url in _segments(lines, vocabulary):
        if runs and (runs[-1][1:] == (bold, italic, url) or not (text.strip() or url)):
            runs[-1][0].append(text)
        else:
            runs.append(([text], bold, italic, url))
    out = []
    for pieces, bold, italic, url in runs:
        text = "".join(pieces)
        core = text.strip()
        if not core:
            out.append(text)
            continue
        lead = text[: len(text) - len(text.lstrip())]
        trail = text[len(text.rstrip()) :]
        md = _escape(core)
        # Emphasis on a lone symbol (a footnote star, a bullet) only adds noise.
        if not any(c.isalnum() for c in core):
            bold = italic = False
        if italic:
            md = f"*{md}*"
        if bold:
            md = f"**{md}**"
        if url:
            md = f"[{md}]({url.replace(' ', '%20').replace(')', '%29')})"
        out.append(lead + md + trail)
    return _SPACES.sub(" ", "".join(out)).strip()


def _plain(lines: list[Line], vocabulary: Container[str]) -> str:
    text = "".join(seg[0] for seg in _segments(lines, vocabulary))
    return _escape(_SPACES.sub(" ", text).strip())


def _escape(text: str) -> str:
    return _ESCAPE.sub(r"\\\1", text)


def _escape_start(text: str) -> str:
    """Keep a paragraph that starts like Markdown block syntax a paragraph."""
    return "\\" + text if _BLOCK_START.match(text) else text


def _cell(text: str) -> str:
    return _escape(_SPACES.sub(" ", text).strip()).replace("|", "\\|")
