"""Facts a reader would check in a document's Markdown, in the shape of the unit tests the
field's benchmarks use (text present, text absent, reading order, table cells), and their
checker.

A facts file (``bench/quality/facts/*.tsv``) holds one fact a line, tab-separated; ``#`` starts
a comment line. The first field names the document (its file name), the second the kind:

- ``present TEXT [RATIO]``: TEXT's words are in the Markdown in a row, a few of them lost or
  changed: at least RATIO (default 0.9) of them, in order, within a window about TEXT's
  length (a hyphenation or a sub/superscript cut elsewhere is no failure);
- ``absent TEXT [MAX]``: TEXT's words in a row occur at most MAX times (default 0): a running
  head, a watermark (MAX 1 when the same words are also the title once);
- ``absent_line TEXT``: no line of the Markdown is TEXT alone: a page number, a short head;
- ``order A B``: A and B are present (as ``present``), A's first place before B's;
- ``heading TEXT``: a Markdown heading holds TEXT's words in a row;
- ``cell VALUE HEADER [BESIDE]``: a table cell's words are VALUE's, a cell above it in its
  column holds HEADER's words in a row (HEADER empty: no header asked), and, when BESIDE is
  given, a cell of the same row is BESIDE. Tables are Markdown's and HTML's; an HTML cell
  that spans columns or rows stands in each place it covers, so with a head of several rows
  (a label over a group of columns, the columns' own labels below) either of a column's
  head cells is its header, and a label spanning rows is beside each of them.

Words are the quality report's (:mod:`bench.quality.words`): case, punctuation and markup do
not count. Facts are written by reading the document (its text and page images), never from a
converter's output.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from bench.quality.words import markdown_words, words

FACTS_DIR = Path(__file__).resolve().parent / "facts"
KINDS = {
    "present": "text",
    "absent": "furniture",
    "absent_line": "furniture",
    "order": "order",
    "heading": "heading",
    "cell": "table",
}
CLASSES = tuple(dict.fromkeys(KINDS.values()))
_ARGS = {
    "present": (1, 2),
    "absent": (1, 2),
    "absent_line": (1, 1),
    "order": (2, 2),
    "heading": (1, 1),
    "cell": (2, 3),
}
_DEFAULT_RATIO = 0.9
# A fuzzy match is looked for at no more than this many candidate places (most likely first).
_MAX_CANDIDATES = 400
_PIPE = re.compile(r"(?<!\\)\|")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")


@dataclass(frozen=True)
class Fact:
    doc: str
    kind: str
    args: tuple[str, ...]
    where: str  # file:line, for the report

    @property
    def cls(self) -> str:
        return KINDS[self.kind]

    def __str__(self) -> str:
        return f"{self.kind} " + " | ".join(a[:60] for a in self.args)


class FactsError(ValueError):
    pass


def parse_facts(text: str, source: str = "<facts>") -> list[Fact]:
    facts: list[Fact] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        doc, kind, *args = raw.rstrip("\n").split("\t")
        where = f"{source}:{number}"
        if kind not in _ARGS:
            raise FactsError(f"{where}: unknown kind {kind!r}")
        low, high = _ARGS[kind]
        if not low <= len(args) <= high:
            raise FactsError(f"{where}: {kind} takes {low}-{high} fields, not {len(args)}")
        if not words(args[0]):
            raise FactsError(f"{where}: {kind} has no words to look for")
        if kind == "present" and len(args) == 2 and not 0 < float(args[1]) <= 1:
            raise FactsError(f"{where}: ratio {args[1]} is not in (0, 1]")
        if kind == "absent" and len(args) == 2 and not args[1].isdigit():
            raise FactsError(f"{where}: count {args[1]!r} is not a number")
        facts.append(Fact(doc, kind, tuple(args), where))
    return facts


def load_facts(folder: Path = FACTS_DIR) -> dict[str, list[Fact]]:
    """Every facts file of ``folder``, by document name."""
    by_doc: dict[str, list[Fact]] = defaultdict(list)
    for path in sorted(folder.glob("*.tsv")):
        for fact in parse_facts(path.read_text(), path.name):
            by_doc[fact.doc].append(fact)
    return dict(by_doc)


class MarkdownText:
    """A converter's Markdown, indexed for the checks: its words with where each occurs, its
    lines' words, its headings' words and its tables' cells."""

    def __init__(self, markdown: str) -> None:
        self.words = markdown_words(markdown)
        self.places: dict[str, list[int]] = defaultdict(list)
        for i, w in enumerate(self.words):
            self.places[w].append(i)
        lines = markdown.splitlines()
        self.lines = {tuple(markdown_words(line)) for line in lines}
        self.headings = [markdown_words(line) for line in lines if _HEADING.match(line)]
        self.tables = [*_pipe_tables(lines), *_html_tables(markdown)]

    def find(self, target: Sequence[str], ratio: float = _DEFAULT_RATIO) -> int | None:
        """Where ``target`` first occurs, at least ``ratio`` of its words in order in a window
        of about its length; None when it does not."""
        n = len(target)
        if not n:
            return None
        exact = self.runs(target)
        need = max(1, math.ceil(ratio * n))
        slack = n - need + 1
        if exact and (ratio >= 1.0 or exact[0] == 0):
            return exact[0]
        # Each occurrence of one of the target's words votes for the start it implies; starts
        # with enough votes nearby are checked, earliest first.
        votes: Counter[int] = Counter()
        for k, w in enumerate(target):
            for p in self.places.get(w, ()):
                votes[p - k] += 1
        starts = sorted(votes)
        candidates: list[int] = []
        lo = hi = window = 0
        for s in starts:
            while hi < len(starts) and starts[hi] <= s + slack:
                window += votes[starts[hi]]
                hi += 1
            while starts[lo] < s - slack:
                window -= votes[starts[lo]]
                lo += 1
            if window >= need:
                candidates.append(s)
        best = exact[0] if exact else None
        if best is not None:
            candidates = [s for s in candidates if s < best]
        likely = sorted(candidates, key=lambda s: -votes[s])[:_MAX_CANDIDATES]
        for s in sorted(likely):
            segment = self.words[max(0, s - slack) : s + n + slack]
            if _lcs(target, segment) >= need:
                return s
        return best

    def runs(self, target: Sequence[str]) -> list[int]:
        """Where ``target``'s words occur in a row."""
        n = len(target)
        return [p for p in self.places.get(target[0], ()) if self.words[p : p + n] == list(target)]


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b):
            above = row[j + 1]
            row[j + 1] = diagonal + 1 if x == y else max(above, row[j])
            diagonal = above
    return row[-1]


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


Table = list[list[list[str]]]  # rows of cells of words


def _pipe_tables(lines: Iterable[str]) -> list[Table]:
    tables: list[Table] = []
    current: Table = []
    for line in [*lines, ""]:
        stripped = line.strip()
        if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:
            cells = [c.strip() for c in _PIPE.split(stripped[1:-1])]
            if all(re.fullmatch(r":?-{3,}:?", c) for c in cells if c):
                continue  # the delimiter row
            current.append([markdown_words(c) for c in cells])
        elif current:
            tables.append(current)
            current = []
    return tables


class _HtmlTables(HTMLParser):
    """HTML tables as rows of cells: a cell that spans columns or rows stands in each place it
    covers (it heads each column under it, and sits beside each row it spans)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        # Per table: the places of rows below that cells spanning rows cover, with their words.
        self.below: list[dict[tuple[int, int], list[str]]] = []
        self.cell: list[str] | None = None
        self.span = (1, 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
            self.below.append({})
        elif tag == "tr" and self.tables:
            self._fill()
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self.cell = []
            given = dict(attrs)
            self.span = (_count(given.get("rowspan")), _count(given.get("colspan")))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.tables and self.tables[-1]:
            cell = markdown_words(" ".join(self.cell))
            self._fill()
            r, c = len(self.tables[-1]) - 1, len(self.tables[-1][-1])
            rows, cols = self.span
            self.tables[-1][-1].extend([cell] * cols)
            for i in range(1, rows):
                for j in range(cols):
                    self.below[-1][(r + i, c + j)] = cell
            self.cell = None
        elif tag == "tr" and self.tables:
            self._fill()

    def _fill(self) -> None:
        """Put into the open row the cells from rows above that cover its next places."""
        if not self.tables or not self.tables[-1]:
            return
        row, below = self.tables[-1][-1], self.below[-1]
        r = len(self.tables[-1]) - 1
        while (r, len(row)) in below:
            row.append(below.pop((r, len(row))))

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def _count(value: str | None) -> int:
    return int(value) if value and value.isdigit() and int(value) > 0 else 1


def _html_tables(markdown: str) -> list[Table]:
    if "<table" not in markdown.lower():
        return []
    parser = _HtmlTables()
    parser.feed(markdown)
    return [t for t in parser.tables if t]


def check(fact: Fact, text: MarkdownText) -> bool:
    """Whether the Markdown ``text`` holds ``fact``."""
    args = fact.args
    target = words(args[0])
    if fact.kind == "present":
        return text.find(target, float(args[1]) if len(args) > 1 else _DEFAULT_RATIO) is not None
    if fact.kind == "absent":
        return len(text.runs(target)) <= (int(args[1]) if len(args) > 1 else 0)
    if fact.kind == "absent_line":
        return tuple(target) not in text.lines
    if fact.kind == "order":
        first, second = text.find(target), text.find(words(args[1]))
        return first is not None and second is not None and first < second
    if fact.kind == "heading":
        return any(_contains(h, target) for h in text.headings)
    header = words(args[1])
    beside = words(args[2]) if len(args) > 2 else None
    for table in text.tables:
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                if cell != target:
                    continue
                above = [table[i][c] for i in range(r) if c < len(table[i])]
                if header and not any(_contains(h, header) for h in above):
                    continue
                if beside is None or any(o == beside for k, o in enumerate(row) if k != c):
                    return True
    return False


@dataclass
class FactsScore:
    """One converter's facts on one document: passed and checked, by class."""

    passed: Counter[str]
    total: Counter[str]
    failed: list[Fact]

    @classmethod
    def of(cls, facts: Sequence[Fact], markdown: str) -> FactsScore:
        text = MarkdownText(markdown)
        passed: Counter[str] = Counter()
        total: Counter[str] = Counter()
        failed: list[Fact] = []
        for fact in facts:
            total[fact.cls] += 1
            if check(fact, text):
                passed[fact.cls] += 1
            else:
                failed.append(fact)
        return cls(passed, total, failed)

    def rate(self, cls: str | None = None) -> float | None:
        total = sum(self.total.values()) if cls is None else self.total[cls]
        passed = sum(self.passed.values()) if cls is None else self.passed[cls]
        return passed / total if total else None
