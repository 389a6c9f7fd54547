"""A run's JSON as files: results.json, a Markdown summary and PNG charts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on a server
import matplotlib.pyplot as plt

from bench.harness import OVERHEAD_STAGES, STAGES

CHARTS = ("scaling.png", "stages.png", "cpu.png")
# Stacked bars show this many documents (the largest); the JSON keeps them all.
BAR_DOCUMENTS = 6


def write_results(report: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "results.md").write_text(markdown(report))
    scaling_chart(report, out / CHARTS[0])
    stages_chart(report, out / CHARTS[1])
    cpu_chart(report, out / CHARTS[2])
    return [out / "results.json", out / "results.md", *(out / c for c in CHARTS)]


def _stage_label(stage: str) -> str:
    label = stage.removesuffix("_s").replace("_", " ")
    return f"{label} (overhead)" if stage in OVERHEAD_STAGES else label


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# pagefleet benchmark",
        "",
        f"`{report['command']}`",
        "",
        f"Started {report['started_at']}, {report['duration_s']} s, {report['mode']} stack, "
        f"converter {report['settings']['converter']}, {report['settings']['chunk_pages']} pages "
        f"per chunk, {report['settings']['repeat']} rounds (medians). Workers were warm: "
        f"{report['settings']['warm_workers']}.",
        "",
        f"Host: {report['host']['before']['cpus']} CPUs, {report['host']['before']['platform']}, "
        f"load average (1, 5, 15 min) {report['host']['before']['load_average']} before and "
        f"{report['host']['after']['load_average']} after.",
        "",
        "## Targets (reported, not enforced)",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---|---|",
    ]
    for row in report["targets"]:
        lines.append(
            f"| {row['name']} | {row['target']} | {row['value']:g} | "
            f"{'yes' if row['met'] else '**no**'} |"
        )
    lines += ["", "## Overall (every document at once)", ""]
    lines += [
        "| W | pages | makespan s | pages/s | ideal W x baseline | E | latency p50 s | p95 s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = report["baseline"]
    for run in report["pipeline"]:
        o = run["overall"]
        lines.append(
            f"| {run['workers']} | {o['pages']} | {o['makespan_median_s']:.2f} | "
            f"{o['pages_per_s']:.1f} | {run['workers'] * base['pages_per_s']:.1f} | "
            f"{o['efficiency']:.3f} | {o['latency_p50_s']:.2f} | {o['latency_p95_s']:.2f} |"
        )
    lines += [
        "",
        f"Baseline (plain invocation, one process): {base['pages']} pages in "
        f"{base['total_s']:.2f} s = {base['pages_per_s']:.1f} pages/s; peak RSS "
        f"{base['peak_rss_mb']:.0f} MB.",
        "",
        "## Per document (each alone)",
        "",
        "| document | pages | chunks | baseline pages/s | W | pages/s | E | E bound | "
        "latency p50 s | p95 s | overhead s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for doc in report["documents"]:
        name = doc["name"]
        b = base["per_document"][name]
        for run in report["pipeline"]:
            d = run["per_document"][name]
            lines.append(
                f"| {name} | {d['pages']} | {d['chunks']} | {b['pages_per_s']:.2f} | "
                f"{run['workers']} | {d['pages_per_s']:.2f} | {d['efficiency']:.3f} | "
                f"{d['efficiency_bound']:.2f} | {d['latency_p50_s']:.3f} | "
                f"{d['latency_p95_s']:.3f} | {d['overhead_s']:.3f} |"
            )
    lines += [
        "",
        "E bound: min(W, chunks) / W, the most a document of that many chunks can reach. "
        "Overhead: latency p50 minus the baseline seconds over min(W, chunks).",
        "",
        "## Where a job's seconds go (each alone, median seconds)",
        "",
        "The stages are consecutive and add up to the latency; convert and result upload are "
        "summed over chunks and divided by min(W, chunks). Overhead stages are marked.",
        "",
        "| document | W | " + " | ".join(_stage_label(s) for s in STAGES) + " |",
        "|---|---|" + "---|" * len(STAGES),
    ]
    for doc in _largest(report, BAR_DOCUMENTS) + _one_page(report):
        for run in report["pipeline"]:
            stages = run["per_document"][doc]["stages"]
            lines.append(
                f"| {doc} | {run['workers']} | "
                + " | ".join(f"{stages[s]:.3f}" for s in STAGES)
                + " |"
            )
    lines += [
        "",
        "## CPU of each job run alone (median CPU seconds; others' load in cores)",
        "",
        "| document | baseline CPU s | W | converter CPU s | worker CPU s | harness CPU s | "
        "rest of the machine, cores |",
        "|---|---|---|---|---|---|---|",
    ]
    for doc in _largest(report, BAR_DOCUMENTS) + _one_page(report):
        for run in report["pipeline"]:
            cpu = run["per_document"][doc].get("cpu", {})
            if not cpu:
                continue
            lines.append(
                f"| {doc} | {base['per_document'][doc]['cpu_s']:.3f} | {run['workers']} | "
                + " | ".join(
                    f"{cpu.get(role, {}).get('cpu_s', 0.0):.3f}"
                    for role in ("converter", "worker", "harness (moto + handlers)")
                )
                + f" | {cpu.get('rest of the machine', {}).get('cores', 0.0):.2f} |"
            )
    lines += [
        "",
        "## Where the cores went (CPU seconds / wall seconds, per pass)",
        "",
        "| W | pass | wall s | " + " | ".join(_roles(report)) + " |",
        "|---|---|---|" + "---|" * len(_roles(report)),
    ]
    for run in report["pipeline"]:
        for kind, cpu in run["cpu"].items():
            lines.append(
                f"| {run['workers']} | {kind} | {cpu['wall_s']:.1f} | "
                + " | ".join(f"{cpu.get(r, {}).get('cores', 0):.2f}" for r in _roles(report))
                + " |"
            )
    lines += ["", "The harness's CPU seconds by thread (handlers run in `dispatch-*`):", ""]
    for run in report["pipeline"]:
        for kind, split in run.get("harness_cpu_s", {}).items():
            parts = ", ".join(f"{name} {s:.2f}" for name, s in split.items())
            lines.append(f"- W={run['workers']}, {kind}: {parts}")
    lines += [
        "",
        "Peak RSS by role (MB): "
        + "; ".join(
            f"W={run['workers']}: "
            + ", ".join(
                f"{role} {mb:.0f}" for role, mb in run["resources"]["peak_rss_mb_by_role"].items()
            )
            for run in report["pipeline"]
            if run["resources"]
        )
        + ".",
        "",
        "GPU: " + "; ".join(sorted({_gpu_line(run) for run in report["pipeline"]})) + ".",
        "",
        "## Splitter (fresh process)",
        "",
        "| document | pages | MB | chunks | seconds | peak RSS MB | RSS after imports MB | "
        "RSS budget MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in report["splitter"]:
        lines.append(
            f"| {s['name']} | {s['pages']} | {s['bytes'] / 2**20:.1f} | {s['chunks']} | "
            f"{s['seconds']:.3f} | {s['peak_rss_mb']:.0f} | {s['rss_before_mb']:.0f} | "
            f"{s['rss_budget_mb']:.0f} |"
        )
    lines += ["", "Charts: " + ", ".join(f"[{c}]({c})" for c in CHARTS) + ".", ""]
    return "\n".join(lines)


def _gpu_line(run: dict[str, Any]) -> str:
    gpu = run["resources"].get("gpu", {}) if run["resources"] else {}
    return str(gpu.get("note") or "not sampled (deployed stack)")


def _roles(report: dict[str, Any]) -> list[str]:
    return sorted(
        {r for run in report["pipeline"] for c in run["cpu"].values() for r in c} - {"wall_s"}
    )


def _largest(report: dict[str, Any], count: int) -> list[str]:
    docs = sorted(report["documents"], key=lambda d: -d["pages"])
    return [d["name"] for d in docs[:count]]


def _one_page(report: dict[str, Any]) -> list[str]:
    largest = set(_largest(report, BAR_DOCUMENTS))
    return [d["name"] for d in report["documents"] if d["pages"] == 1 and d["name"] not in largest]


def scaling_chart(report: dict[str, Any], path: Path) -> None:
    """Pages/s against W: measured, and the ideal W x baseline, overall and largest document."""
    runs = report["pipeline"]
    workers = [r["workers"] for r in runs]
    largest = _largest(report, 1)[0]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    base = report["baseline"]
    series = [
        ("all documents at once", [r["overall"]["pages_per_s"] for r in runs], base["pages_per_s"]),
        (
            largest,
            [r["per_document"][largest]["pages_per_s"] for r in runs],
            base["per_document"][largest]["pages_per_s"],
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


def stages_chart(report: dict[str, Any], path: Path) -> None:
    """A stacked bar per (document, W): the job's seconds, stage by stage."""
    bars, labels = [], []
    for doc in _largest(report, BAR_DOCUMENTS) + _one_page(report)[:2]:
        for run in report["pipeline"]:
            stages = run["per_document"][doc]["stages"]
            total = sum(stages.values()) or 1.0
            # Shares of the latency: a 400-page and a 1-page job fit one axis.
            bars.append([stages[s] / total for s in STAGES])
            labels.append(f"{doc[:28]} W={run['workers']} ({total:.2f} s)")
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
            label=_stage_label(stage),
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


def cpu_chart(report: dict[str, Any], path: Path) -> None:
    """Cores used per role during the batch pass at each W."""
    roles = _roles(report)
    runs = [r for r in report["pipeline"] if "batch" in r["cpu"]]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    bottom = [0.0] * len(runs)
    colors = plt.get_cmap("tab10")
    for i, role in enumerate(roles):
        cores = [r["cpu"]["batch"].get(role, {}).get("cores", 0.0) for r in runs]
        ax.bar(
            [f"W={r['workers']}" for r in runs],
            cores,
            bottom=bottom,
            label=role,
            color=colors(i % 10),
        )
        bottom = [b + c for b, c in zip(bottom, cores, strict=True)]
    cpus = report["host"]["before"]["cpus"]
    ax.axhline(cpus, color="black", linestyle=":", label=f"{cpus} cores")
    ax.set_ylabel("cores (CPU seconds / wall seconds)")
    ax.set_title("Where the cores went (all documents at once)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
