"""fleet.png: per workload, tasks and instances over time under each policy, and pages/s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on a server
import matplotlib.pyplot as plt


def draw(series: dict[tuple[str, str], dict[str, Any]], path: Path) -> None:
    loads = list(dict.fromkeys(w for w, _ in series))
    policies = list(dict.fromkeys(p for _, p in series))
    fig, axes = plt.subplots(len(loads), 2, figsize=(13, 2.8 * len(loads)), squeeze=False)
    for row, load in enumerate(loads):
        tasks_ax, rate_ax = axes[row]
        for policy in policies:
            data = series.get((load, policy))
            if data is None:
                continue
            hours = [s["t_s"] / 3600 for s in data["samples"]]
            (line,) = tasks_ax.step(
                hours, [s["tasks"] for s in data["samples"]], where="post", label=f"{policy} tasks"
            )
            tasks_ax.step(
                hours,
                [s["instances"] for s in data["samples"]],
                where="post",
                linestyle=":",
                color=line.get_color(),
                label=f"{policy} instances",
            )
            points = data["throughput"]
            rate_ax.plot(
                [t / 3600 for t, _ in points], [r for _, r in points], label=policy, linewidth=1
            )
        tasks_ax.set_title(f"{load}: runner tasks (solid) and instances (dotted)", fontsize=9)
        rate_ax.set_title(f"{load}: pages/s (5-minute bins)", fontsize=9)
        for ax in (tasks_ax, rate_ax):
            ax.set_xlabel("hours")
            ax.grid(alpha=0.3)
        tasks_ax.legend(fontsize=6, ncol=2)
        rate_ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
