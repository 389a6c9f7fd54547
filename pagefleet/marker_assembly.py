"""marker's document-wide decisions, made once over every chunk of a document (rule 5).

A marker chunk's pages carry their Markdown, rendered by marker's own renderer over the chunk,
and their structure (``runner/converters/marker.py:page_structure``). What marker 2.0.0 decides
over the whole document is decided here again, over all of it:

- section-header levels, ranked over every header's line height
  (:mod:`pagefleet.marker_headings`), rewritten into the heading lines the chunks rendered;
- a paragraph that runs on across a chunk boundary: marker's TextProcessor rule
  (marker/processors/text.py:27-100) on the boundary's two blocks, and its renderer's joining
  of a continued paragraph (marker/renderers/markdown.py:86-99): no paragraph break, a
  line-end hyphen dropped.

Within a chunk marker has decided both already; its pages are joined as marker joins pages,
by a blank line (markdown.py:23-26 collapses the rest).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pagefleet.marker_headings import heading_levels

# One page of a chunk result as the runner wrote it (PageContent's JSON).
PageJson = dict[str, Any]
TEXT_TYPES = ("Text", "TextInlineMath")
HYPHENS = "-—¬"
HEADING_LINE = re.compile(r"^(#{1,6}) ", re.MULTILINE)


def ends_hyphenated(text: str) -> bool:
    """marker's ``.*[\\p{Ll}|\\d][-—¬]\\s?$`` (marker/processors/text.py:91-93,
    renderers/markdown.py:92-94): a lowercase letter, a digit or "|" before a hyphen at the end,
    one blank after it at most."""
    if text[-1:].isspace():
        text = text[:-1]
    return (
        len(text) >= 2
        and text[-1] in HYPHENS
        and (text[-2].islower() or text[-2].isdigit() or text[-2] == "|")
    )


def continues(last: dict[str, Any], first: dict[str, Any]) -> bool:
    """Whether marker's TextProcessor gives the paragraph ``last`` (a page's last block) a
    continuation into ``first`` (the first block of the next page with blocks)
    (marker/processors/text.py:29-44, 62-66, 95-100)."""
    return (
        last["type"] in TEXT_TYPES
        and last["lines"] >= 2
        and first["type"] in TEXT_TYPES
        and first["structure"]
        and not first["ignored"]
        and (last["full_width"] or last["hyphenated"])
        and not first["starts_indented"]
        and first["first_quadrant"]
    )


def render(chunks: Sequence[Sequence[PageJson]]) -> str:
    """The Markdown of a run of converted marker chunks (each its pages, in page order), as
    marker renders the whole run as one document."""
    pages = [page for chunk in chunks for page in chunk]
    chunk_of = [index for index, chunk in enumerate(chunks) for _ in chunk]
    levels = _document_levels(pages)
    out: list[str] = []
    previous: int | None = None  # the last page so far with blocks
    for index, page in enumerate(pages):
        text = _relevel(page, levels[index])
        first = page["structure"].get("first")
        if previous is not None and first is not None and out:
            last = pages[previous]["structure"]["last"]
            if chunk_of[previous] == chunk_of[index]:
                # The chunk decided; its renderer left the run-on paragraph's end as is.
                run_on = last.get("continued", False) and last["type"] in TEXT_TYPES
            else:
                run_on = not last["ignored"] and continues(last, first)
                if run_on:
                    out[-1] = _run_on(out[-1])
            if run_on:
                out[-1] += text
                previous = index
                continue
        if text:
            out.append(text)
        if first is not None:
            previous = index
    return "\n\n".join(out) + "\n"


def _run_on(text: str) -> str:
    """A continued paragraph's end as marker renders it (renderers/markdown.py:91-96)."""
    if ends_hyphenated(text):
        return re.split(rf"[{HYPHENS}]\s?$", text)[0]
    return f"{text} "


def _document_levels(pages: Sequence[PageJson]) -> list[dict[int, int]]:
    """Each page's section headers' levels (by block id), ranked over the whole document."""
    headers = [(i, h["id"], h["height"]) for i, p in enumerate(pages) for h in _headings(p)]
    levels: list[dict[int, int]] = [{} for _ in pages]
    for (page, block, _), level in zip(
        headers, heading_levels([height for *_, height in headers]), strict=True
    ):
        levels[page][block] = level
    return levels


def _headings(page: PageJson) -> list[dict[str, Any]]:
    return list(page["structure"].get("headings", []))


def _relevel(page: PageJson, levels: dict[int, int]) -> str:
    """The page's Markdown with each heading the chunk ranked at the document's level. The
    chunk names its heading lines in reading order with the level it rendered; each is the
    next line of that many '#' (marker renders <hN> as an ATX heading)."""
    text = (page.get("markdown") or "").strip("\n")
    position = 0
    for line in page["structure"].get("heading_lines", []):
        match = _next_heading(text, position, line["level"])
        if match is None:
            break
        position = match.end()
        if line["fixed"] or line["id"] not in levels:
            continue
        hashes = "#" * levels[line["id"]]
        text = text[: match.start()] + hashes + " " + text[match.end() :]
        position = match.start() + len(hashes) + 1
    return text


def _next_heading(text: str, start: int, level: int) -> re.Match[str] | None:
    for match in HEADING_LINE.finditer(text, start):
        if len(match.group(1)) == level:
            return match
    return None
