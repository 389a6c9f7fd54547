"""What a run shows: latency percentiles, throughput, tasks and instances, GPU-hours, dollars."""

from __future__ import annotations

import hashlib
import math
from typing import Any

from bench.fleet.model import Fleet
from bench.fleet.prices import non_gpu
from bench.paths import ROOT

# What a report's numbers follow from: the model and the deployed code it runs. A committed
# report whose digest differs describes code that is no longer there (tests/test_fleet_sim.py).
INPUTS = (
    "bench/fleet/*.py",
    "bench/fleet/corpus.json",
    "pagefleet/costs.py",
    "pagefleet/planning.py",
    "pagefleet/scaling.py",
    "pagefleet/settings.py",
    "pagefleet/stack.py",
    "runner/worker_plan.py",
    "terraform/stack.json",
    "terraform/modules/runners/cpu_task.json",
)


def inputs_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(p for pattern in INPUTS for p in ROOT.glob(pattern)):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(fleet: Fleet) -> dict[str, Any]:
    cfg, wl = fleet.config, fleet.workload
    latencies = [
        j.recorded_at_s - j.doc.arrival_s for j in fleet.jobs if j.recorded_at_s is not None
    ]
    chunks = [c for j in fleet.jobs for c in j.chunks]
    instance_s = sum((i.terminated_s or fleet.env.now) - i.launched_s for i in fleet.instances)
    # Busy: the GPU converting, or on a CPU task (no GPU) its cores.
    busy_s = sum(
        d.busy_s for t in fleet.tasks if (d := t.cpu if cfg.fargate else t.device) is not None
    )
    gpu_h = instance_s / 3600
    pages = wl.pages
    first = min((d.arrival_s for d in wl.documents), default=0.0)
    last_record = max((j.recorded_at_s or 0.0 for j in fleet.jobs), default=0.0)

    def dollars(per_h: float) -> dict[str, float | None]:
        total = gpu_h * per_h
        return {
            "per_h": per_h,
            "total": round(total, 2),
            "per_1000_pages": round(total / pages * 1000, 4) if pages else None,
            "idle": round((instance_s - busy_s) / 3600 * per_h, 2),
        }

    waiting = [c for c in chunks if c.index not in c.job.finished]
    stalled = [a for a in fleet.actions if a[1] == "stalled"]
    useful = [
        max(1, math.ceil((s["visible"] + s["in_flight"]) / cfg.workers_per_task))
        for s in fleet.samples
    ]
    return {
        "workload": wl.name,
        "description": wl.description,
        "policy": cfg.policy.name,
        "documents": len(wl.documents),
        "pages": pages,
        "finished": fleet.finished,
        "records": sum(j.records_written for j in fleet.jobs),
        "records_written_twice": sum(j.records_written > 1 for j in fleet.jobs),
        "partial_jobs": sum(bool(j.failed) for j in fleet.jobs),
        "latency_s": {
            "p50": _round(percentile(latencies, 50)),
            "p95": _round(percentile(latencies, 95)),
            "p99": _round(percentile(latencies, 99)),
            "max": _round(max(latencies, default=None)),
        },
        "makespan_s": round(last_record - first, 1),
        "simulated_s": round(fleet.env.now, 1),
        "chunks": len(chunks),
        "chunks_lost": sum(id(c) not in fleet.chunks.live for c in waiting),
        "chunks_waiting": sum(id(c) in fleet.chunks.live for c in waiting),
        "jobs_unrecorded": sum(
            j.recorded_at_s is None and len(j.finished) == len(j.chunks) for j in fleet.jobs
        ),
        "chunks_converted_twice": sum(c.conversions > 1 for c in chunks),
        "chunks_redelivered": fleet.chunks.redeliveries,
        "chunks_dead_lettered": len(fleet.chunks.dead_letters),
        "tasks_started": len(fleet.tasks),
        "instances_launched": len(fleet.instances),
        "peak_tasks": max((s["tasks"] for s in fleet.samples), default=0),
        "peak_instances": max((s["instances"] for s in fleet.samples), default=0),
        "peak_useful_tasks": min(cfg.policy.max_runners, max(useful, default=0)),
        "task_launches_beyond_backlog": fleet.excess_launches,
        "scaling_actions": len(fleet.actions),
        "spot_interruptions": fleet.spot_interruptions,
        "capacity_refusals": fleet.capacity_refusals,
        "registration_failures": fleet.registration_failures,
        "sidecar_failures": fleet.sidecar_failures,
        "stalls_stopped": len(stalled),
        "instance_minutes": round(instance_s / 60, 1),
        "max_runners_at_s": next(
            (s["t_s"] for s in fleet.samples if s["running"] >= cfg.policy.max_runners), None
        ),
        "zero_at_s": next((a[0] for a in fleet.actions if a[3] == 0 and a[0] >= last_record), None),
        "last_record_s": round(last_record, 1),
        "task_crashes": fleet.task_crashes,
        "gpu_hours": round(gpu_h, 2),
        "gpu_busy_hours": round(busy_s / 3600, 2),
        "cost": dollars(cfg.price_per_h),
        # The CPU runners' Fargate tasks run on demand only.
        "cost_on_demand": dollars(cfg.price_per_h if cfg.fargate else cfg.gpu.on_demand_per_h),
        "cost_spot": None if cfg.fargate else dollars(cfg.gpu.spot_per_h),
        # Kept apart from "cost", the GPU instances', so that one stays comparable.
        "non_gpu_cost": non_gpu(fleet, cfg.prices),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def throughput(fleet: Fleet, bin_s: float = 300.0) -> list[tuple[float, float]]:
    """(bin end, pages/s) from the per-minute samples."""
    points: list[tuple[float, float]] = []
    previous_t, previous_pages = 0.0, 0.0
    for s in fleet.samples:
        if s["t_s"] - previous_t >= bin_s:
            points.append((s["t_s"], (s["pages_done"] - previous_pages) / (s["t_s"] - previous_t)))
            previous_t, previous_pages = s["t_s"], s["pages_done"]
    return points
