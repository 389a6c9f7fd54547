"""A document's Markdown from its chunks' writing, and the entry points that render one.

:func:`stitch` joins the chunks' writing: across a boundary the writer replays the next
chunk's blocks from the state the chunk before left until it is in the state that chunk's own
writing was in, and takes the rest of that writing as it is. Rendering imports nothing heavier
than the standard library, and runs in time linear in the number of spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pagefleet.layout.analysis import Analysis, ChunkLayout
from pagefleet.layout.replay import Written, write_chunks
from pagefleet.layout.schema import OutlineEntry, Page
from pagefleet.layout.writer import Part, Writer, separator


def render_document(pages: Sequence[Page], outline: Sequence[OutlineEntry] | None = None) -> str:
    """The Markdown of a whole document from all its page layouts, in page order.

    ``outline`` is the document's bookmarks (:func:`pagefleet.layout.outline.read_outline`);
    where given, the block each bookmark points at becomes a heading at the bookmark's depth,
    in the block's own words, and font sizes rank only the headings the outline lacks.
    """
    return render_chunks([ChunkLayout.of(pages, outline or ())])


def render_chunks(chunks: Sequence[ChunkLayout]) -> str:
    """The Markdown of a document from its chunks: every page of it, in page order."""
    doc, written = write_chunks(chunks, sum(len(c.pages) for c in chunks))
    return stitch(written, doc)


def stitch(written: Sequence[Written], doc: Analysis) -> str:
    """The chunks' writing as one document."""
    out = _Output()
    carry: Writer | None = None  # where the chunk before left off
    live: Writer | None = None  # replaying a chunk's blocks, not yet in its writing's state
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


@dataclass
class _Output:
    """The document's Markdown as it is stitched, its last part held back: the next chunk's
    replay may still change it."""

    pieces: list[str] = field(default_factory=list)
    kind: str = ""  # of the last part in pieces
    last: Part | None = None

    def _put(self, kind: str, text: str) -> None:
        if self.pieces:
            self.pieces.append(separator(self.kind, kind))
        self.pieces.append(text)
        self.kind = kind

    def add(self, parts: Sequence[Part]) -> None:
        for part in parts:
            if self.last is not None:
                self._put(*self.last)
            self.last = part

    def add_written(self, chunk: Written, start: int) -> None:
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

    def take_last(self) -> Part | None:
        last, self.last = self.last, None
        return last

    def finish(self) -> str:
        if self.last is not None:
            self._put(*self.last)
        return "".join(self.pieces) + ("\n" if self.pieces else "")
