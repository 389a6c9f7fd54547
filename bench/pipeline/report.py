"""A run's results as files: results.json, a Markdown summary (rendered here) and PNG charts."""

from __future__ import annotations

import json
from pathlib import Path

from bench.pipeline.charts import BAR_DOCUMENTS, CHARTS, write_charts
from bench.pipeline.cold import report_section
from bench.pipeline.models import STAGES, BenchResults, PipelineSummary
from bench.pipeline.sampling import CONVERTER, HANDLERS, HARNESS, NOT_OURS, WORKER
from bench.pipeline.stages import stage_label


def write_results(results: BenchResults, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results.model_dump(mode="json"), indent=1) + "\n")
    (out / "results.md").write_text(markdown(results))
    charts = write_charts(results, out)
    return [out / "results.json", out / "results.md", *charts]


def markdown(results: BenchResults) -> str:
    return "\n".join(
        [
            *_header(results),
            *_targets(results),
            *_rounds(results),
            *_overall(results),
            *_xargs(results),
            *report_section(results.cold),
            *_per_document(results),
            *_plans(results),
            *_stages(results),
            *_job_cpu(results),
            *_cores(results),
            *_splitter(results),
            "",
            "Charts: " + ", ".join(f"[{c}]({c})" for c in CHARTS) + ".",
            "",
        ]
    )


def _shown(results: BenchResults) -> list[str]:
    """The documents of the stage and CPU tables: the largest, then the other 1-page ones."""
    largest = results.largest(BAR_DOCUMENTS)
    return largest + results.one_page(besides=largest)


def _header(results: BenchResults) -> list[str]:
    s, host = results.settings, results.host
    return [
        "# pagefleet benchmark",
        "",
        f"`{results.command}`",
        "",
        f"Started {results.started_at}, {results.duration_s} s, {results.mode} stack, "
        f"converter {s.converter}, {s.chunk_pages} pages per chunk, {s.repeat} rounds "
        f"(medians). Workers were warm: {s.warm_workers}.",
        "",
        f"Host: {host.before.cpus} CPUs, {host.before.platform}, load average (1, 5, 15 min) "
        f"{host.before.load_average} before and {host.after.load_average} after.",
        "",
    ]


def _targets(results: BenchResults) -> list[str]:
    lines = [
        "## Targets (reported, not enforced)",
        "",
        "| target | wanted | measured | met |",
        "|---|---|---|---|",
    ]
    for row in results.targets:
        met = "yes" if row.met else "**no**"
        lines.append(f"| {row.name} | {row.target} | {row.value:g} | {met} |")
    return lines


def _rounds(results: BenchResults) -> list[str]:
    """Each round beside the baselines measured just before it (what the targets' E and
    speedup are medians of)."""
    runs = [run for run in results.pipeline if run.rounds]
    if not runs:
        return []
    lines = [
        "",
        "## Round by round (each round just after its baselines; the targets take the median)",
        "",
        "| W | round | document | plain s | pipeline s | E | xargs makespan s | pipeline "
        "makespan s | pipeline / xargs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        for index, r in enumerate(run.rounds or []):
            xargs = f"{r.xargs_makespan_s:.2f}" if r.xargs_makespan_s is not None else "-"
            speedup = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
            lines.append(
                f"| {run.workers} | {index + 1} | {r.document} | {r.baseline_s:.2f} | "
                f"{r.latency_s:.2f} | {r.efficiency:.3f} | {xargs} | {r.makespan_s:.2f} | "
                f"{speedup} |"
            )
    return lines


def _overall(results: BenchResults) -> list[str]:
    base = results.baseline
    lines = [
        "",
        "## Overall (every document at once)",
        "",
        "| W | pages | makespan s | pages/s | ideal W x baseline | E | latency p50 s | p95 s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in results.pipeline:
        o = run.overall
        lines.append(
            f"| {run.workers} | {o.pages} | {o.makespan_median_s:.2f} | "
            f"{o.pages_per_s:.1f} | {run.workers * base.pages_per_s:.1f} | "
            f"{o.efficiency:.3f} | {o.latency_p50_s:.2f} | {o.latency_p95_s:.2f} |"
        )
    return [
        *lines,
        "",
        f"Baseline (plain invocation, one process): {base.pages} pages in "
        f"{base.total_s:.2f} s = {base.pages_per_s:.1f} pages/s; peak RSS "
        f"{base.peak_rss_mb:.0f} MB.",
        "",
    ]


def _xargs(results: BenchResults) -> list[str]:
    if not results.xargs:
        return []
    lines = [
        "## What a user runs first: `xargs -P W` plain processes (one per file)",
        "",
        "| W | OCR threads each | makespan s | pages/s | pipeline makespan s | pipeline / xargs |",
        "|---|---|---|---|---|---|",
    ]
    pipeline = {run.workers: run.overall.makespan_median_s for run in results.pipeline}
    for x in results.xargs:
        ours = pipeline.get(x.workers)
        ratio = f"{x.makespan_median_s / ours:.2f}x" if ours else "-"
        lines.append(
            f"| {x.workers} | {x.ocr_threads} | {x.makespan_median_s:.2f} | "
            f"{x.pages_per_s:.1f} | {ours if ours is not None else '-'} | {ratio} |"
        )
    slowest = max(results.xargs[-1].per_document.items(), key=lambda kv: kv[1].seconds)
    return [
        *lines,
        "",
        f"`{results.xargs[-1].command}`; its longest file: {slowest[0]} "
        f"({slowest[1].seconds:.2f} s, {slowest[1].cpu_s:.2f} CPU s).",
        "",
    ]


def _plans(results: BenchResults) -> list[str]:
    rows = [
        (doc.name, run.workers, run.per_document[doc.name].plan)
        for doc in results.documents
        for run in results.pipeline
        if run.per_document[doc.name].plan is not None
    ]
    if not rows:
        return []
    lines = [
        "## The splitter's plans against what the chunks took (each alone, median round)",
        "",
        "| document | W | chunks | OCR pages | estimated s | converted s | "
        "dearest chunk est. s | its actual s | slowest chunk s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, w, plan in rows:
        assert plan is not None
        dearest = max(range(len(plan.chunk_estimates_s)), key=plan.chunk_estimates_s.__getitem__)
        lines.append(
            f"| {name} | {w} | {len(plan.chunk_seconds)} | {plan.ocr_pages} | "
            f"{plan.estimated_s:.2f} | {plan.converted_s:.2f} | "
            f"{plan.chunk_estimates_s[dearest]:.2f} | {plan.chunk_seconds[dearest]:.2f} | "
            f"{max(plan.chunk_seconds):.2f} |"
        )
    return [*lines, ""]


def _per_document(results: BenchResults) -> list[str]:
    lines = [
        "## Per document (each alone)",
        "",
        "| document | pages | chunks | baseline pages/s | W | pages/s | E | E bound | "
        "latency p50 s | p95 s | overhead s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for doc in results.documents:
        b = results.baseline.per_document[doc.name]
        for run in results.pipeline:
            d = run.per_document[doc.name]
            lines.append(
                f"| {doc.name} | {d.pages} | {d.chunks} | {b.pages_per_s:.2f} | "
                f"{run.workers} | {d.pages_per_s:.2f} | {d.efficiency:.3f} | "
                f"{d.efficiency_bound:.2f} | {d.latency_p50_s:.3f} | "
                f"{d.latency_p95_s:.3f} | {d.overhead_s:.3f} |"
            )
    return [
        *lines,
        "",
        "E bound: min(W, chunks) / W, the most a document of that many chunks can reach. "
        "Overhead: latency p50 minus the baseline seconds over min(W, chunks).",
        "",
    ]


def _stages(results: BenchResults) -> list[str]:
    lines = [
        "## Where a job's seconds go (each alone, median seconds)",
        "",
        "The stages are consecutive and add up to the latency; convert and result upload are "
        "summed over chunks and divided by min(W, chunks). Overhead stages are marked.",
        "",
        "| document | W | " + " | ".join(stage_label(s) for s in STAGES) + " |",
        "|---|---|" + "---|" * len(STAGES),
    ]
    for doc in _shown(results):
        for run in results.pipeline:
            stages = run.per_document[doc].stages
            cells = " | ".join(f"{stages.of(s):.3f}" for s in STAGES)
            lines.append(f"| {doc} | {run.workers} | {cells} |")
    return lines


def _job_cpu(results: BenchResults) -> list[str]:
    lines = [
        "",
        "## CPU of each job run alone (median CPU seconds; others' load in cores)",
        "",
        "| document | baseline CPU s | W | converter CPU s | worker CPU s | harness CPU s | "
        "handlers CPU s | rest of the machine, cores |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for doc in _shown(results):
        for run in results.pipeline:
            cpu = run.per_document[doc].cpu
            if not cpu:  # not sampled (a deployed stack)
                continue
            cells = " | ".join(
                f"{cpu[role].cpu_s if role in cpu else 0.0:.3f}"
                for role in (CONVERTER, WORKER, HARNESS, HANDLERS)
            )
            rest = cpu[NOT_OURS].cores if NOT_OURS in cpu else 0.0
            lines.append(
                f"| {doc} | {results.baseline.per_document[doc].cpu_s:.3f} | {run.workers} | "
                f"{cells} | {rest:.2f} |"
            )
    return lines


def _cores(results: BenchResults) -> list[str]:
    roles = results.cpu_roles()
    lines = [
        "",
        "## Where the cores went (CPU seconds / wall seconds, per pass)",
        "",
        "| W | pass | wall s | " + " | ".join(roles) + " |",
        "|---|---|---|" + "---|" * len(roles),
    ]
    for run in results.pipeline:
        for kind, cpu in run.cpu.items():
            cells = " | ".join(f"{cpu.roles[r].cores if r in cpu.roles else 0:.2f}" for r in roles)
            lines.append(f"| {run.workers} | {kind} | {cpu.wall_s:.1f} | {cells} |")
    lines += ["", "The harness's CPU seconds by thread (handlers run in `dispatch-*`):", ""]
    for run in results.pipeline:
        for kind, split in run.harness_cpu_s.items():
            parts = ", ".join(f"{name} {s:.2f}" for name, s in split.items())
            lines.append(f"- W={run.workers}, {kind}: {parts}")
    peaks = "; ".join(
        f"W={run.workers}: "
        + ", ".join(f"{role} {mb:.0f}" for role, mb in run.resources.peak_rss_mb_by_role.items())
        for run in results.pipeline
        if run.resources
    )
    gpu = "; ".join(sorted({_gpu_line(run) for run in results.pipeline}))
    return [*lines, "", f"Peak RSS by role (MB): {peaks}.", "", f"GPU: {gpu}.", ""]


def _gpu_line(run: PipelineSummary) -> str:
    gpu = run.resources.gpu if run.resources else None
    return gpu.note if gpu and gpu.note else "not sampled (deployed stack)"


def _splitter(results: BenchResults) -> list[str]:
    lines = [
        "## Splitter (fresh process)",
        "",
        "| document | pages | MB | chunks | seconds | peak RSS MB | RSS after imports MB | "
        "RSS budget MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in results.splitter:
        lines.append(
            f"| {s.name} | {s.pages} | {s.bytes / 2**20:.1f} | {s.chunks} | "
            f"{s.seconds:.3f} | {s.peak_rss_mb:.0f} | {s.rss_before_mb:.0f} | "
            f"{s.rss_budget_mb:.0f} |"
        )
    return lines
