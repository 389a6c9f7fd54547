"""``results.json`` and ``results.md`` of a marker bench run."""

from __future__ import annotations

import statistics
from pathlib import Path

from bench.marker import sizing
from bench.marker.models import Case, MarkerBench


def _row(case: Case, kind: str) -> str:
    warm = case.warm(kind)
    cold = [c for p in case.processes for c in p.chunks if c.kind == kind and not c.warm]
    pages = warm[0].pages
    per_page = case.cpu_s_per_page(kind)
    requests = warm[0].requests
    return (
        f"| {case.mode} | {case.workers} | {kind} | {pages} | {per_page:.3f} | "
        f"{min(c.cpu_s_per_page for c in warm):.3f}-{max(c.cpu_s_per_page for c in warm):.3f} | "
        f"{statistics.median(c.cpu_s_per_page for c in cold):.3f} | {1 / per_page:.2f} | "
        f"{statistics.median(c.wall_s for c in warm) / pages:.2f} | "
        f"{warm[0].markdown_chars // pages} | {warm[0].ocr_pages} | "
        f"{requests['vlm'] / case.workers / pages:.1f} / {requests['layout'] / case.workers:.1f}"
        f" / {requests['ocr_error'] / case.workers:.1f} |"
    )


def render(results: MarkerBench) -> str:
    m = results.machine
    lines = [
        "# marker CPU bench: the runner's own work per page",
        "",
        f"`{results.command}` ({results.date})",
        "",
        f"marker-pdf {m.marker_pdf}, surya-ocr {m.surya_ocr}, torch {m.torch} (CPU); {m.cpus} "
        f"CPUs ({m.physical_cores} physical cores, {m.cpu_model}); load average "
        f"{m.load_average_before[0]:.1f} before, {m.load_average_after[0]:.1f} after (other "
        "work shared the machine: CPU seconds are the processes' own, wall times are not "
        "comparable).",
        "",
        "Each conversion process is the runner's (`runner.conversion.ConversionProcess` with "
        "`runner/converters/marker.py`); marker's model servers are stubs in the bench's own "
        "process that answer at once with page-sized text, so the CPU counted is only the "
        "runner's. W processes convert the same chunk side by side; the first round of each "
        f"kind is cold (lazy imports), then {results.repeat} warm rounds.",
        "",
        "Documents: "
        + "; ".join(f"**{kind}**: {what}" for kind, what in results.documents.items())
        + ".",
        "",
        "## CPU per page",
        "",
        "| mode | W | chunk | pages | CPU s/page (warm median) | warm range | cold CPU s/page | "
        "pages/s per busy core | wall s/page | Markdown chars/page | OCR pages | requests: "
        "VLM per page / layout / OCR-error per chunk |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(case, kind) for case in results.cases for kind in case.kinds()]
    lines += [
        "",
        "## Memory and start per conversion process",
        "",
        "| mode | W | process | start CPU s | threads | RSS MB | PSS MB | USS MB | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in results.cases:
        for i, p in enumerate(case.processes):
            lines.append(
                f"| {case.mode} | {case.workers} | {i} | {p.start_cpu_s:.1f} | {p.threads} | "
                f"{p.rss_mb:.0f} | {p.pss_mb:.0f} | {p.uss_mb:.0f} | {p.peak_rss_mb:.0f} |"
            )
    lines += ["", *_sizing(results)]
    return "\n".join(lines) + "\n"


def _sizing(results: MarkerBench) -> list[str]:
    modes = dict.fromkeys(c.mode for c in results.cases)
    lines = [
        "## What a GPU runner needs",
        "",
        "Pages/s per vCPU the runner feeds a GPU with: one page per `CPU s/page` of a core, the "
        "larger of the W = 1 and side-by-side medians, an EC2 core (2 vCPUs) counted as one "
        "core of this machine. Memory per worker: the highest peak RSS of a conversion process.",
        "",
        "| mode | chunk | CPU s/page | pages/s per core | pages/s per vCPU |",
        "|---|---|---|---|---|",
    ]
    for mode in modes:
        for kind in results.cases[0].kinds():
            cpu = sizing.cpu_s_per_page(results, mode, kind)
            lines.append(
                f"| {mode} | {kind} | {cpu:.3f} | {1 / cpu:.2f} | "
                f"{1 / cpu / sizing.THREADS_PER_CORE:.2f} |"
            )
    if "balanced" not in modes:
        return lines
    lines += [
        "",
        f"Peak RSS of a conversion process: {sizing.peak_rss_mb(results):.0f} MB.",
        "",
        "The smallest instance of each family whose cores, less marker's two for the model "
        "servers, keep up with its GPU in balanced mode on the worse of text-layer pages "
        f"({sizing.worst(results, 'balanced', scans=False):.3f} CPU s/page, the costliest such "
        "chunk; the VLM reads only their layout, 3.7 x as fast as it OCRs) and scans "
        f"({sizing.worst(results, 'balanced', scans=True):.3f}). bench/marker/sizing.py says "
        "where each GPU rate comes from.",
        "",
        "| family | GPU | OCR pages/s (marker B200-scaled / surya RTX 5090-scaled) | worker "
        "cores needed | smallest instance | vCPUs | W | memory needed GiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for fit in sizing.fits(results):
        lines.append(
            f"| {fit.family} | {fit.gpu} | {fit.ocr_pages_per_s_marker:.2f} / "
            f"{fit.ocr_pages_per_s_surya:.2f} | {fit.worker_cores:.2f} | {fit.instance} | "
            f"{fit.vcpus} | {fit.workers} | {fit.memory_gib_needed:.1f} |"
        )
    return lines


def write_results(results: MarkerBench, out: Path) -> list[Path]:
    """``marker.json`` (not the pipeline bench's ``results.json``: another schema) and
    ``results.md``."""
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "marker.json"
    json_path.write_text(results.model_dump_json(indent=2) + "\n")
    md_path = out / "results.md"
    md_path.write_text(render(results))
    return [json_path, md_path]
