"""Plots drawn as text: a chart's axes are lines of evenly stepped numbers, and the short lines
around them its labels, which read together as one figure block rather than as paragraphs.
"""

from __future__ import annotations

import re
from itertools import pairwise
from statistics import median

from pagefleet.layout.lines import line_text, union
from pagefleet.layout.schema import Bbox, Line

# Lines of numbers only: the only ones an axis can be made of.
_NUMERIC = re.compile(r"^[\d\s.,%+\-−–]+$")
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(r"^[-−–+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?%?$")


def _value(text: str) -> float | None:
    text = text.strip()
    if not _NUMBER.match(text) or not _DIGIT.search(text):
        return None
    return float(text.rstrip("%").replace(",", "").replace("−", "-").replace("–", "-"))


def _is_scale(values: list[float], places: list[float]) -> bool:
    """Evenly spaced numbers in even steps: the ticks of a plot's axis, not a table column."""
    if len(values) < 4:
        return False
    steps = [b - a for a, b in pairwise(values)]
    gaps = [b - a for a, b in pairwise(places)]
    if not steps[0] or any(abs(step - steps[0]) > 1e-6 * max(1.0, abs(steps[0])) for step in steps):
        return False
    return min(gaps) > 0 and max(gaps) <= 1.2 * min(gaps) + 1.0


def find_figures(lines: list[Line]) -> list[list[int]]:
    """Indexes of the lines of each plot on the page, in the order the PDF wrote them.

    A plot is found by its axes: a column of evenly spaced numbers in even steps (the y axis)
    and, optionally, a row of them (the x axis, one line or several). Every short line within a
    few line heights of the axes' frame is a label of the plot.
    """
    columns: dict[int, list[tuple[float, float, int]]] = {}
    singles: dict[int, list[tuple[float, float, int]]] = {}
    rows: list[Bbox] = []
    for i, line in enumerate(lines):
        text = line_text(line)
        if not _NUMERIC.match(text):
            continue
        value = _value(text)
        box = line["bbox"]
        if value is not None:
            columns.setdefault(round(box[2] / 3), []).append(((box[1] + box[3]) / 2, value, i))
            singles.setdefault(round((box[1] + box[3]) / 6), []).append(
                ((box[0] + box[2]) / 2, value, i)
            )
        else:
            parts = text.split()
            values = [_value(part) for part in parts]
            if len(parts) >= 4 and all(v is not None for v in values):
                xs = [box[0] + (box[2] - box[0]) * k / (len(parts) - 1) for k in range(len(parts))]
                if _is_scale([v for v in values if v is not None], xs):
                    rows.append(box)
    # An x axis whose ticks are lines of their own, one row of evenly stepped numbers.
    for ticks in singles.values():
        ticks.sort()
        if _is_scale([t[1] for t in ticks], [t[0] for t in ticks]):
            rows.append(union([lines[t[2]]["bbox"] for t in ticks]))
    figures: list[list[int]] = []
    used: set[int] = set()
    for ticks in columns.values():
        ticks.sort()
        if not _is_scale([t[1] for t in ticks][::-1], [t[0] for t in ticks]) and not _is_scale(
            [t[1] for t in ticks], [t[0] for t in ticks]
        ):
            continue
        axis = [lines[t[2]]["bbox"] for t in ticks]
        frame = union(axis)
        unit = median(b[3] - b[1] for b in axis)
        below = [r for r in rows if frame[3] - unit <= r[1] <= frame[3] + 3 * unit]
        if below:
            frame = union([frame, below[0]])
        else:
            frame[2] = max(frame[2], frame[0] + 8 * (frame[3] - frame[1]) / len(ticks))
        x0, y0 = frame[0] - 4 * unit, frame[1] - 2.5 * unit
        x1, y1 = frame[2] + 2 * unit, frame[3] + 4.5 * unit
        members = [
            i
            for i, line in enumerate(lines)
            if i not in used
            and len(line_text(line)) <= 40
            and x0 <= (line["bbox"][0] + line["bbox"][2]) / 2 <= x1
            and y0 <= (line["bbox"][1] + line["bbox"][3]) / 2 <= y1
        ]
        if len(members) >= len(ticks):  # not the axis of a figure already taken
            used.update(members)
            figures.append(members)
    return figures
