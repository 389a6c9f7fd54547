"""Chunks written as they land, and written again only from where the analysis changed.

A chunk is written (:func:`_write`) against the analysis known at the time, and the writing
records, page by page, every answer it took from it (:class:`PageStart`). When the
analysis changes (more chunks landed, or all), a chunk is written again from its first page
whose answers changed, until the writer is back in the state the old writing was in
(:func:`_caught_up`); from there the old writing goes on as the new one would.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from pagefleet.layout.analysis import Analysis, BlockRef, ChunkLayout, ChunkStats, analyse
from pagefleet.layout.headings import HeadingStyle, shape_style
from pagefleet.layout.lines import line_size
from pagefleet.layout.schema import Block
from pagefleet.layout.writer import Event, Joined, Part, Writer, WriterState


def write_chunks(chunks: Sequence[ChunkLayout], total: int) -> tuple[Analysis, list[Written]]:
    """The analysis of a document of ``total`` pages from ``chunks`` (in page order, see
    :func:`pagefleet.layout.analysis.analyse`), and each chunk's writing against it: kept from
    before where it took the same answers, else redone."""
    doc = analyse(chunks, total)
    written: list[Written] = []
    for chunk in chunks:
        chunk.written = _written(chunk, doc)
        written.append(chunk.written)
    return doc, written


class _Asked:
    """The vocabulary as one chunk's writing sees it: every answer recorded."""

    def __init__(self, vocabulary: Container[str]) -> None:
        self.vocabulary = vocabulary
        self.words: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        # No cache of its own: the document's vocabulary keeps the answers it worked out.
        found = self.words[cast(str, word)] = word in self.vocabulary
        return found


@dataclass
class PageStart:
    """Where a chunk's writing stood as one of its pages began, and what the page's blocks
    took from the analysis: a writing is redone from its first page whose answers changed."""

    writer: Writer  # a copy as the page began; its parts are the last part written then
    event: int  # index of the page's first block in the chunk's events
    parts: int  # parts written before the page
    bookmarked: dict[BlockRef, int]
    levels: dict[HeadingStyle, int] = field(default_factory=dict)
    words: dict[str, bool] = field(default_factory=dict)


@dataclass
class Written:
    """A chunk written against an analysis: the writer as its last block left it (the parts
    written, a paragraph maybe still open), per block what went in and the state after, and
    per page where the writing stood and the answers it took."""

    stats: ChunkStats
    body: float
    pages: list[PageStart]
    writer: Writer
    events: list[Event]
    states: list[WriterState]
    counts: list[int]  # parts written after each block
    joined: Joined

    def stale(self, chunk: ChunkLayout, doc: Analysis) -> tuple[int, int] | None:
        """The first and last page whose answers ``doc`` changes; None: it writes the same."""
        changed = [
            i
            for i, (page, done) in enumerate(zip(chunk.pages, self.pages, strict=True))
            if done.bookmarked != doc.by_page.get(page["number"], {})
            or any(doc.levels.get(s) != level for s, level in done.levels.items())
            or any((w in doc.vocabulary) != found for w, found in done.words.items())
        ]
        return (changed[0], changed[-1]) if changed else None


def _written(chunk: ChunkLayout, doc: Analysis) -> Written:
    """The chunk's writing against ``doc``: as it was where that takes the same answers."""
    assert chunk.stats is not None
    old = chunk.written
    if old is None or old.stats is not chunk.stats or old.body != doc.body_size:
        return _write(chunk, doc, None, 0, 0)
    stale = old.stale(chunk, doc)
    return old if stale is None else _write(chunk, doc, old, *stale)


def _write(
    chunk: ChunkLayout, doc: Analysis, old: Written | None, start: int, last: int
) -> Written:
    """The chunk's blocks through a writer that starts as at a document's start; or ``old``
    written again from page ``start`` until, past page ``last``, the writer is in the state
    ``old`` was in at the end of a page (from there ``old`` goes on as the new writing would)."""
    assert chunk.stats is not None
    stats = chunk.stats
    asked = _Asked(doc.vocabulary)
    if old is None:
        out = Writer(asked)
        before: list[Part] = []
        pages: list[PageStart] = []
        events: list[Event] = []
        states: list[WriterState] = []
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
        done = PageStart(
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
            elif (pi, bi) in stats.furniture_pictures:
                continue
            blocks.append(block)
            refs.append(bi)
        notes = _footnotes(blocks, page["height"], doc.body_size)
        for i, (block, bi) in enumerate(zip(blocks, refs, strict=True)):
            ref = (number, bi)
            level: int | None = None
            if "rows" in block:
                kind = "table"
            elif "image" in block:
                kind = "image"
            elif block.get("fig"):
                kind = "figure"
            elif block.get("code"):
                kind = "code"
            elif i in notes and ref not in done.bookmarked:
                kind = "note"
            else:
                kind = "text"
                level = done.bookmarked.get(ref)
                shape = None if page["ocr"] else stats.shapes[ref]
                style = (
                    None
                    if level is not None or shape is None
                    else shape_style(shape, doc.body_size)
                )
                if style is not None:
                    level = done.levels[style] = doc.levels[style]
            event = (kind, block, number, level)
            out.apply(event)
            events.append(event)
            states.append(out.state(number))
            counts.append(len(before) + len(out.parts))
    out.parts = before + out.parts
    return Written(stats, doc.body_size, pages, out, events, states, counts, Joined.of(out.parts))


def _caught_up(
    old: Written,
    pi: int,
    parts: list[Part],
    pages: list[PageStart],
    events: list[Event],
    states: list[WriterState],
    counts: list[int],
) -> Written:
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
    return Written(old.stats, old.body, pages, writer, events, states, counts, Joined.of(parts))


def _footnotes(blocks: list[Block], height: float, body: float) -> set[int]:
    """Indexes of footnote blocks: small print low on the page with no body text below it."""
    small = {
        i
        for i, b in enumerate(blocks)
        if "lines" in b
        and not b.get("code")
        and b["bbox"][1] >= height * 0.6
        and max(line_size(line) for line in b["lines"]) <= body * 0.9
    }
    if not small:
        return small
    # The other text blocks' boxes, gathered once: a form's page has many small blocks low
    # down, each tried against them.
    others = [b["bbox"] for j, b in enumerate(blocks) if j not in small and "lines" in b]
    notes = set()
    for i in small:
        x0, y0, x1, _ = blocks[i]["bbox"]
        if not any(box[1] > y0 and box[0] < x1 and box[2] > x0 for box in others):
            notes.add(i)
    return notes
