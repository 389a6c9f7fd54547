"""Chunk planning: contiguous page ranges balanced by what they cost to convert.

The splitter estimates each page's seconds (:mod:`pagefleet.costs`); :func:`plan_by_cost` cuts
the document into ranges of about equal estimated seconds. How many follows the document's cost
and the fleet: a chunk aims at ``chunk_pages`` text pages' worth of seconds, a document too
cheap to give every lane of the fleet such a chunk is spread over the lanes, and no chunk is
cheaper than the minimum (per-chunk overhead) or dearer than the maximum (one chunk must never
hold the job) unless the document, or a single page, is.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, pairwise

from pagefleet.models import ChunkSpec


@dataclass(frozen=True)
class PlanPolicy:
    """The knobs of a plan, in estimated seconds (see ``Settings``: chunk_* and fleet_lanes)."""

    target_s: float  # what a chunk aims at: chunk_pages x the cost of a text page
    min_s: float
    max_s: float
    lanes: int = 1

    def chunk_target_s(self, total_s: float) -> float:
        """The estimated seconds per chunk for a document of ``total_s``."""
        target = self.target_s
        if total_s < target * self.lanes:
            target = total_s / self.lanes  # a small document is spread over the fleet
        return min(max(target, self.min_s), self.max_s)

    def chunk_count(self, total_s: float, pages: int) -> int:
        """ceil(total / target), made a multiple of the lanes so the lanes finish together:
        rounded up where that keeps every chunk at the minimum, else down (chunks a little over
        their aim rather than one lane converting a chunk more than the others); at most one
        chunk per page."""
        if total_s <= 0:
            return 1
        count = max(1, math.ceil(total_s / self.chunk_target_s(total_s) - 1e-9))
        if count > 1 and self.lanes > 1 and count % self.lanes:
            up = -(-count // self.lanes) * self.lanes
            down = count // self.lanes * self.lanes
            if total_s / up >= self.min_s:
                count = up
            elif down and total_s / down <= self.max_s:
                count = down
        return min(count, pages)


def plan_by_cost(costs: Sequence[float], policy: PlanPolicy) -> list[ChunkSpec]:
    """Chunks of the pages whose estimated seconds are ``costs`` (page 1 first).

    Cuts fall where the running cost is nearest each multiple of total / count, so pages of
    equal cost give sizes that differ by at most one; a page dearer than a chunk's share becomes
    a chunk of its own (with neighbours only if they fit). A range still over ``max_s`` is cut
    again until every chunk is under it or is a single page.
    """
    if not costs:
        raise ValueError("a document to plan has at least one page")
    if min(costs) < 0:
        raise ValueError("a page cannot cost less than nothing")
    total = float(sum(costs))
    count = policy.chunk_count(total, len(costs))
    ranges: list[tuple[int, int]] = []
    for start, end in _cut(costs, 0, len(costs), count):
        ranges += _under_max(costs, start, end, policy.max_s)
    ranges = _merge_small(costs, ranges, policy, policy.chunk_target_s(total))
    return [
        ChunkSpec(
            index=index,
            first_page=start + 1,
            last_page=end,
            estimated_s=round(sum(costs[start:end]), 4),
        )
        for index, (start, end) in enumerate(ranges)
    ]


def _cut(costs: Sequence[float], start: int, end: int, count: int) -> list[tuple[int, int]]:
    """``costs[start:end]`` in at most ``count`` ranges (start, end) of about equal cost."""
    if count <= 1 or end - start <= 1:
        return [(start, end)]
    prefix = list(accumulate(costs[start:end], initial=0.0))
    total = prefix[-1]
    pages = end - start
    cuts = [0]
    for k in range(1, count):
        if total > 0:
            goal = total * k / count
            at = bisect_left(prefix, goal)
            # The page boundary nearest the goal; a tie goes to the earlier one.
            if at > 0 and goal - prefix[at - 1] <= prefix[at] - goal:
                at -= 1
        else:
            at = round(pages * k / count)
        # Goals inside one dear page fall on the same boundary: one cut, not a run of
        # one-page chunks after it.
        if cuts[-1] < at < pages:
            cuts.append(at)
    cuts.append(pages)
    return [(start + a, start + b) for a, b in pairwise(cuts) if b > a]


def _under_max(costs: Sequence[float], start: int, end: int, max_s: float) -> list[tuple[int, int]]:
    """``(start, end)`` cut again until each range is under ``max_s`` or is one page."""
    cost = sum(costs[start:end])
    if cost <= max_s or end - start == 1:
        return [(start, end)]
    for count in range(math.ceil(cost / max_s), end - start + 1):
        parts = _cut(costs, start, end, count)
        if all(sum(costs[a:b]) <= max_s or b - a == 1 for a, b in parts):
            return parts
    return [(page, page + 1) for page in range(start, end)]


def _merge_small(
    costs: Sequence[float], ranges: list[tuple[int, int]], policy: PlanPolicy, target_s: float
) -> list[tuple[int, int]]:
    """Ranges under the minimum (the text pages left beside a dear page) joined to their
    cheaper neighbour where that stays within the target, or adds under a tenth to the
    neighbour, and never passes the maximum."""
    out = list(ranges)
    i = 0
    while i < len(out):
        cost = sum(costs[out[i][0] : out[i][1]])
        if cost >= policy.min_s or len(out) == 1:
            i += 1
            continue
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < len(out)]
        j = min(neighbours, key=lambda n: sum(costs[out[n][0] : out[n][1]]))
        other = sum(costs[out[j][0] : out[j][1]])
        fits = cost + other <= target_s or cost <= 0.1 * other
        if fits and cost + other <= policy.max_s:
            first, last = min(i, j), max(i, j)
            out[first : last + 1] = [(out[first][0], out[last][1])]
            i = first
        else:
            i += 1
    return out
