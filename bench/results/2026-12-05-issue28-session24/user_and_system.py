"""The stack's CPU a corpus round split into user and system time, with minor page faults, by
role: is the kernel (page faults of fresh buffers, socket calls) a share worth chasing?

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session24/user_and_system.py \
        /work/shared/corpus/real --rounds 2

One warmed-up stack (bench.pipeline.warm: moto, the Lambda environments, ``python -m runner``
with 2 workers), then each round of every document at once, read with psutil (``cpu_times``) and
/proc/PID/stat (``minflt``) for this process and every descendant, by the bench's roles
(bench.pipeline.sampling.role_of). Prints one JSON line a round: role -> [user s, system s,
minor faults]. The harness's line holds the bench's own threads too.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import psutil

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.jobs import await_jobs, submit
from bench.pipeline.sampling import role_of
from bench.pipeline.warm import warm_stack


def _minor_faults(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[7])  # field 10, minflt


def _snapshot(harness: int) -> dict[str, list[float]]:
    found: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    process = psutil.Process(harness)
    for proc in [process, *process.children(recursive=True)]:
        try:
            times, role = proc.cpu_times(), role_of(proc, harness)
            counts = found[role]
            counts[0] += times.user
            counts[1] += times.system
            counts[2] += _minor_faults(proc.pid)
        except (psutil.NoSuchProcess, FileNotFoundError):
            continue
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("inputs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    config = BenchConfig(inputs=args.inputs)
    docs = collect_documents(config)
    with warm_stack(docs, "usersys", timeout_s=config.timeout_s) as (bucket, _):
        harness = psutil.Process().pid
        for index in range(args.rounds):
            before = _snapshot(harness)
            await_jobs(bucket, submit(bucket, f"r{index}", docs), config.timeout_s)
            after = _snapshot(harness)
            spent = {}
            for role, now in after.items():
                was = before.get(role, [0.0] * 3)
                spent[role] = [round(a - b, 3) for a, b in zip(now, was, strict=True)]
            print(json.dumps(spent), flush=True)


if __name__ == "__main__":
    main()
