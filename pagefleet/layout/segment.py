"""Page geometry: reading order and paragraph blocks from the lines of one page.

Pure functions over :class:`~pagefleet.layout.schema.Line` dicts, so the same code orders lines
from the PDF text layer and lines from OCR. Only one page is ever looked at (rule 5).
"""

from __future__ import annotations

import re
from itertools import pairwise
from statistics import median

from pagefleet.layout.schema import Bbox, Line, TextBlock

# A list item starts with a bullet glyph, or a number/letter with "." or ")" then a space.
# U+F0B7 and friends are Symbol/Wingdings bullets that fonts without a ToUnicode map leave
# in the private use area.
BULLETS = "•◦▪▫‣∙·●○■□➢➤►▶✓✔-–—*\uf0b7\uf0a7\uf076\uf0d8\uf0fc\uf06e\uf0a8"
LIST_MARKER = re.compile(
    rf"^\s*(?:[{re.escape(BULLETS)}](?:\s+|$)|\(?(?:\d{{1,3}}|[a-zA-Z]|[ivxlcIVXLC]{{1,5}})[.)](?:\s+|$))"
)


def line_text(line: Line) -> str:
    return "".join(span["t"] for span in line["spans"])


def line_size(line: Line) -> float:
    """The size of most of the line's characters."""
    weights: dict[float, int] = {}
    for span in line["spans"]:
        n = len(span["t"].strip())
        if n:
            weights[span["s"]] = weights.get(span["s"], 0) + n
    if not weights:
        return line["spans"][0]["s"] if line["spans"] else 0.0
    return max(weights.items(), key=lambda kv: (kv[1], kv[0]))[0]


def _is_bold(line: Line) -> bool:
    spans = [s for s in line["spans"] if s["t"].strip()]
    return bool(spans) and all(s.get("b") for s in spans)


def _gaps(boxes: list[Bbox], idx: list[int], axis: int) -> list[tuple[float, float]]:
    """Empty bands between the projections of the boxes on one axis: (start, width)."""
    lo, hi = axis, axis + 2
    order = sorted(idx, key=lambda i: boxes[i][lo])
    gaps = []
    reach = boxes[order[0]][hi]
    for i in order[1:]:
        start = boxes[i][lo]
        if start > reach:
            gaps.append((reach, start - reach))
        reach = max(reach, boxes[i][hi])
    return gaps


def _rows(boxes: list[Bbox], idx: list[int]) -> list[int]:
    """Top to bottom; boxes sharing a row (vertical overlap) left to right."""
    order = sorted(idx, key=lambda i: (boxes[i][1], boxes[i][0]))
    out: list[int] = []
    row: list[int] = []
    row_bottom = -1e9
    for i in order:
        y0, y1 = boxes[i][1], boxes[i][3]
        if row and y0 < row_bottom - 0.5 * (y1 - y0):
            row.append(i)
            row_bottom = max(row_bottom, y1)
            continue
        out.extend(sorted(row, key=lambda j: boxes[j][0]))
        row, row_bottom = [i], y1
    out.extend(sorted(row, key=lambda j: boxes[j][0]))
    return out


def _xy_cut(boxes: list[Bbox], idx: list[int], page_width: float) -> tuple[list[list[int]], bool]:
    """Recursive XY-cut: regions in reading order, and whether any column split was made.

    Columns come first: a band down the page splits the region when both sides look like text
    columns (wide lines), so a borderless table is read row by row rather than column by
    column. Otherwise the region is cut across at its widest empty band; parts that hold no
    columns are joined back into one region, so that paragraphs are found over whole runs of
    single-column text.
    """
    if len(idx) <= 1:
        return [idx], False
    unit = median(boxes[i][3] - boxes[i][1] for i in idx)
    for start, width in sorted(_gaps(boxes, idx, 0), key=lambda g: -g[1]):
        if width < 0.8 * unit:
            break
        left = [i for i in idx if boxes[i][2] <= start]
        right = [i for i in idx if boxes[i][0] >= start + width]
        if _column_like(boxes, left, page_width) and _column_like(boxes, right, page_width):
            return _xy_cut(boxes, left, page_width)[0] + _xy_cut(boxes, right, page_width)[0], True
    h_gaps = _gaps(boxes, idx, 1)
    if not h_gaps:
        return [_rows(boxes, idx)], False
    cut = max(h_gaps, key=lambda g: g[1])[0]
    top, top_cols = _xy_cut(boxes, [i for i in idx if boxes[i][3] <= cut], page_width)
    bottom, bottom_cols = _xy_cut(boxes, [i for i in idx if boxes[i][3] > cut], page_width)
    if not top_cols and not bottom_cols:
        return [_rows(boxes, idx)], False
    return top + bottom, True


def _column_like(boxes: list[Bbox], idx: list[int], page_width: float) -> bool:
    if len(idx) < 2:
        return False
    widths = sorted(boxes[i][2] - boxes[i][0] for i in idx)
    return widths[len(widths) // 2] >= 0.2 * page_width


def merge_rows(lines: list[Line]) -> list[Line]:
    """Join consecutive pieces of one visual line that the PDF wrote as separate lines."""
    out: list[Line] = []
    for line in lines:
        if out and _same_row(out[-1], line):
            prev = out[-1]
            gap = line["bbox"][0] - prev["bbox"][2]
            spans = [dict(s) for s in line["spans"]]
            if gap > 0.15 * line_size(line) and not prev["spans"][-1]["t"].endswith(" "):
                spans[0]["t"] = " " + spans[0]["t"]
            a, b = prev["bbox"], line["bbox"]
            merged: Line = {
                "bbox": [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])],
                "spans": prev["spans"] + spans,  # type: ignore[operator]
            }
            if line.get("hy"):
                merged["hy"] = True
            out[-1] = merged
        else:
            out.append(line)
    return out


def _same_row(a: Line, b: Line) -> bool:
    (_, ay0, ax1, ay1), (bx0, by0, _, by1) = a["bbox"], b["bbox"]
    overlap = min(ay1, by1) - max(ay0, by0)
    gap = bx0 - ax1
    return overlap >= 0.6 * min(ay1 - ay0, by1 - by0) and -1.0 <= gap <= line_size(b)


def reading_order(lines: list[Line], page_width: float) -> list[list[Line]]:
    """Lines grouped into regions (columns, bands), in reading order."""
    if not lines:
        return []
    boxes = [line["bbox"] for line in lines]
    regions, _ = _xy_cut(boxes, list(range(len(lines))), page_width)
    return [[lines[i] for i in region] for region in regions if region]


def page_blocks(lines: list[Line], page_width: float) -> list[TextBlock]:
    """A page's blocks in reading order; a paragraph broken across columns is one block."""
    blocks: list[TextBlock] = []
    for region in reading_order(merge_rows(lines), page_width):
        found = paragraphs(region)
        if blocks and found and continues(blocks[-1], found[0]):
            _merge(blocks[-1], found.pop(0))
        blocks.extend(found)
    return blocks


def _merge(block: TextBlock, other: TextBlock) -> None:
    block["lines"].extend(other["lines"])
    a, b = block["bbox"], other["bbox"]
    block["bbox"] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]


def paragraphs(region: list[Line]) -> list[TextBlock]:
    """Split one region's lines into blocks at vertical gaps, style changes and list markers."""
    if not region:
        return []
    gaps = [b["bbox"][1] - a["bbox"][3] for a, b in pairwise(region)]
    usual_gap = median(gaps) if gaps else 0.0
    left = min(line["bbox"][0] for line in region)
    right = max(line["bbox"][2] for line in region)
    blocks: list[TextBlock] = []
    prev: Line | None = None
    for line, gap in zip(region, [None, *gaps], strict=True):
        if prev is None or gap is None or _breaks(prev, line, gap, usual_gap, left, right, blocks):
            blocks.append({"bbox": list(line["bbox"]), "lines": [line]})
        else:
            _merge(blocks[-1], {"bbox": line["bbox"], "lines": [line]})
        prev = line
    return blocks


def _breaks(
    prev: Line,
    line: Line,
    gap: float,
    usual_gap: float,
    left: float,
    right: float,
    blocks: list[TextBlock],
) -> bool:
    size, prev_size = line_size(line), line_size(prev)
    height = line["bbox"][3] - line["bbox"][1]
    if gap > max(usual_gap, 0.0) + 0.45 * max(height, 1.0) or gap < -0.5 * height:
        return True
    if abs(size - prev_size) > 0.1 * max(size, prev_size):
        return True
    if _is_bold(line) != _is_bold(prev):
        return True
    text = line_text(line)
    if LIST_MARKER.match(text):
        return True
    first = blocks[-1]["lines"][0]
    in_list = bool(LIST_MARKER.match(line_text(first)))
    # An indented first line starts a paragraph, unless it is a list item's hanging indent.
    if (
        not in_list
        and line["bbox"][0] > prev["bbox"][0] + 1.2 * size
        and len(blocks[-1]["lines"]) > 1
    ):
        return True
    # A short line that ends a sentence ends its paragraph.
    prev_text = line_text(prev).rstrip()
    short = prev["bbox"][2] < right - 0.15 * (right - left)
    return short and prev_text.endswith((".", ":", "!", "?")) and (right - left) > 20 * size


_TERMINAL = (".", "!", "?", ":", ";", '"', "”", ")", "]")


def continues(prev: TextBlock, nxt: TextBlock) -> bool:
    """Whether ``nxt`` carries on the paragraph ``prev`` (across a column or page break)."""
    prev_line, next_line = prev["lines"][-1], nxt["lines"][0]
    tail = line_text(prev_line).rstrip()
    head = line_text(next_line).lstrip()
    if not tail or not head or LIST_MARKER.match(head):
        return False
    size, next_size = line_size(prev_line), line_size(next_line)
    if abs(size - next_size) > 0.1 * max(size, next_size) or _is_bold(next_line):
        return False
    if tail.endswith("-") or head[0].islower():
        return True
    return not tail.endswith(_TERMINAL) and len(prev["lines"]) > 1
