"""The Markdown writer: a document's blocks in reading order in, Markdown parts out.

What carries from one block to the next (an open paragraph that the next page may continue,
footnotes and pictures waiting for it to end, the list's indents) is the writer's state; two
writers in the same state write the same from there, which is what lets a chunk be written on
its own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Container
from dataclasses import dataclass, field

from pagefleet.keys import ASSET_LINK_PREFIX
from pagefleet.layout.inline import (
    escape,
    escape_block_start,
    inline_markdown,
    plain_text,
    strip_prefix,
    table_cell,
)
from pagefleet.layout.lines import BULLETS, LIST_MARKER, line_text
from pagefleet.layout.listings import listing_text
from pagefleet.layout.paragraphs import continues
from pagefleet.layout.schema import Block, TableBlock, TextBlock

_BACKTICKS = re.compile(r"`+")

# The records built per block are plain tuples, not NamedTuples: building a NamedTuple costs
# several times as much, and with them rendering took 5-8% longer.
# (kind, markdown): kind is "para", "heading", "bullet", "ordered", "note", "table", "image"
# or "code".
Part = tuple[str, str]
# A block for the writer: (kind, block, page number, heading level); kind is "table",
# "image", "figure", "code", "note" or "text".
Event = tuple[str, Block, int, int | None]
# What the writer's next steps depend on (see Writer.state).
WriterState = tuple[
    tuple[int, int, int, int] | None,
    tuple[Part, ...],
    tuple[float, ...],
    tuple[int, float] | None,
    Part | None,
]


def separator(before: str, kind: str) -> str:
    """Items of one list ("bullet", "ordered") are joined by a single newline."""
    return "\n" if kind == before and kind in ("bullet", "ordered") else "\n\n"


@dataclass
class Joined:
    """Parts as Markdown, with each part's span in it, so that any run of them is a slice."""

    text: str
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, parts: list[Part]) -> Joined:
        pieces: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        at = 0
        for i, (kind, text) in enumerate(parts):
            if i:
                between = separator(parts[i - 1][0], kind)
                pieces.append(between)
                at += len(between)
            pieces.append(text)
            starts.append(at)
            at += len(text)
            ends.append(at)
        return cls("".join(pieces), starts, ends)


@dataclass
class Writer:
    """Blocks to Markdown parts, a block at a time (:meth:`apply`)."""

    vocabulary: Container[str]
    parts: list[Part] = field(default_factory=list)
    # The paragraph being built stays open until the next block, which may continue it.
    open_para: TextBlock | None = None
    open_page: int = 0
    # Footnotes and pictures wait for the paragraph they interrupt to end.
    waiting: list[Part] = field(default_factory=list)
    list_indents: list[float] = field(default_factory=list)
    list_at: tuple[int, float] = (0, 0.0)  # page and top of the last list item

    def apply(self, event: Event) -> None:
        kind, block, page, level = event
        if "rows" in block:
            self.table(block)
        elif "image" in block:
            self.wait(("image", f"![]({ASSET_LINK_PREFIX}{block['image']})"))
            # A drawing's labels: a label a line, in one paragraph under the picture.
            labels = [plain_text(label, self.vocabulary) for label in block.get("labels", ())]
            if any(labels):
                self.wait(("para", "\n".join(escape_block_start(t) for t in labels if t)))
        elif kind == "figure":
            self.figure(block)
        elif kind == "code":
            self.code(block)
        elif kind == "note":
            self.wait(
                ("note", escape_block_start(inline_markdown(block["lines"], self.vocabulary)))
            )
        else:
            self.block(block, page, level)

    def state(self, page: int) -> WriterState:
        """All that the writing of blocks from ``page`` on depends on: two writers in the same
        state write the same from there. The open paragraph is told by its first and last
        line objects and its length; the last list item's place only counts on its page."""
        para = self.open_para
        return (
            None
            if para is None
            else (self.open_page, id(para["lines"][0]), id(para["lines"][-1]), len(para["lines"])),
            tuple(self.waiting),
            tuple(self.list_indents),
            self.list_at if self.list_at[0] == page else None,
            self.parts[-1] if self.parts else None,
        )

    def resume(self, vocabulary: Container[str], last: Part | None) -> Writer:
        """A writer in this one's state, whose parts so far end in ``last``."""
        para = self.open_para
        return Writer(
            vocabulary,
            [last] if last is not None else [],
            None if para is None else {"bbox": para["bbox"], "lines": list(para["lines"])},
            self.open_page,
            list(self.waiting),
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
            text = plain_text(block["lines"], self.vocabulary)
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
        text = plain_text(block["lines"], self.vocabulary)
        if text:
            self.parts.append(("para", escape_block_start(text)))

    def wait(self, part: Part) -> None:
        """A footnote or a picture: written after the open paragraph, which may go on past it."""
        if self.open_para is None:
            self.parts.append(part)
        else:
            self.waiting.append(part)

    def code(self, block: TextBlock) -> None:
        """A code listing, fenced, its lines and their indents as set."""
        self.close()
        self.list_indents.clear()
        text = listing_text(block["lines"])
        longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
        fence = "`" * max(3, longest + 1)
        self.parts.append(("code", f"{fence}\n{text}\n{fence}"))

    def table(self, block: TableBlock) -> None:
        self.close()
        self.list_indents.clear()
        spans = block.get("span")
        rows = block["rows"]
        self.parts.append(("table", html_table(rows, spans) if spans else markdown_table(rows)))

    def close(self) -> None:
        """End the open paragraph, and write the footnotes and pictures that waited for it."""
        if self.open_para is not None:
            text = inline_markdown(self.open_para["lines"], self.vocabulary)
            if text:
                self.parts.append(("para", escape_block_start(text)))
            self.open_para = None
        self.parts.extend(self.waiting)
        self.waiting.clear()

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
        lines = strip_prefix(block["lines"], len(marker))
        text = inline_markdown(lines, self.vocabulary)
        symbol = marker.strip().strip("()")
        kind = "bullet"
        if symbol[:1] in BULLETS:
            bullet = "- "
        elif symbol[:-1].isdigit():
            kind, bullet = "ordered", f"{symbol[:-1]}. "
        else:
            bullet = "- " + escape(marker.strip()) + " "
        self.parts.append((kind, "    " * depth + bullet + text))


def markdown_table(rows: list[list[str]]) -> str:
    """A table none of whose cells spans, as a Markdown table: its first row the head."""
    width = max(len(row) for row in rows)
    cells = [[table_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return "\n".join(lines)


def html_table(rows: list[list[str]], spans: list[list[int]]) -> str:
    """A table with cells that span rows or columns, as an HTML table (Markdown's tables have
    no spanning cell). The head is the first row, and where a cell of it spans columns (a
    label over a group of columns, theirs below it), the rows its cells span down into."""
    at = {(r, c): (height, width) for r, c, height, width in spans}
    covered = {
        (r + i, c + j)
        for r, c, height, width in spans
        for i in range(height)
        for j in range(width)
        if i or j
    }
    head = 1
    if any(width > 1 for r, _, _, width in spans if r == 0):
        while (deeper := max(r + height for r, _, height, _ in spans if r < head)) > head:
            head = deeper
    lines = ["<table>"]
    for r, row in enumerate(rows):
        tag = "th" if r < head else "td"
        cells = []
        for c, text in enumerate(row):
            if (r, c) in covered:
                continue
            height, width = at.get((r, c), (1, 1))
            attrs = (f' rowspan="{height}"' if height > 1 else "") + (
                f' colspan="{width}"' if width > 1 else ""
            )
            cell = html.escape(" ".join(text.split()), quote=False)
            cells.append(f"<{tag}{attrs}>{cell}</{tag}>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</table>")
    return "\n".join(lines)
