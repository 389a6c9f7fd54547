"""fleet.md of a fleet simulation, and the issue's targets checked on its runs."""

from __future__ import annotations

from typing import Any

TEXTRACT_PER_1000 = 1.50  # AWS Textract DetectDocumentText, list price


def targets(runs: list[dict[str, Any]], default: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    mine = [r for r in runs if r["policy"] == default]
    one = next((r for r in mine if r["workload"] == "single-1p"), None)
    if one is not None:
        found.append(
            {
                "name": "a one-page document into an idle fleet starts exactly one task",
                "value": one["tasks_started"],
                "met": one["tasks_started"] == 1,
            }
        )
    if mine:
        beyond = {r["workload"]: r["task_launches_beyond_backlog"] for r in mine}
        found.append(
            {
                "name": "no workload launches more tasks than its backlog can use "
                "(a launch while tasks >= ceil(outstanding chunks / W))",
                "value": beyond,
                "met": not any(beyond.values()),
            }
        )
    day = [r for r in runs if r["workload"] == "diurnal" and r["latency_s"]["p95"] is not None]
    if any(r["policy"] == default for r in day):
        best = min(r["latency_s"]["p95"] for r in day)
        near = [r for r in day if r["latency_s"]["p95"] <= 1.1 * best]
        cheapest = min(near, key=lambda r: r["cost"]["per_1000_pages"])
        found.append(
            {
                "name": "diurnal day: the default policy is the cheapest of those within 10% "
                "of the best p95",
                "value": {
                    r["policy"]: [r["latency_s"]["p95"], r["cost"]["per_1000_pages"]] for r in day
                },
                "met": cheapest["policy"] == default,
            }
        )
    burst = next((r for r in mine if r["workload"] == "burst"), None)
    if burst is not None:
        clean = (
            burst["finished"]
            and burst["chunks_lost"] == 0
            and burst["chunks_converted_twice"] == 0
            and burst["records_written_twice"] == 0
        )
        found.append(
            {
                "name": "the burst drains: no chunk lost, none converted twice, one record a job",
                "value": {
                    k: burst[k]
                    for k in (
                        "finished",
                        "chunks_lost",
                        "chunks_converted_twice",
                        "records_written_twice",
                    )
                },
                "met": clean,
            }
        )
    return found


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.3f}"


def render(doc: dict[str, Any]) -> str:
    cfg = doc["config"]
    lines = [
        "# pagefleet fleet simulation",
        "",
        f"`{doc['command']}`",
        "",
        f"Started {doc['started_at']}, {doc['duration_s']} s of wall time, seed {doc['seed']}. "
        f"Default policy (deployed): **{doc['default_policy']}**. GPU {cfg['gpu']['instance_type']}"
        f" ({cfg['gpu']['gpu']}), {'Spot' if cfg['spot'] else 'on-demand'}, "
        f"{cfg['workers_per_task']} workers per task, {cfg['chunk_pages']} pages per chunk; "
        f"estimated {doc['gpu_rates']['text_pages_per_s']} text or "
        f"{doc['gpu_rates']['ocr_pages_per_s']} OCR pages/s per saturated GPU "
        "(bench/fleet/config.py says where each number comes from; none was measured on a GPU).",
        "",
        "## Targets",
        "",
        "| target | value | met |",
        "|---|---|---|",
    ]
    for t in doc["targets"]:
        lines.append(f"| {t['name']} | `{t['value']}` | {'yes' if t['met'] else '**no**'} |")
    lines += [
        "",
        "## Runs",
        "",
        "Latency: upload to job record. Cost: instance time at the run's price (Spot unless "
        f"--on-demand); Textract text detection lists ${TEXTRACT_PER_1000:.2f} per 1,000 pages.",
        "",
        "| workload | policy | docs | pages | p50 s | p95 s | p99 s | GPU-h (busy) | $/1000 pages"
        " | on-demand $/1000 | idle $ | tasks started | peak tasks / useful | instances"
        " | beyond backlog | redelivered | DLQ | converted twice |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        lat = r["latency_s"]
        lines.append(
            f"| {r['workload']} | {r['policy']} | {r['documents']:,} | {r['pages']:,} "
            f"| {lat['p50']} | {lat['p95']} | {lat['p99']} "
            f"| {r['gpu_hours']} ({r['gpu_busy_hours']}) | {_money(r['cost']['per_1000_pages'])} "
            f"| {_money(r['cost_on_demand']['per_1000_pages'])} | {_money(r['cost']['idle'])} "
            f"| {r['tasks_started']} | {r['peak_tasks']} / {r['peak_useful_tasks']} "
            f"| {r['instances_launched']} | {r['task_launches_beyond_backlog']} "
            f"| {r['chunks_redelivered']} | {r['chunks_dead_lettered']} "
            f"| {r['chunks_converted_twice']} |"
        )
    lines += ["", "Workloads:", ""]
    for name, desc in dict.fromkeys((r["workload"], r["description"]) for r in doc["runs"]):
        lines.append(f"- `{name}`: {desc}")
    lines += ["", "Policies (pagefleet/scaling.py):", ""]
    for name, p in doc["policies"].items():
        lines.append(
            f"- `{name}`: leave zero `{p['from_zero']}`, track `{p['tracking_metric']}`, target "
            f"{p['acceptable_latency_s']:g} s / {p['seconds_per_chunk']:g} s per chunk, "
            f"max {p['max_runners']}, cooldowns out {p['scale_out_cooldown_s']} s / in "
            f"{p['scale_in_cooldown_s']} s, idle {p['idle_minutes']} min"
        )
    checked = doc.get("validation")
    if checked:
        lines += [
            "",
            "## Validation against the embedded stack",
            "",
            f"Measured: `{checked['command']}` ({checked['converter']} converter), "
            f"`{checked['source'].split('bench/results/')[-1]}`. The simulator takes that run's "
            "per-stage measurements (bench/fleet/validation.py) and predicts its makespan "
            f"(first upload to last record); tolerance {checked['tolerance']:.0%}.",
            "",
            "| W | per-page times from | contention factor | measured makespan s (rounds)"
            " | simulated s | error | within |",
            "|---|---|---|---|---|---|---|",
        ]
        for v in checked["rows"]:
            rounds = ", ".join(f"{x:.1f}" for x in v["measured_rounds_s"])
            lines.append(
                f"| {v['workers']} | {v['per_page_times']} | {v['contention_factor']} "
                f"| {v['measured_makespan_s']:.2f} ({rounds}) | {v['simulated_makespan_s']:.2f} "
                f"| {v['error']:+.1%} | {'yes' if v['within_tolerance'] else 'no'} |"
            )
    lines += ["", "Chart: [fleet.png](fleet.png).", ""]
    return "\n".join(lines)
