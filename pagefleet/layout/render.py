"""Markdown for a whole document from its page layouts.

This runs once per document in the completion step, over the layouts of all chunks in page
order, and is where everything that needs the whole document is decided (rule 5): heading
levels, repeated page headers and footers, paragraphs running across a page break and
hyphenation across line and page breaks. It imports nothing heavier than the standard library,
and runs in time linear in the number of spans.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

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

LineRef = tuple[int, int, int]  # (index of the page in the sequence, block index, line index)
# A line with its place on the page: (top, bottom, block index, line index, line).
_Placed = tuple[float, float, int, int, Line]


def render_document(pages: Sequence[Page], outline: Sequence[OutlineEntry] | None = None) -> str:
    """The Markdown of a whole document from all its page layouts, in page order.

    ``outline`` is the document's bookmarks (:func:`pagefleet.layout.outline.read_outline`);
    where given, the block each bookmark points at becomes a heading at the bookmark's depth,
    in the block's own words, and font sizes rank only the headings the outline lacks.
    """
    doc = _Analysis.of(pages, outline or ())
    out = _Writer(doc)
    for pi, page in enumerate(pages):
        blocks: list[Block] = []
        refs: list[tuple[int, int]] = []
        for bi, block in enumerate(page["blocks"]):
            if "rows" in block:
                blocks.append(block)
            else:
                lines = [
                    ln for li, ln in enumerate(block["lines"]) if (pi, bi, li) not in doc.furniture
                ]
                if not lines:
                    continue
                blocks.append({**block, "lines": lines})
            refs.append((pi, bi))
        notes = _footnotes(blocks, page["height"], doc.body_size)
        for block, ref, i in zip(blocks, refs, range(len(blocks)), strict=True):
            if "rows" in block:
                out.table(block["rows"])
            elif block.get("fig"):
                out.figure(block)
            elif i in notes and ref not in doc.bookmarked:
                out.footnote(block)
            else:
                level = doc.heading_level(block["lines"], ref, page["ocr"])
                out.block(block, page["number"], level)
    return out.finish()


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


def find_furniture(pages: Sequence[Page]) -> set[LineRef]:
    """Lines that are page furniture: headers and footers repeated across pages, page numbers.

    A candidate lies in the top or bottom margin and is set off from the body by the widest
    gap between the body's edge and the page's edge; it is furniture when its text, digits
    ignored, recurs in the same margin on several pages, or when it is only a page number.
    """
    per_page: list[dict[tuple[str, str], list[tuple[int, int]]]] = []
    counts: Counter[tuple[str, str]] = Counter()
    for page in pages:
        found: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for band, bi, li, line in _margin_lines(page):
            found.setdefault((band, _furniture_key(line_text(line))), []).append((bi, li))
        per_page.append(found)
        counts.update(found.keys())
    # Short documents need the line on 2-3 pages; long ones on 5% of them, so that a table
    # row or a title that recurs a few times in 400 pages stays.
    need = 2 if len(pages) <= 3 else max(3, math.ceil(0.05 * len(pages)))
    furniture: set[LineRef] = set()
    for pi, found in enumerate(per_page):
        for key, places in found.items():
            if counts[key] >= need or _PAGE_NUMBER.match(key[1]):
                furniture.update((pi, bi, li) for bi, li in places)
    return furniture


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


@dataclass
class _Analysis:
    """Whole-document facts the rendering of any one block depends on."""

    furniture: set[LineRef]
    body_size: float
    levels: dict[tuple[float, bool], int]
    vocabulary: set[str]
    # (page index, block index) -> level: the blocks the outline's entries point at.
    bookmarked: dict[tuple[int, int], int]

    @classmethod
    def of(cls, pages: Sequence[Page], outline: Sequence[OutlineEntry]) -> _Analysis:
        furniture = find_furniture(pages)
        sizes: Counter[float] = Counter()
        vocabulary: set[str] = set()
        kept: dict[tuple[int, int], list[Line]] = {}
        for pi, page in enumerate(pages):
            for bi, block in enumerate(page["blocks"]):
                if "lines" not in block:
                    continue
                lines = [
                    ln for li, ln in enumerate(block["lines"]) if (pi, bi, li) not in furniture
                ]
                if not lines:
                    continue
                if not block.get("fig"):  # a plot's labels are never a heading
                    kept[pi, bi] = lines
                for line in lines:
                    text = line_text(line)
                    vocabulary.update(w.lower() for w in _WORD.findall(text))
                    # OCR has no font sizes to rank: its lines never make the body size.
                    if not page["ocr"]:
                        sizes[_bucket(line_size(line))] += len(text)
        body = sizes.most_common(1)[0][0] if sizes else 0.0
        bookmarked = _match_outline(pages, kept, outline)
        styles: dict[tuple[float, bool], Counter[int]] = {}
        for (pi, _), lines in kept.items():
            style = None if pages[pi]["ocr"] else _heading_style(lines, body)
            if style:
                styles.setdefault(style, Counter())
        for (pi, bi), level in bookmarked.items():
            style = None if pages[pi]["ocr"] else _heading_style(kept[pi, bi], body)
            if style:
                styles[style][level] += 1
        return cls(furniture, body, _style_levels(styles), vocabulary, bookmarked)

    def heading_level(self, lines: list[Line], ref: tuple[int, int], ocr: bool) -> int | None:
        """The heading level of a block, or None for body text."""
        if ref in self.bookmarked:
            return self.bookmarked[ref]
        if ocr:
            return None  # OCR lines have no font sizes to rank
        style = _heading_style(lines, self.body_size)
        return None if style is None else self.levels[style]


def _style_levels(styles: dict[tuple[float, bool], Counter[int]]) -> dict[tuple[float, bool], int]:
    """Heading level per (size, bold) style, largest first.

    A style that outline entries were found in takes their most common level; any other takes
    one level below the nearest larger style (or level 1), so font ranking fills in only where
    the outline says nothing. Without an outline this is plain ranking by size.
    """
    levels: dict[tuple[float, bool], int] = {}
    above = 0
    for style in sorted(styles, key=lambda s: (-s[0], not s[1])):
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


def _match_outline(
    pages: Sequence[Page], kept: dict[tuple[int, int], list[Line]], outline: Sequence[OutlineEntry]
) -> dict[tuple[int, int], int]:
    """The block each outline entry points at, with the entry's level (0: the block continues
    the heading of the block before it, a title set on two lines in two styles).

    The entry's page (or the page after it, or before it: producers point at the end of the
    previous page too) is searched for a short block holding the title's words, or two
    consecutive ones that do together; of several, the one nearest the height the destination
    gives, else the first in reading order. The block keeps its own words (a bookmark may
    drop a number or a date the heading has).
    """
    index = {page["number"]: pi for pi, page in enumerate(pages)}
    words: dict[tuple[int, int], Counter[str]] = {}

    def words_of(ref: tuple[int, int]) -> Counter[str] | None:
        lines = kept.get(ref)
        if lines is None or len(lines) > _TITLE_MAX_LINES or ref in out:
            return None
        if ref not in words:
            words[ref] = _title_words(" ".join(map(line_text, lines)))
        return words[ref]

    out: dict[tuple[int, int], int] = {}
    for entry in outline:
        target = entry.get("page")
        title = _title_words(entry["title"])
        if target is None or not title:
            continue
        top = entry.get("top")
        best: tuple[tuple[int, int, float, int], list[tuple[int, int]]] | None = None
        for shift, number in enumerate((target, target + 1, target - 1)):
            pi = index.get(number)
            if pi is None:
                continue
            blocks = pages[pi]["blocks"]
            for bi, block in enumerate(blocks):
                have = words_of((pi, bi))
                # A block with none of the title's words holds none of it, alone or as the
                # first of two (the second would then hold it alone, and is tried itself).
                if have is None or not title.keys() & have.keys():
                    continue
                refs = [(pi, bi)]
                if not _holds(title, have):
                    after = words_of((pi, bi + 1)) if bi + 1 < len(blocks) else None
                    if after is None or not _holds(title, have + after):
                        continue
                    refs.append((pi, bi + 1))
                distance = abs(block["bbox"][1] - top) if top is not None and not shift else 0.0
                key = (shift, len(refs), distance, bi)
                if best is None or key < best[0]:
                    best = key, refs
        if best is not None:
            level = min(max(entry["level"], 1), 6)
            out.update({ref: level if k == 0 else 0 for k, ref in enumerate(best[1])})
    return out


def _bucket(size: float) -> float:
    return round(size * 2) / 2


def _heading_style(lines: list[Line], body: float) -> tuple[float, bool] | None:
    """(size, bold) of a block that looks like a heading, else None."""
    if not lines or len(lines) > 3:
        return None
    text = " ".join(line_text(line) for line in lines).strip()
    # A heading has a word: "76a 76b" or "(c)" in bold is a form's field number.
    if not text or len(text) > 150 or not _HEADING_WORD.search(text):
        return None
    if text[0] in BULLETS and (len(text) == 1 or text[1].isspace()):
        return None  # a bullet point set large (slides) is a list item, not a heading
    size = _bucket(max(line_size(line) for line in lines))
    spans = [s for line in lines for s in line["spans"] if s["t"].strip()]
    bold = all(s.get("b") for s in spans)
    if size >= body * 1.15 and len(text.split()) <= 25:
        return size, bold
    if (
        bold
        and size >= body - 0.5
        and len(text.split()) <= 12
        and not text.endswith((".", ",", ";"))
        and (text[0].isupper() or text[0].isdigit())
    ):
        return size, bold
    return None


@dataclass
class _Writer:
    doc: _Analysis
    # (kind, markdown): items of one list ("bullet", "ordered") are joined by a single newline.
    parts: list[tuple[str, str]] = field(default_factory=list)
    # The paragraph being built stays open until the next block, which may continue it.
    open_para: TextBlock | None = None
    open_page: int = 0
    # Footnotes wait for the paragraph they interrupt to end.
    notes: list[str] = field(default_factory=list)
    list_indents: list[float] = field(default_factory=list)
    list_at: tuple[int, float] = (0, 0.0)  # page and top of the last list item

    def block(self, block: TextBlock, page: int, level: int | None) -> None:
        para = self.open_para
        if level is None and para is not None and self._broken(para, block, page):
            para["lines"].extend(block["lines"])
            self.open_page = page
            return
        self._close_para()
        if level is not None:
            self.list_indents.clear()
            text = _plain(block["lines"], self.doc.vocabulary)
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
        self._close_para()
        self.list_indents.clear()
        text = _plain(block["lines"], self.doc.vocabulary)
        if text:
            self.parts.append(("para", _escape_start(text)))

    def footnote(self, block: TextBlock) -> None:
        text = _inline(block["lines"], self.doc.vocabulary)
        if self.open_para is None:
            self.parts.append(("note", _escape_start(text)))
        else:
            self.notes.append(_escape_start(text))

    def table(self, rows: list[list[str]]) -> None:
        self._close_para()
        self.list_indents.clear()
        width = max(len(row) for row in rows)
        cells = [[_cell(c) for c in row] + [""] * (width - len(row)) for row in rows]
        lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
        self.parts.append(("table", "\n".join(lines)))

    def finish(self) -> str:
        self._close_para()
        out: list[str] = []
        for i, (kind, text) in enumerate(self.parts):
            if i:
                same_list = kind in ("bullet", "ordered") and self.parts[i - 1][0] == kind
                out.append("\n" if same_list else "\n\n")
            out.append(text)
        return "".join(out) + ("\n" if out else "")

    def _close_para(self) -> None:
        if self.open_para is not None:
            text = _inline(self.open_para["lines"], self.doc.vocabulary)
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
        text = _inline(lines, self.doc.vocabulary)
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


def _segments(lines: list[Line], vocabulary: set[str]) -> Iterator[tuple[str, bool, bool, str]]:
    """(text, bold, italic, url) runs of a paragraph, lines joined and hyphenation repaired."""
    for i, line in enumerate(lines):
        spans = line["spans"]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        for j, span in enumerate(spans):
            text = span["t"]
            if j == len(spans) - 1 and nxt is not None:
                text = _join(text, line_text(nxt), vocabulary)
            yield text, bool(span.get("b")), bool(span.get("i")), span.get("u", "")


def _join(text: str, following: str, vocabulary: set[str]) -> str:
    """The end of a line as it reads before the next line: hyphen dropped or a space added."""
    stripped = text.rstrip()
    if stripped and _CJK.match(stripped[-1]) and _CJK.match(following.lstrip()[:1]):
        return stripped  # Chinese and Japanese wrap between characters, with no space
    if not stripped.endswith("-") or len(stripped) < 2 or not stripped[-2].isalpha():
        return stripped + " "
    head = _WORD.findall(stripped[:-1])
    tail = _WORD.findall(following)
    if not head or not tail or not following.lstrip()[:1].isalpha():
        return stripped
    joined = (head[-1] + tail[0]).lower()
    hyphenated = f"{head[-1]}-{tail[0]}".lower()
    if joined in vocabulary or (hyphenated not in vocabulary and following.lstrip()[0].islower()):
        return stripped[:-1]
    return stripped


def _inline(lines: list[Line], vocabulary: set[str]) -> str:
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


def _plain(lines: list[Line], vocabulary: set[str]) -> str:
    text = "".join(seg[0] for seg in _segments(lines, vocabulary))
    return _escape(_SPACES.sub(" ", text).strip())


def _escape(text: str) -> str:
    return _ESCAPE.sub(r"\\\1", text)


def _escape_start(text: str) -> str:
    """Keep a paragraph that starts like Markdown block syntax a paragraph."""
    return "\\" + text if _BLOCK_START.match(text) else text


def _cell(text: str) -> str:
    return _escape(_SPACES.sub(" ", text).strip()).replace("|", "\\|")
