"""Words as the quality report counts them, from a text layer and from Markdown alike."""

from __future__ import annotations

import html
import re

# Letters and digits are separate words: where pdfium joins a subscript to its base ("x0")
# and Markdown splits it with emphasis ("*x*0"), or the other way round, both read alike.
# Chinese and Japanese have no spaces between words, and a line may wrap between any two
# characters: each character is a word of its own.
_CJK = "\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W\d_{_CJK}]+|\d+")
# A hyphen between letters, possibly at a line break, is dropped on both sides of the
# comparison: "docu-\nmented", "documented" and "well-known" each make one word.
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\x02\u00ad\ufffe]\s*(?=[^\W\d_])")
# Link and image targets are markup, not words of the page.
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
# The tags of an HTML table (written where a table has cells that span): markup too.
_TABLE_TAG = re.compile(r"</?(?:table|thead|tbody|tr|th|td)\b[^>]*>", re.IGNORECASE)
# Emphasis markers: unescaped asterisks, underscores at a word's edge.
_EMPHASIS = re.compile(r"(?<!\\)\*+|(?<![\\\w])_+|(?<!\\)_+(?!\w)")


def words(text: str) -> list[str]:
    return _WORD.findall(_INNER_HYPHEN.sub("", text).lower())


def markdown_words(markdown: str) -> list[str]:
    """Words of Markdown as a reader sees them: link targets and emphasis markers dropped,
    so ``*t*x`` reads as the one word "tx" it renders as; an HTML table's tags are dropped
    and its character references read as the characters they stand for."""
    text = _EMPHASIS.sub("", _LINK_TARGET.sub("]", markdown))
    if "<t" in text:
        text = html.unescape(_TABLE_TAG.sub(" ", text))
    return words(text)
