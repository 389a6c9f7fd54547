"""Code listings: runs of lines set in a monospaced font, found on a page so that they read as
one block, and their text laid out as set (each line at its column) for the writer.
"""

from __future__ import annotations

from itertools import pairwise
from statistics import median

from pagefleet.layout.lines import line_text
from pagefleet.layout.schema import Line

# A line is code when this share of its characters, and of its text ASCII, are set in a
# monospaced font (Chinese and Japanese fonts are often fixed-pitch too).
_MONO_SHARE = 0.8
_ASCII_SHARE = 0.9
# The next line of a listing starts at most this many line heights below the last one, and
# this many right of the listing.
_LISTING_GAP = 2.5
_LISTING_INDENT = 20


def _is_code(line: Line) -> bool:
    mono = total = 0
    for span in line["spans"]:
        count = len(span["t"]) - span["t"].count(" ")
        total += count
        if span.get("m"):
            mono += count
    if not total or mono < _MONO_SHARE * total:
        return False
    text = line_text(line)
    return sum(1 for c in text if c < "\x80") >= _ASCII_SHARE * len(text)


def find_listings(lines: list[Line]) -> list[list[int]]:
    """Indexes of the lines of each code listing on the page, in the order the PDF wrote them.

    A listing is two rows of code at least, each line below the one before or beside it on its
    row (a line the text layer cut at a wide gap), not left of the listing nor far right, and
    not a sentence of prose that names code (see :func:`_in_prose`).
    """
    listings: list[list[int]] = []
    run: list[int] = []
    rows = 0
    left = right = 0.0
    for i, line in enumerate(lines):
        if not _is_code(line):
            continue
        x0, y0, x1, _ = line["bbox"]
        if run and run[-1] == i - 1:
            last = lines[run[-1]]["bbox"]
            height = max(last[3] - last[1], 1.0)
            beside = y0 < last[3] - 0.5 * height
            near = last[1] - 0.5 * height <= y0 <= last[3] + _LISTING_GAP * height
            if near and left - 2 * height <= x0 <= right + _LISTING_INDENT * height:
                run.append(i)
                rows += not beside
                left, right = min(left, x0), max(right, x1)
                continue
        if rows >= 2 and not _in_prose(lines, run):
            listings.append(run)
        run, rows, left, right = [i], 1, x0, x1
    if rows >= 2 and not _in_prose(lines, run):
        listings.append(run)
    return listings


def _in_prose(lines: list[Line], run: list[int]) -> bool:
    """Whether lines of code are a paragraph's (identifiers set in a monospaced font): one is
    hyphenated at its end, or the line the PDF wrote before them sits right above the first,
    its sentence going on into it."""
    if any(lines[i].get("hy") for i in run):
        return True
    if not run[0]:
        return False
    prev, first = lines[run[0] - 1]["bbox"], lines[run[0]]["bbox"]
    height = first[3] - first[1]
    tail = line_text(lines[run[0] - 1]).rstrip()
    above = 0 <= first[1] - prev[3] <= 0.5 * height and prev[0] < first[2] and first[0] < prev[2]
    return above and not tail.endswith((".", ":", ";", "!", "?"))


def listing_text(lines: list[Line]) -> str:
    """A listing's lines as set: row by row, each line's text at its column (counted in the
    width of the lines' own characters), a gap of more than a row and a half as an empty line."""
    order = sorted(lines, key=lambda ln: (ln["bbox"][1], ln["bbox"][0]))
    rows: list[list[Line]] = []
    for line in order:
        y0, y1 = line["bbox"][1], line["bbox"][3]
        if rows and y0 < rows[-1][0]["bbox"][3] - 0.5 * (y1 - y0):
            rows[-1].append(line)
        else:
            rows.append([line])
    widths = [
        (ln["bbox"][2] - ln["bbox"][0]) / len(text)
        for ln in lines
        if len(text := line_text(ln)) >= 2
    ]
    unit = median(widths) if widths else 0.6 * (order[0]["bbox"][3] - order[0]["bbox"][1])
    left = min(ln["bbox"][0] for ln in lines)
    tops = [row[0]["bbox"][1] for row in rows]
    steps = [b - a for a, b in pairwise(tops)]
    pitch = median(steps) if steps else 0.0
    out: list[str] = []
    for k, row in enumerate(rows):
        if k and steps[k - 1] > 1.5 * pitch:
            out.append("")
        text = ""
        for line in sorted(row, key=lambda ln: ln["bbox"][0]):
            column = round((line["bbox"][0] - left) / max(unit, 0.1))
            text += " " * max(column - len(text), 1 if text else 0) + line_text(line)
        out.append(text.rstrip())
    return "\n".join(out)
