"""Where a document's Markdown converted in chunks differs from the same document converted
whole, and of which kind: the report of ``scripts/quality --converter marker``.

Both texts are cut into blocks (runs of lines between blank lines: a heading, a paragraph, a
table) and aligned with difflib. Each block that differs is counted once, in the first kind it
fits:

- heading level: a heading on both sides with the same text and another number of ``#``;
- paragraph join: blocks of one side that are, joined, the blocks of the other (a paragraph
  that runs across pages cut in two, or two paragraphs run together), whitespace and the
  hyphen of a word broken across the join aside;
- link: the same text once link targets and the anchors marker puts on their targets
  (``<span id="page-3-0">``) are taken out (a chunk keeps no link to a page it lacks);
- repeated text: a block on one side only whose text, less its digits, recurs on that side (a
  running head or foot that marker drops from the whole document, where it recurs on a fifth
  of the pages, but a chunk with fewer such pages keeps);
- other: anything else.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

KINDS = ("heading levels", "paragraph joins", "links", "repeated text", "other")

_HEADING = re.compile(r"^(#+) (.*)$", re.DOTALL)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_ANCHOR = re.compile(r'<span id="[^"]*"></span>')
_ESCAPED = re.compile(r"\\([()\[\]])")  # marker escapes brackets in a link's text
_JOIN_GAP = re.compile(r"-?\s+")
_DIGITS = re.compile(r"\d+")
CLIP = 60


def blocks(markdown: str) -> list[str]:
    """The Markdown's blocks: runs of non-blank lines, each stripped of trailing space."""
    return [b.strip() for b in re.split(r"\n\s*\n", markdown) if b.strip()]


@dataclass
class ChunkDiff:
    """How the chunked Markdown of one document differs from its whole Markdown."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    # The first line that differs: its number in the whole text (1-based), then each side's.
    first_line: int = 0
    first_whole: str = ""
    first_chunked: str = ""

    @property
    def identical(self) -> bool:
        return self.first_line == 0

    @classmethod
    def of(cls, whole: str, chunked: str) -> ChunkDiff:
        diff = cls()
        if whole == chunked:
            return diff
        a, b = whole.splitlines(), chunked.splitlines()
        line = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
        line = min(len(a), len(b)) if line is None else line
        diff.first_line = line + 1
        diff.first_whole = a[line] if line < len(a) else "(end)"
        diff.first_chunked = b[line] if line < len(b) else "(end)"
        wb, cb = blocks(whole), blocks(chunked)
        matcher = difflib.SequenceMatcher(None, wb, cb, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                diff._classify(wb[i1:i2], cb[j1:j2], wb, cb)
        return diff

    def _classify(self, ours: list[str], theirs: list[str], wb: list[str], cb: list[str]) -> None:
        """Count the blocks of one differing stretch (ours: the whole side's), walking both
        sides together: a pair of a known kind, a block that joined blocks of the other side
        make, a repeated block on one side only, else other."""
        i = j = 0
        while i < len(ours) or j < len(theirs):
            if i < len(ours) and j < len(theirs):
                kind = _pair_kind(ours[i], theirs[j])
                if kind != "other":
                    self.counts[kind] += 1
                    i, j = i + 1, j + 1
                    continue
                if n := _joined(ours[i], theirs[j:]):
                    self.counts["paragraph joins"] += n - 1
                    i, j = i + 1, j + n
                    continue
                if n := _joined(theirs[j], ours[i:]):
                    self.counts["paragraph joins"] += n - 1
                    i, j = i + n, j + 1
                    continue
            if i < len(ours) and _recurs(ours[i], wb):
                self.counts["repeated text"] += 1
                i += 1
            elif j < len(theirs) and _recurs(theirs[j], cb):
                self.counts["repeated text"] += 1
                j += 1
            else:
                self.counts["other"] += 1
                i, j = i + 1, j + 1


def _joined(block: str, parts: list[str]) -> int:
    """How many of ``parts``, from the first, join into ``block`` (0: none, or only one)."""
    key = _join_key([block])
    for n in range(2, len(parts) + 1):
        joined = _join_key(parts[:n])
        if joined == key:
            return n
        if not key.startswith(joined):
            break
    return 0


def _recurs(block: str, side: list[str]) -> bool:
    """The block's text, less its digits, is on its side more than once (a page's number
    changes from one running foot to the next)."""
    text = _DIGITS.sub("", block)
    return sum(_DIGITS.sub("", other) == text for other in side) > 1


def _pair_kind(whole: str, chunked: str) -> str:
    a, b = _HEADING.match(whole), _HEADING.match(chunked)
    if a and b and a.group(2) == b.group(2):
        return "heading levels"
    if _unlinked(whole) == _unlinked(chunked):
        return "links"
    if _join_key([whole]) == _join_key([chunked]):
        return "paragraph joins"
    return "other"


def _unlinked(text: str) -> str:
    return _ANCHOR.sub("", _LINK.sub(lambda link: _ESCAPED.sub(r"\1", link.group(1)), text))


def _join_key(parts: list[str]) -> str:
    return _JOIN_GAP.sub("", "\n".join(parts))


@dataclass
class DocResult:
    """One document's run: its size, the two conversions' times, and the difference (None when
    a conversion failed, ``error`` saying why)."""

    name: str
    pages: int
    chunks: int
    whole_s: float
    chunked_s: float
    diff: ChunkDiff | None
    error: str = ""


def _clip(text: str) -> str:
    text = text.replace("|", "\\|").replace("`", "'")
    return text if len(text) <= CLIP else text[: CLIP - 1] + "…"


def report(results: list[DocResult], skipped: list[tuple[str, int]], chunk_pages: int) -> str:
    """The Markdown report: a row per document, the totals, and the documents left out."""
    head = ["document", "pages", "chunks", "whole s", "chunked s", "same", *KINDS]
    rows = [
        "| " + " | ".join([*head, "first difference (line: whole / chunked)"]) + " |",
        "|" + "---|" * (len(head) + 1),
    ]
    totals = dict.fromkeys(KINDS, 0)
    same = 0
    for r in results:
        cells = [r.name, str(r.pages), str(r.chunks), f"{r.whole_s:.0f}", f"{r.chunked_s:.0f}"]
        if r.diff is None:
            cells += ["error", *["" for _ in KINDS], _clip(r.error)]
        else:
            same += r.diff.identical
            for kind in KINDS:
                totals[kind] += r.diff.counts[kind]
            first = (
                ""
                if r.diff.identical
                else f"{r.diff.first_line}: `{_clip(r.diff.first_whole)}` / "
                f"`{_clip(r.diff.first_chunked)}`"
            )
            cells += ["yes" if r.diff.identical else "no"]
            cells += [str(r.diff.counts[kind]) for kind in KINDS]
            cells += [first]
        rows.append("| " + " | ".join(cells) + " |")
    failed = sum(r.diff is None for r in results)
    lines = [
        f"Chunks of {chunk_pages} pages against the whole document: {same} of {len(results)} "
        f"documents identical" + (f", {failed} failed" if failed else "") + ".",
        "Differing blocks: " + ", ".join(f"{kind} {totals[kind]}" for kind in KINDS) + ".",
    ]
    if skipped:
        lines.append(
            "Left out (pages): " + ", ".join(f"{name} ({pages})" for name, pages in skipped) + "."
        )
    return "\n".join(rows) + "\n\n" + "\n".join(lines)
