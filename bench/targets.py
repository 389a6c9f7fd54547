"""The issue's targets, reported (never enforced): value, target, met."""

from __future__ import annotations

import statistics

from bench.models import Document, PipelineSummary, SplitCost, Target

EFFICIENCY_TARGET = 0.95  # at W = 2, on the largest document
ONE_PAGE_OVERHEAD_TARGET_S = 0.3
SPLIT_TARGET_S = 1.0


def split_rss_budget_mb(file_bytes: int) -> float:
    """The splitter's peak RSS budget: 3 x the file + 150 MB."""
    return 3 * file_bytes / 2**20 + 150


def targets(
    docs: list[Document], pipeline: list[PipelineSummary], splits: list[SplitCost]
) -> list[Target]:
    rows: list[Target] = []
    largest = max(docs, key=lambda d: d.pages).name
    one_page = [d.name for d in docs if d.pages == 1]
    for run in pipeline:
        w = run.workers
        if w == 2:
            e = run.per_document[largest].efficiency
            rows.append(
                _row(f"E at W=2 on {largest}", f">= {EFFICIENCY_TARGET}", e, e >= EFFICIENCY_TARGET)
            )
        if one_page:
            overhead = statistics.median(run.per_document[n].overhead_s for n in one_page)
            rows.append(
                _row(
                    f"overhead of a 1-page PDF at W={w} (median of {len(one_page)})",
                    f"<= {ONE_PAGE_OVERHEAD_TARGET_S} s",
                    overhead,
                    overhead <= ONE_PAGE_OVERHEAD_TARGET_S,
                )
            )
    for split in splits:
        rows.append(
            _row(
                f"splitter time, {split.name}",
                f"<= {SPLIT_TARGET_S:g} s",
                split.seconds,
                split.time_target_met,
            )
        )
        rows.append(
            _row(
                f"splitter peak RSS (MB), {split.name}",
                f"<= {split.rss_budget_mb} (3 x file + 150)",
                split.peak_rss_mb,
                split.rss_target_met,
            )
        )
    return rows


def _row(name: str, target: str, value: float, met: bool) -> Target:
    return Target(name=name, target=target, value=round(value, 4), met=met)
