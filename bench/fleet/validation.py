"""The model against the real thing: the embedded stack's measured makespan at W = 1, 2.

Input: a ``scripts/bench`` results.json of the corpus run on the embedded stack (CPU
converter, one runner with W workers, every document uploaded at once). From it, and only from
its per-stage measurements, the simulator gets:

- per-page seconds of each document: its chunks' conversion seconds when the document ran
  alone at that W (``stages.convert_s`` x min(W, chunks), over its pages);
- the contention of the all-at-once pass: its conversion seconds summed over every chunk
  (``overall.stages_total.convert_s``) over the same sum from the alone runs. At W = 2 two
  converters share 2 cores with moto and the handlers (and each OCR pool takes every core:
  ANALYSIS.md of that run), so a chunk converts about 1.4x slower than alone. This factor is
  an input measured on the same pass; the ``alone`` rows leave it out to show its weight;
- per-chunk overhead (receive, chunk PDF, result upload: ``chunk_overhead_s`` summed over the
  pass's chunks), split and assembly seconds (linear in pages, fitted to the alone runs), the
  notification delay (median ``ingest_s`` alone);
- one splitter and one completion thread, as the embedded stack dispatches them.

The makespan itself (first upload to last job record) is what the simulator predicts.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from bench.fleet.config import FleetConfig
from bench.fleet.model import Fleet
from bench.fleet.workloads import Document, Workload
from bench.paths import RESULTS

DEFAULT_RESULTS = RESULTS / "2026-11-30-corpus-w1-w2-quiet" / "results.json"
TOLERANCE = 0.15


def _fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares (intercept, slope) of seconds over pages, both at least 0."""
    xs, ys = [float(p) for p, _ in points], [s for _, s in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mean_x) ** 2 for x in xs)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / var
    slope = max(0.0, slope)
    return max(0.0, mean_y - slope * mean_x), slope


def simulate_run(run: dict[str, Any], chunk_pages: int, contention: bool) -> dict[str, Any]:
    workers, per_doc, overall = run["workers"], run["per_document"], run["overall"]
    alone = {
        name: d["stages"]["convert_s"] * min(workers, d["chunks"]) for name, d in per_doc.items()
    }
    factor = overall["stages_total"]["convert_s"] / sum(alone.values()) if contention else 1.0
    chunks = sum(d["chunks"] for d in per_doc.values())
    split = _fit([(d["pages"], d["stages"]["split_s"]) for d in per_doc.values()])
    assemble = _fit([(d["pages"], d["stages"]["assemble_s"]) for d in per_doc.values()])
    config = FleetConfig(
        fixed_tasks=1,
        workers_per_task=workers,
        stream_share=1.0 / workers,  # measured times already hold the sharing
        chunk_pages=chunk_pages,
        # The measured run cut chunk_pages-page chunks; pages of equal cost plan the same.
        splitter_lanes=1,
        splitter_overrides={"chunk_min_cost_s": 0.0},
        chunk_overhead_s=overall["stages_total"]["chunk_overhead_s"] / chunks,
        notification_delay_s=statistics.median(d["stages"]["ingest_s"] for d in per_doc.values()),
        splitter_concurrency=1,
        split_base_s=split[0],
        split_per_page_s=split[1],
        completion_concurrency=1,
        completion_check_s=statistics.median(
            d["stages"]["completion_wait_s"] for d in per_doc.values()
        ),
        assemble_base_s=assemble[0],
        assemble_per_page_s=assemble[1],
        spot=False,
        spot_interruptions_per_h=0,
    )
    docs = tuple(
        Document(arrival_s=0.0, pages=d["pages"], page_s=alone[name] * factor / d["pages"])
        for name, d in per_doc.items()
    )
    fleet = Fleet(config, Workload(name="corpus", description="", documents=docs), seed=0).run()
    simulated = max(j.recorded_at_s or 0.0 for j in fleet.jobs)
    measured = overall["makespan_median_s"]
    return {
        "workers": workers,
        "per_page_times": "all-at-once pass" if contention else "each document alone",
        "contention_factor": round(factor, 3),
        "measured_makespan_s": measured,
        "measured_rounds_s": overall["makespan_s"],
        "simulated_makespan_s": round(simulated, 2),
        "error": round(simulated / measured - 1, 4),
        "within_tolerance": abs(simulated / measured - 1) <= TOLERANCE,
    }


def validate(results: Path = DEFAULT_RESULTS) -> dict[str, Any]:
    data = json.loads(results.read_text())
    if data.get("mode") != "embedded":
        raise ValueError(f"{results}: not an embedded-stack run")
    chunk_pages = data["settings"]["chunk_pages"]
    rows = [
        simulate_run(run, chunk_pages, contention)
        for contention in (True, False)
        for run in data["pipeline"]
    ]
    return {
        "source": str(results),
        "command": data.get("command"),
        "converter": data["settings"]["converter"],
        "tolerance": TOLERANCE,
        "rows": rows,
    }
