"""fleet.md of a fleet simulation, and the issue's targets checked on its runs."""

from __future__ import annotations

from typing import Any

from bench.fleet.config import FleetConfig

TEXTRACT_PER_1000 = 1.50  # AWS Textract DetectDocumentText, list price
# The deployed policy sized for latency, as it was before it was sized against the cold start:
# 300 s of backlog per task, a scale-out cooldown of one datapoint, 15 idle minutes.
LATENCY_FIRST = {"acceptable_latency_s": 300, "scale_out_cooldown_s": 60, "idle_minutes": 15}
LATENCY_FIRST_LABEL = "after, 300 s per task"


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


def _targets_table(targets: list[dict[str, Any]]) -> list[str]:
    return [
        "## Targets",
        "",
        "| target | value | met |",
        "|---|---|---|",
        *(f"| {t['name']} | `{t['value']}` | {'yes' if t['met'] else '**no**'} |" for t in targets),
    ]


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
        *_targets_table(doc["targets"]),
    ]
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


# --- the committed study (scripts/fleet-sim --report) ----------------------------------------


def _find(doc: dict[str, Any], workload: str, deployment: str, scenario: str = "none") -> Any:
    return next(
        r
        for r in doc["runs"]
        if r["workload"] == workload and r["deployment"] == deployment and r["scenario"] == scenario
    )


def study_targets(doc: dict[str, Any], config: FleetConfig) -> list[dict[str, Any]]:
    """Issue 25's targets, each with its value, on the deployed ("after") runs."""
    cold_s = config.cold_start_s
    policy = config.policy
    small = {n: _find(doc, n, "after")["tasks_started"] for n in ("single-1p", "single-17p")}
    after = [r for r in doc["runs"] if r["deployment"] == "after"]
    day = _find(doc, "diurnal", "after")
    burst = _find(doc, "burst", "after")
    idle_window_s = policy.idle_minutes * 60 + config.metric_delay_s + 2 * 60
    failing = [r for r in after if r["scenario"] != "none"]
    stuck = [r for r in failing if r["scenario"].endswith("-broken")]
    bound = doc["stall_bound_instance_minutes"]
    return [
        {
            "name": "a 1-page and a 17-page document into an idle fleet start exactly one task",
            "value": small,
            "met": set(small.values()) == {1},
        },
        {
            "name": "no run launches a task its backlog cannot use (tasks > ceil(outstanding / W))",
            "value": {
                f"{r['workload']}/{r['scenario']}": r["task_launches_beyond_backlog"] for r in after
            },
            "met": not any(r["task_launches_beyond_backlog"] for r in after),
        },
        {
            "name": "diurnal day: billed GPU-hours at most 1.3 x busy; p95 under 600 s",
            "value": {
                "billed_h": day["gpu_hours"],
                "busy_h": day["gpu_busy_hours"],
                "ratio": round(day["gpu_hours"] / day["gpu_busy_hours"], 2),
                "latency_s": day["latency_s"],
            },
            "met": day["gpu_hours"] <= 1.3 * day["gpu_busy_hours"]
            and (day["latency_s"]["p95"] or 0) < 600,
        },
        {
            "name": f"burst: max_runners within two cold starts ({2 * cold_s:.0f} s) and zero "
            f"within the idle window ({idle_window_s:.0f} s) after the last record",
            "value": {
                "max_runners_at_s": burst["max_runners_at_s"],
                "zero_after_last_record_s": None
                if burst["zero_at_s"] is None
                else round(burst["zero_at_s"] - burst["last_record_s"], 1),
            },
            "met": burst["max_runners_at_s"] is not None
            and burst["max_runners_at_s"] <= 2 * cold_s
            and burst["zero_at_s"] is not None
            and burst["zero_at_s"] - burst["last_record_s"] <= idle_window_s,
        },
        {
            "name": "every failure scenario: no chunk lost or converted twice, no finished job "
            "without a record, none recorded twice",
            "value": {
                r["scenario"]: [
                    r["chunks_lost"],
                    r["chunks_converted_twice"],
                    r["jobs_unrecorded"],
                    r["records_written_twice"],
                ]
                for r in failing
            },
            "met": not any(
                r["chunks_lost"]
                or r["chunks_converted_twice"]
                or r["jobs_unrecorded"]
                or r["records_written_twice"]
                for r in failing
            ),
        },
        {
            "name": f"GPUs up, nothing converting: at most N = {bound} instance-minutes "
            "(max_runners x (stall_minutes + 2 + the capacity provider's 15-minute scale-in))",
            "value": {r["scenario"]: r["instance_minutes"] for r in stuck},
            "met": all(r["instance_minutes"] <= bound for r in stuck),
        },
    ]


def render_study(doc: dict[str, Any]) -> str:
    lines = [
        "# pagefleet fleet simulation: issue 25",
        "",
        f"`{doc['command']}` ({doc['duration_s']} s; inputs `{doc['inputs_sha256'][:16]}`, "
        "checked by tests/test_fleet_sim.py). The splitter is pagefleet.planning's, with the "
        "settings Terraform gives it; the alarms' metric math is pagefleet/scaling.py's, as "
        f'exported to Terraform. Deployed policy: **{doc["default_policy"]}**; "before" is '
        f"the deployment before issue 25: `{doc['before']}` with policy `running-gate`.",
        "",
        *_targets_table(doc["targets"]),
    ]
    lines += [
        "",
        "## Before and after",
        "",
        "Finding 1 (a small document spread over max_runners x W lanes) on the workloads; "
        "finding 4 (GPUs up, nothing converting) and the other failures on a 17-page document "
        "and a steady day. Latency: upload to record.",
        "",
        "| workload | scenario | deployment | chunks | tasks started | peak tasks | p50 s | p95 s"
        " | p99 s | GPU-h (busy) | instance-min | $/1000 pages | finished | waiting | lost"
        " | twice | stalls stopped |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        lat = r["latency_s"]
        lines.append(
            f"| {r['workload']} | {r['scenario']} | {r['deployment']} | {r['chunks']:,} "
            f"| {r['tasks_started']} | {r['peak_tasks']} | {lat['p50']} | {lat['p95']} "
            f"| {lat['p99']} | {r['gpu_hours']} ({r['gpu_busy_hours']}) "
            f"| {r['instance_minutes']:,} | {_money(r['cost']['per_1000_pages'])} "
            f"| {'yes' if r['finished'] else 'no'} | {r['chunks_waiting']} | {r['chunks_lost']} "
            f"| {r['chunks_converted_twice']} | {r['stalls_stopped']} |"
        )
    lines += ["", "## The trade-off: GPU-hours against latency", ""]
    lines += [
        "The deployed policy adds a task only for a backlog its tasks would not clear in two "
        "cold starts plus the four minutes target tracking takes to see it "
        f"({doc['policies'][doc['default_policy']]['acceptable_latency_s']:g} s per task). "
        f'Sized for latency instead ("{LATENCY_FIRST_LABEL}": the same policy with '
        f"`{LATENCY_FIRST}`), it starts tasks for backlogs that are gone before they run, "
        "and pays their cold starts and their instances' scale-in:",
        "",
        "| workload | policy | billed GPU-h / busy | p50 s | p95 s | p99 s | tasks started "
        "| launches beyond backlog |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        if r["scenario"] == "none" and r["deployment"] in ("after", LATENCY_FIRST_LABEL):
            if r["workload"] not in ("steady", "diurnal", "burst", "corpus"):
                continue
            lat = r["latency_s"]
            ratio = r["gpu_hours"] / r["gpu_busy_hours"] if r["gpu_busy_hours"] else None
            lines.append(
                f"| {r['workload']} | {r['deployment']} | {r['gpu_hours']} / "
                f"{r['gpu_busy_hours']} = {'-' if ratio is None else f'{ratio:.2f}'} "
                f"| {lat['p50']} | {lat['p95']} | {lat['p99']} | {r['tasks_started']} "
                f"| {r['task_launches_beyond_backlog']} |"
            )
    lines += _cpu_section(doc) + _non_gpu_section(doc) + _cpu_runners_section(doc)
    lines += ["", "Scenarios (FleetConfig overrides, seeded):", ""]
    lines += [f"- `{name}`: `{o}`" for name, o in doc["scenarios"].items()]
    lines += ["", "## Estimated inputs", "", "| input | value | source |", "|---|---|---|"]
    lines += [
        f"| `{name}` | `{e['value']}` | {e['source']} |" for name, e in doc["estimates"].items()
    ]
    lines += [
        "",
        f"GPU rates derived from them: {doc['gpu_rates']['text_pages_per_s']} text or "
        f"{doc['gpu_rates']['ocr_pages_per_s']} OCR pages/s per saturated GPU. The prices and "
        "usage estimates of the non-GPU costs are listed with their sources above.",
        "",
    ]
    return "\n".join(lines)


def _cpu_section(doc: dict[str, Any]) -> list[str]:
    """Which of the GPU and the workers' cores sets a task's pace, per instance type."""
    lines = [
        "",
        "## The workers' CPU beside the GPU",
        "",
        "marker's workers are CPU clients of the GPU's model servers: each page costs "
        "`worker_cpu_s_per_page` of one core (measured by the marker CPU bench), on the "
        "physical cores (half the vCPUs) less the two runner/worker_plan.py leaves to the "
        "servers, each worker on at most one core. A chunk's GPU and CPU work overlap, so a busy "
        "task converts at the lower of the two rates.",
        "",
        "| instance | vCPUs | W | worker cores | CPU s/page | CPU pages/s | GPU text / OCR pages/s"
        " | text pages bound by | OCR pages bound by | text pages CPU-bound above CPU s/page |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in doc["cpu_bound"]:
        rate = c["pages_per_s"]
        lines.append(
            f"| {c['instance_type']} | {c['vcpus']} | {c['workers']} | {c['worker_cores']} "
            f"| {c['worker_cpu_s_per_page']} | {rate['cpu']} | {rate['gpu_text']} / "
            f"{rate['gpu_ocr']} | {c['text_bound_by']} | {c['ocr_bound_by']} "
            f"| {c['text_cpu_bound_above_s_per_page']} |"
        )
    lines += [
        "",
        "The steady workload on the default instance with the measured CPU per page and with "
        "every page at a scan's (scenario `cpu-heavy`):",
        "",
        "| scenario | p50 s | p95 s | p99 s | GPU-h (busy) | tasks started | $/1000 pages |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        if r["workload"] == "steady" and r["deployment"] == "after":
            if r["scenario"] not in ("none", "cpu-heavy"):
                continue
            lat = r["latency_s"]
            lines.append(
                f"| {r['scenario']} | {lat['p50']} | {lat['p95']} | {lat['p99']} "
                f"| {r['gpu_hours']} ({r['gpu_busy_hours']}) | {r['tasks_started']} "
                f"| {_money(r['cost']['per_1000_pages'])} |"
            )
    return lines


def _non_gpu_section(doc: dict[str, Any]) -> list[str]:
    """The deployment's other costs, apart from the GPU's, with and without the endpoint."""
    lines = [
        "",
        "## Non-GPU costs",
        "",
        "Per 1,000 pages, beside the GPU instances' (the `$/1000 pages` above, unchanged): NAT "
        "gateway hours and data processed, Lambda requests and GB-seconds, SQS and S3 requests, "
        "CloudWatch alarms and metrics. The fixed items (NAT hours, CloudWatch) are billed for "
        "the run's simulated time, so a workload that leaves the deployment idle carries them "
        "alone. With an S3 gateway endpoint (the root module's runner subnets ask for one, "
        "terraform/examples/complete-vpc creates it) chunk PDFs, results and ECR's image layers "
        "bypass the NAT gateway; without it they go through it. The model download goes "
        "through it in both.",
        "",
        "| workload | GPU $/1000 | non-GPU $/1000, endpoint | non-GPU $/1000, NAT only "
        "| NAT GB, endpoint / NAT only | the largest items (NAT only) |",
        "|---|---|---|---|---|---|",
    ]
    for r in doc["runs"]:
        if r["scenario"] != "none" or r["deployment"] != "after":
            continue
        cost = r["non_gpu_cost"]
        items = sorted(cost["nat_only"]["items"].items(), key=lambda kv: -kv[1])[:3]
        lines.append(
            f"| {r['workload']} | {_money(r['cost']['per_1000_pages'])} "
            f"| {_money(cost['s3_endpoint']['per_1000_pages'])} "
            f"| {_money(cost['nat_only']['per_1000_pages'])} "
            f"| {cost['s3_endpoint']['nat_gb']} / {cost['nat_only']['nat_gb']} "
            f"| {', '.join(f'{k} ${v:,.2f}' for k, v in items)} |"
        )
    prices = doc["prices"]
    lines += [
        "",
        f"Prices and usage estimates (AWS list prices, us-east-1, read {prices['read']}; free "
        "tiers left out, as they are per account):",
        "",
        "| input | value | source |",
        "|---|---|---|",
    ]
    lines += [
        f"| `{name}` | `{f['value']:g}` | {f['source']} |" for name, f in prices["fields"].items()
    ]
    return lines


def _cpu_runners_section(doc: dict[str, Any]) -> list[str]:
    """runner_kind = "cpu": the text-layer converter on Fargate, under the deployed policy."""
    cpu = doc["cpu_fleet"]
    task = cpu["task"]
    lines = [
        "",
        '## CPU runners (runner_kind = "cpu")',
        "",
        f"Fargate tasks of {task['vcpus']} vCPUs and {task['memory_gib']:g} GiB "
        f"(terraform/modules/runners/cpu_task.json), {task['workers']} workers of the "
        f"text-layer converter each, on demand at ${cpu['per_h']}/task-hour; a chunk is at "
        f"least {task['chunk_cpu_s']:g} CPU s, {cpu['seconds_per_chunk']:g} s of a task, so "
        f"the deployed policy's target is {cpu['target_backlog_per_task']:g} chunks per task. "
        f"A task converts {cpu['pages_per_s']['text']} text or {cpu['pages_per_s']['ocr']} "
        f"OCR pages/s; its cold start is {cpu['cold_start_s']:g} s, and Fargate keeps no "
        "instance warm between tasks. What a new account runs while its GPU quota request is "
        "open (the GPU runs above are the same workloads):",
        "",
        "| workload | chunks | tasks started | peak tasks | p50 s | p95 s | p99 s "
        "| task-h (busy) | Fargate $/1000 pages | non-GPU $/1000, endpoint / NAT only "
        "| GPU $/1000 (after) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in cpu["runs"]:
        lat, other = r["latency_s"], r["non_gpu_cost"]
        gpu = _find(doc, r["workload"], "after")
        lines.append(
            f"| {r['workload']} | {r['chunks']:,} | {r['tasks_started']} | {r['peak_tasks']} "
            f"| {lat['p50']} | {lat['p95']} | {lat['p99']} "
            f"| {r['gpu_hours']} ({r['gpu_busy_hours']}) "
            f"| {_money(r['cost']['per_1000_pages'])} "
            f"| {_money(other['s3_endpoint']['per_1000_pages'])} / "
            f"{_money(other['nat_only']['per_1000_pages'])} "
            f"| {_money(gpu['cost']['per_1000_pages'])} |"
        )
    lines += ["", "| input | value | source |", "|---|---|---|"]
    lines += [
        f"| `{name}` | `{e['value']}` | {e['source']} |" for name, e in cpu["estimates"].items()
    ]
    return lines
