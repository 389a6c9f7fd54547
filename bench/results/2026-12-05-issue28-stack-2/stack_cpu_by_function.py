"""The embedded stack's CPU per corpus round, by role, and the requests moto answered.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-stack-2/stack_cpu_by_function.py \
        /work/shared/corpus/real --rounds 3 [--janitor]

The first folder's script (../2026-12-05-issue28-stack/stack_cpu.py), which this one prints the
same as, plus the Lambda environments' CPU by function (``functions``), read per environment
process with psutil around each round.

One stack (moto, the Lambda environments, ``python -m runner`` with 2 workers), one untimed
warm-up round, then ``--rounds`` rounds of every document at once, each sampled with the
bench's own sampler. Requests are counted at the server by service and action (the counting
wraps the server's request handler in this script only). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import psutil

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.jobs import await_jobs, submit
from bench.pipeline.sampling import ResourceSampler
from embedded import server as embedded_server
from embedded.pipeline import LocalPipeline
from pagefleet.settings import load_settings
from pagefleet.storage import Bucket

REQUESTS: Counter[str] = Counter()
_run_wsgi = embedded_server._KeepAliveHandler.run_wsgi


def _counting(self: embedded_server._KeepAliveHandler) -> None:
    target = self.headers.get("X-Amz-Target")
    if target:
        REQUESTS[f"sqs {target.rsplit('.', 1)[-1]}"] += 1
    else:
        path = self.path.split("?", 1)
        area = path[0].split("/")[2] if path[0].count("/") >= 2 else ""
        query = path[1].split("&")[0].split("=")[0] if len(path) > 1 else ""
        REQUESTS[f"s3 {self.command} {area} {query}".strip()] += 1
    _run_wsgi(self)


embedded_server._KeepAliveHandler.run_wsgi = _counting  # type: ignore[method-assign]


def _function_cpu(pipeline: LocalPipeline) -> dict[str, float]:
    """CPU seconds so far of each function's environment processes, by function."""
    found: dict[str, float] = defaultdict(float)
    assert pipeline.dispatcher is not None  # started
    for name, environments in pipeline.dispatcher.environments().items():
        for environment in environments:
            if environment.proc is None:
                continue
            try:
                times = psutil.Process(environment.proc.pid).cpu_times()
            except psutil.NoSuchProcess:
                continue
            found[name] += times.user + times.system
    return found


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--janitor", action="store_true", help="keep_jobs_s=10, as `pagefleet run`")
    args = p.parse_args()
    config = BenchConfig(inputs=args.inputs)
    docs = collect_documents(config)
    server = embedded_server.MotoServer()
    server.start()
    name = f"cpu-{int(time.time())}"
    settings = load_settings(
        endpoint_url=server.url, bucket=name, queue_prefix=name, workers=args.workers
    )
    pipeline = LocalPipeline(
        settings,
        workers=args.workers,
        server=server,
        keep_jobs_s=10 if args.janitor else None,
    )
    stack = pipeline.start()
    rounds: list[dict[str, Any]] = []
    try:
        pipeline.wait_ready(args.workers)
        bucket = Bucket(stack.s3, pipeline.settings.bucket)
        await_jobs(bucket, submit(bucket, "warmup", docs), config.timeout_s)
        runner = pipeline.runner
        sampler = ResourceSampler(roots=lambda: [runner.pid] if runner is not None else [])
        sampler.start()
        for index in range(args.rounds):
            REQUESTS.clear()
            started = time.perf_counter()
            before = _function_cpu(pipeline)
            with sampler.window() as window:
                await_jobs(bucket, submit(bucket, f"r{index}", docs), config.timeout_s)
            after = _function_cpu(pipeline)
            functions = {n: round(s - before.get(n, 0.0), 3) for n, s in after.items()}
            wall = time.perf_counter() - started
            roles = {role: c.cpu_s for role, c in window[0].by_role().items()}
            split = window[0].harness_split()
            stack_s = (
                sum(s for role, s in roles.items() if role.startswith(("handlers", "worker")))
                + roles.get("supervisor", 0.0)
                + split["moto server (request threads)"]
                + sum(s for n, s in split.items() if n.startswith("dispatch-"))
            )
            rounds.append(
                {
                    "wall_s": round(wall, 2),
                    "roles": roles,
                    "harness": split,
                    "stack_s": round(stack_s, 3),
                    "stack_over_converter": round(stack_s / roles["converter"], 4),
                    "functions": functions,
                    "requests": dict(REQUESTS.most_common()),
                    "requests_total": sum(REQUESTS.values()),
                }
            )
            print(json.dumps(rounds[-1]), flush=True)
        sampler.stop()
    finally:
        pipeline.stop()
        server.stop()
    print(
        json.dumps(
            {
                "median_stack_s": statistics.median(r["stack_s"] for r in rounds),
                "median_converter_s": statistics.median(r["roles"]["converter"] for r in rounds),
                "median_ratio": statistics.median(r["stack_over_converter"] for r in rounds),
                "median_requests": statistics.median(r["requests_total"] for r in rounds),
            }
        )
    )


if __name__ == "__main__":
    main()
