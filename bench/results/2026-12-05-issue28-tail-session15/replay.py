"""The completion's checks replayed on chunk results kept by ``harvest.py``, one rule of when
to forecast against another, in CPU seconds of this one process.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-tail-session15/replay.py \
        /tmp/harvest.pkl --passes 3

Each job's result objects land in the order they finished; each landing is a check, as in
``pagefleet.completion._complete``: with chunks still out, the rule says whether the renderer
forecasts (``prepare``, on the results read through the completion's own ``_results``); with
none out, the end (``render_markdown`` and ``job_record``). Every pass of a rule parses the
results afresh (a cold environment). Rules alternate within each pass (A B A B). Printed per
rule: the forecasts' and the ends' CPU seconds a round of the ``together`` jobs, and for the
``alone`` jobs (the manual) the CPU of the check at the next-to-last landing (the one the last
result's event waits for), of the end, and the tail they make given the gap between the two
last landings: max(0, next-to-last check - gap) + end. Each job's Markdown is checked to be the
same under every rule (``none``: no forecast, rendered once at the end).
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pagefleet import completion, keys
from pagefleet.assembly import job_record, prepare, render_markdown
from pagefleet.models import ChunkSpec, JobManifest
from pagefleet.storage import Bucket

Rule = Callable[[JobManifest, list[ChunkSpec]], bool]


def _quarter_then(manifest: JobManifest, missing: list[ChunkSpec]) -> bool:
    # Session 14's rule: at most two out, and at most a quarter of the pages.
    out = sum(c.pages for c in missing)
    return len(missing) <= 2 and out <= 0.25 * manifest.pages


def _two(manifest: JobManifest, missing: list[ChunkSpec]) -> bool:
    return len(missing) <= 2


def _two_of_three(manifest: JobManifest, missing: list[ChunkSpec]) -> bool:
    return len(missing) <= 2 and len(manifest.chunks) >= 3


def _none(manifest: JobManifest, missing: list[ChunkSpec]) -> bool:
    return False


RULES: dict[str, Rule] = {
    "none": _none,
    "quarter": _quarter_then,
    "two": _two,
    "two-if-3-chunks": _two_of_three,
    "branch": completion.forecasts,
}


class _Landed:
    """The results landed so far, as the completion's reads see them."""

    def __init__(self, name: str, objects: dict[str, bytes]) -> None:
        self.name = name
        self.objects = objects

    def get(self, key: str) -> bytes:
        return self.objects[key]


@dataclass
class Check:
    missing: int
    forecast: bool
    cpu_s: float
    markdown: str | None = None  # the end's


def replay(job: dict[str, Any], rule: Rule, name: str) -> list[Check]:
    manifest = JobManifest.model_validate_json(job["manifest"])
    landed = _Landed(name, {})
    bucket = cast(Bucket, landed)  # what the completion's reads use of a bucket
    present: dict[str, str] = {}
    checks = []
    for _, key, body in job["results"]:
        landed.objects[key] = body
        present[key] = str(len(present))
        missing = [
            c for c in manifest.chunks if keys.chunk_result(manifest.job_id, c.index) not in present
        ]
        started = time.process_time()
        forecast = False
        markdown = None
        if missing:
            forecast = rule(manifest, missing)
            if forecast:
                prepare(manifest, completion._results(bucket, manifest, present).leaves)
        else:
            results = completion._results(bucket, manifest, present)
            if results.complete:
                markdown = render_markdown(manifest, results.leaves)
                job_record(manifest, results.leaves, 0.0, results.splits)
            else:
                forecast = True
                prepare(manifest, results.leaves)
        checks.append(Check(len(missing), forecast, time.process_time() - started, markdown))
    completion._forget(bucket, list(present))
    return checks


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("harvest", type=Path)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--rules", nargs="*", default=list(RULES))
    args = p.parse_args()
    kept = pickle.loads(args.harvest.read_bytes())
    rows: dict[str, list[dict[str, float]]] = {r: [] for r in args.rules}
    # Each job's Markdown, the same whatever the rule: a forecast only saves the end work.
    ends: dict[str, str | None] = {}
    for n in range(args.passes):
        for rule in args.rules:
            gc.collect()
            forecast_s = end_s = 0.0
            forecasts = 0
            for i, job in enumerate(kept["together"]):
                checks = replay(job, RULES[rule], f"{rule}-{n}-t{i}")
                assert ends.setdefault(f"t{i}", checks[-1].markdown) == checks[-1].markdown, i
                forecast_s += sum(c.cpu_s for c in checks if c.markdown is None)
                end_s += sum(c.cpu_s for c in checks if c.markdown is not None)
                forecasts += sum(c.forecast for c in checks)
            alone = []
            for i, job in enumerate(kept["alone"]):
                checks = replay(job, RULES[rule], f"{rule}-{n}-a{i}")
                assert ends.setdefault(f"a{i}", checks[-1].markdown) == checks[-1].markdown, i
                finished = [f for f, _, _ in job["results"]]
                gap = finished[-1] - finished[-2]
                before, last = checks[-2].cpu_s, checks[-1].cpu_s
                alone.append((before, last, max(0.0, before - gap) + last, gap))
            row = {
                "forecast_s": forecast_s,
                "end_s": end_s,
                "total_s": forecast_s + end_s,
                "forecasts": forecasts,
                "alone_next_to_last_s": statistics.median(a[0] for a in alone),
                "alone_end_s": statistics.median(a[1] for a in alone),
                "alone_tail_s": statistics.median(a[2] for a in alone),
                "alone_next_to_last_max_s": max(a[0] for a in alone),
            }
            rows[rule].append(row)
            print(json.dumps({"pass": n, "rule": rule} | {k: round(v, 4) for k, v in row.items()}))
    for rule, passes in rows.items():
        med = {k: round(statistics.median(r[k] for r in passes), 4) for k in passes[0]}
        spread = {
            k: [round(min(r[k] for r in passes), 4), round(max(r[k] for r in passes), 4)]
            for k in ("total_s", "alone_next_to_last_s")
        }
        print(json.dumps({"rule": rule, "median": med, "spread": spread}))


if __name__ == "__main__":
    main()
