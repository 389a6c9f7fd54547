"""Inline Markdown: a block's lines as one run of text, line breaks joined and hyphenation
repaired, with bold, italic, links and the escaping that keeps plain text plain."""

from __future__ import annotations

import re
from collections.abc import Container, Iterator

from pagefleet.layout.lines import line_text
from pagefleet.layout.schema import Line, Span

# Han, kana and CJK punctuation and full-width forms.
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
# The words hyphenation is repaired against: the document's vocabulary counts these.
WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
# WORD in lowercased ASCII text, twice as quick: there [^\W\d_] is [a-z], and lowercasing
# maps each letter to one letter, none to a mark or a space.
_ASCII_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_ESCAPED = "\\`*_[]<>"
_ESCAPE = re.compile(f"[{re.escape(_ESCAPED)}]")
# A letter or a digit (str.isalnum; re's \w adds only "_").
_ALNUM = re.compile(r"[^\W_]")
_BLOCK_START = re.compile(r"^(#{1,6}(?:\s|$)|[>+|~]|[-*=](?:\s|[-*=]*$)|\d+[.)](?:\s|$))")


def lower_words(text: str) -> list[str]:
    """The words of ``text`` (WORD), lowercased: what the vocabulary counts."""
    if text.isascii():
        return _ASCII_WORD.findall(text.lower())
    return [word.lower() for word in WORD.findall(text)]


def strip_prefix(lines: list[Line], count: int) -> list[Line]:
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


# A run's style: bold, italic, the url it links to ("" for none).
_Style = tuple[bool, bool, str]


def _segments(lines: list[Line], vocabulary: Container[str]) -> Iterator[tuple[str, _Style]]:
    """(text, style) runs of a paragraph, lines joined and hyphenation repaired."""
    last = len(lines) - 1
    for i, line in enumerate(lines):
        spans = line["spans"]
        end = len(spans) - 1 if i < last else -1  # the span that the next line joins
        for j, span in enumerate(spans):
            text = span["t"]
            if j == end:
                text = _join(text, lines[i + 1], vocabulary)
            yield text, (bool(span.get("b")), bool(span.get("i")), span.get("u", ""))


def _join(text: str, nxt: Line, vocabulary: Container[str]) -> str:
    """The end of a line as it reads before the next line: hyphen dropped or a space added."""
    stripped = text.rstrip()
    if stripped and _CJK.match(stripped[-1]) and _CJK.match(line_text(nxt).lstrip()[:1]):
        return stripped  # Chinese and Japanese wrap between characters, with no space
    if not stripped.endswith("-") or len(stripped) < 2 or not stripped[-2].isalpha():
        return stripped + " "
    following = line_text(nxt)  # only read where a hyphen or a CJK character asks
    head = WORD.findall(stripped[:-1])
    tail = WORD.findall(following)
    if not head or not tail or not following.lstrip()[:1].isalpha():
        return stripped
    joined = (head[-1] + tail[0]).lower()
    hyphenated = f"{head[-1]}-{tail[0]}".lower()
    if joined in vocabulary or (hyphenated not in vocabulary and following.lstrip()[0].islower()):
        return stripped[:-1]
    return stripped


def inline_markdown(lines: list[Line], vocabulary: Container[str]) -> str:
    """Paragraph text with bold, italic and links as Markdown."""
    out: list[str] = []
    # The run of text in one style being built: its pieces are joined once, a paragraph can
    # have 1000s of spans. Blank text goes with the run before it, whatever its style.
    pieces: list[str] = []
    style: _Style = (False, False, "")
    for text, run in _segments(lines, vocabulary):
        if pieces and (run == style or not (run[2] or text.strip())):
            pieces.append(text)
        else:
            if pieces:
                out.append(_styled("".join(pieces), *style))
            pieces = [text]
            style = run
    if pieces:
        out.append(_styled("".join(pieces), *style))
    return squash("".join(out))


def _styled(text: str, bold: bool, italic: bool, url: str) -> str:
    """A run of text as Markdown: escaped, its emphasis and link around it, not its spaces."""
    core = text.strip()
    if not core:
        return text
    md = escape(core)
    # Emphasis on a lone symbol (a footnote star, a bullet) only adds noise.
    if (bold or italic) and not _ALNUM.search(core):
        bold = italic = False
    if italic:
        md = f"*{md}*"
    if bold:
        md = f"**{md}**"
    if url:
        md = f"[{md}]({url.replace(' ', '%20').replace(')', '%29')})"
    if len(core) == len(text):
        return md
    return text[: len(text) - len(text.lstrip())] + md + text[len(text.rstrip()) :]


def plain_text(lines: list[Line], vocabulary: Container[str]) -> str:
    """Paragraph text without emphasis or links (a heading, a plot's labels), escaped."""
    text = "".join(seg[0] for seg in _segments(lines, vocabulary))
    return escape(squash(text))


def squash(text: str) -> str:
    """Text with its runs of spaces as one space, none at either end. (A regex's \\s and
    str.split() both split at the characters str.isspace() names; splitting is 3-5 times
    quicker than a substitution.)"""
    return " ".join(text.split())


def escape(text: str) -> str:
    """Text with the characters that would start inline Markdown escaped."""
    # Most text has nothing to escape: a search costs a quarter of a substitution, and
    # replacing the few characters found is quicker than a substitution's template.
    if _ESCAPE.search(text) is None:
        return text
    for c in _ESCAPED:  # the backslash first: the others' escapes are not escaped again
        text = text.replace(c, "\\" + c)
    return text


def escape_block_start(text: str) -> str:
    """Keep a paragraph that starts like Markdown block syntax a paragraph."""
    return "\\" + text if _BLOCK_START.match(text) else text


def table_cell(text: str) -> str:
    """A cell's text on one line, escaped, its pipes too."""
    return escape(squash(text)).replace("|", "\\|")
