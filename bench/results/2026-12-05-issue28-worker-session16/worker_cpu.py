"""The runner workers' own CPU: from exec to their first receive, and per corpus round.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-worker-session16/worker_cpu.py \
        /work/shared/corpus/real --rounds 3 [--workers 2] [--profile DIR]

One embedded stack (moto, the Lambda environments) without a supervisor: this script starts
``--workers`` processes of ``python -m runner.worker`` itself, as the supervisor does (the
settings as environment, a state file each), so each one's CPU is read with psutil from its
exec on, its conversion child's apart (``children``: the converter is not the stack).

- ``startup``: each worker's own CPU when its state file first appears (written once its
  clients are made and it has the queue's URL, just before its first ReceiveMessage), and its
  conversion child's by then.
- ``rounds``: one untimed warm-up round, then ``--rounds`` rounds of every document at once;
  each row is the workers' own CPU over the round (the sum over the processes) and their
  conversion children's, with the chunks the round converted.

``--profile DIR``: each worker runs under cProfile on its main thread's CPU clock
(``time.thread_time``) and writes ``DIR/worker-<pid>.prof`` as it exits (its CPU numbers then
include the profiler's cost; use them for where the CPU goes, not for how much).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.jobs import await_jobs, submit
from embedded.pipeline import LocalPipeline
from embedded.server import MotoServer
from pagefleet.settings import load_settings, settings_env
from pagefleet.storage import Bucket
from runner.worker_state import WorkerState

# Run as ``python -c PROFILED``: the worker's own main() under cProfile on the thread's clock.
PROFILED = """
import cProfile, os, sys, time
from runner.worker import main
profile = cProfile.Profile(time.thread_time)
try:
    profile.runcall(main)
finally:
    profile.dump_stats(os.path.join(sys.argv[1], f"worker-{os.getpid()}.prof"))
"""


def _own_cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def _children_cpu(proc: psutil.Process) -> float:
    total = 0.0
    for child in proc.children(recursive=True):
        try:
            total += _own_cpu(child)
        except psutil.NoSuchProcess:
            continue
    return total


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--profile", type=Path)
    args = p.parse_args()
    config = BenchConfig(inputs=args.inputs)
    docs = collect_documents(config)
    server = MotoServer()
    server.start()
    name = f"wcpu-{int(time.time())}"
    settings = load_settings(
        endpoint_url=server.url, bucket=name, queue_prefix=name, workers=args.workers
    )
    pipeline = LocalPipeline(settings, server=server, start_runners=False)
    stack = pipeline.start()
    states = Path(tempfile.mkdtemp(prefix="wcpu-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        env = {**os.environ, **settings_env(pipeline.settings)}
        command = [sys.executable, "-m", "runner.worker"]
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
            command = [sys.executable, "-c", PROFILED, str(args.profile)]
        for index in range(args.workers):
            state = states / f"worker-{index}.json"
            procs.append(
                subprocess.Popen(
                    command,
                    env={**env, "PAGEFLEET_WORKER_STATE_FILE": str(state)},
                    stderr=subprocess.DEVNULL,
                )
            )
        watched = [psutil.Process(proc.pid) for proc in procs]
        startup: list[dict[str, float]] = [{} for _ in procs]
        while any(not s for s in startup):
            for index, proc in enumerate(watched):
                if not startup[index] and (states / f"worker-{index}.json").exists():
                    startup[index] = {
                        "own_s": round(_own_cpu(proc), 3),
                        "conversion_child_s": round(_children_cpu(proc), 3),
                    }
                assert procs[index].poll() is None, "a worker exited early"
            time.sleep(0.005)
        print(json.dumps({"startup": startup}), flush=True)
        bucket = Bucket(stack.s3, pipeline.settings.bucket)
        await_jobs(bucket, submit(bucket, "warmup", docs), config.timeout_s)
        rounds: list[dict[str, Any]] = []
        for index in range(args.rounds):
            done_before = sum(_chunks_done(states, i) for i in range(len(procs)))
            own = sum(_own_cpu(w) for w in watched)
            children = sum(_children_cpu(w) for w in watched)
            started = time.perf_counter()
            await_jobs(bucket, submit(bucket, f"r{index}", docs), config.timeout_s)
            wall = time.perf_counter() - started
            chunks = sum(_chunks_done(states, i) for i in range(len(procs))) - done_before
            rounds.append(
                {
                    "wall_s": round(wall, 2),
                    "workers_own_s": round(sum(_own_cpu(w) for w in watched) - own, 3),
                    "conversion_children_s": round(
                        sum(_children_cpu(w) for w in watched) - children, 3
                    ),
                    "chunks": chunks,
                    "load": round(os.getloadavg()[0], 1),
                }
            )
            print(json.dumps(rounds[-1]), flush=True)
        print(
            json.dumps(
                {
                    "median_startup_own_s": statistics.median(s["own_s"] for s in startup),
                    "median_round_workers_own_s": statistics.median(
                        r["workers_own_s"] for r in rounds
                    ),
                    "median_ms_per_chunk": round(
                        statistics.median(1000 * r["workers_own_s"] / r["chunks"] for r in rounds),
                        2,
                    ),
                }
            ),
            flush=True,
        )
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(60)
        pipeline.stop()
        server.stop()


def _chunks_done(states: Path, index: int) -> int:
    state = WorkerState.read(states / f"worker-{index}.json")
    return state.chunks_done if state is not None else 0


if __name__ == "__main__":
    main()
