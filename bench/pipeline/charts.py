"""A run's PNG charts: pages/s against W, where a job's seconds go, where the cores went."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on a server
import matplotlib.pyplot as plt

from bench.pipeline.models import STAGES, BenchResults
from bench.pipeline.stages import OVERHEAD_STAGES, stage_label

CHARTS = ("scaling.png", "stages.png", "cpu.png")
# Stacked bars show this many documents (the largest); the JSON keeps them all.
BAR_DOCUMENTS = 6


def write_charts(results: BenchResults, out: Path) -> list[Path]:
    paths = [out / c for c in CHARTS]
    scaling_chart(results, paths[0])
    stages_chart(results, paths[1])
    cpu_chart(results, paths[2])
    return paths


def scaling_chart(results: BenchResults, path: Path) -> None:
    """Pages/s against W: measured, and the ideal W x baseline, overall and largest document."""
    runs = results.pipeline
    workers = [r.workers for r in runs]
    largest = results.largest(1)[0]
    base = results.baseline
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    series = [
        ("all documents at once", [r.overall.pages_per_s for r in runs], base.pages_per_s),
        (
            largest,
            [r.per_document[largest].pages_per_s for r in runs],
            base.per_document[largest].pages_per_s,
        ),
    ]
    for (label, measured, one), color in zip(series, ("tab:blue", "tab:orange"), strict=True):
        ax.plot(workers, measured, "o-", color=color, label=f"{label}: pipeline")
        ax.plot(workers, [w * one for w in workers], "--", color=color, label=f"{label}: ideal")
    ax.set_xlabel("workers W")
    ax.set_ylabel("pages/s")
    ax.set_xticks(workers)
    ax.set_ylim(bottom=0)
    ax.set_title("Pipeline pages/s against the ideal W x baseline")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def stages_chart(results: BenchResults, path: Path) -> None:
    """A stacked bar per (document, W): the job's seconds, stage by stage."""
    bars, labels = [], []
    largest = results.largest(BAR_DOCUMENTS)
    for doc in largest + results.one_page(besides=largest)[:2]:
        for run in results.pipeline:
            stages = run.per_document[doc].stages
            seconds = [stages.of(s) for s in STAGES]
            total = sum(seconds) or 1.0
            # Shares of the latency: a 400-page and a 1-page job fit one axis.
            bars.append([s / total for s in seconds])
            labels.append(f"{doc[:28]} W={run.workers} ({total:.2f} s)")
    fig, ax = plt.subplots(figsize=(8.5, 0.35 * len(bars) + 1.8))
    left = [0.0] * len(bars)
    colors = plt.get_cmap("tab10")
    for i, stage in enumerate(STAGES):
        widths = [b[i] for b in bars]
        ax.barh(
            labels,
            widths,
            left=left,
            color=colors(i % 10),
            hatch="//" if stage in OVERHEAD_STAGES else None,
            label=stage_label(stage),
        )
        left = [x + w for x, w in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("share of the job latency (latency in brackets)")
    ax.set_title("Where a job's seconds go (hatched: orchestration overhead)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cpu_chart(results: BenchResults, path: Path) -> None:
    """Cores used per role during the batch pass at each W."""
    roles = results.cpu_roles()
    runs = [r for r in results.pipeline if "batch" in r.cpu]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    bottom = [0.0] * len(runs)
    colors = plt.get_cmap("tab10")
    for i, role in enumerate(roles):
        batch = [r.cpu["batch"].roles for r in runs]
        cores = [b[role].cores if role in b else 0.0 for b in batch]
        ax.bar(
            [f"W={r.workers}" for r in runs],
            cores,
            bottom=bottom,
            label=role,
            color=colors(i % 10),
        )
        bottom = [b + c for b, c in zip(bottom, cores, strict=True)]
    cpus = results.host.before.cpus
    if cpus is not None:
        ax.axhline(cpus, color="black", linestyle=":", label=f"{cpus} cores")
    ax.set_ylabel("cores (CPU seconds / wall seconds)")
    ax.set_title("Where the cores went (all documents at once)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
