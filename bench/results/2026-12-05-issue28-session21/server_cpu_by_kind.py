"""The embedded server's CPU per request kind, and the bytes each kind carries in, over rounds
of the shared corpus (every document at once, after one untimed warm-up round).

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-session21/server_cpu_by_kind.py ROUNDS

One stack (moto, the Lambda environments, ``python -m runner`` with 2 workers). A request's CPU
is its handler thread's CPU clock around ``run_wsgi``; its kind is the SQS action, or the S3
method, the key's top folder and, under ``jobs/``, the key's kind; ``MB`` counts the request
bodies (Content-Length). Prints, per round, the total and then each kind by CPU.
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.jobs import await_jobs, submit
from bench.pipeline.warm import warm_stack
from embedded import server as embedded_server

CPU: defaultdict[str, float] = defaultdict(float)
COUNT: Counter[str] = Counter()
BYTES: Counter[str] = Counter()
COUNTING = [False]
_run_wsgi = embedded_server._KeepAliveHandler.run_wsgi


def _kind(handler: embedded_server._KeepAliveHandler) -> str:
    target = handler.headers.get("X-Amz-Target")
    if target:
        return f"sqs {target.rsplit('.', 1)[-1]}"
    path, _, query = handler.path.partition("?")
    parts = path.split("/")
    area = parts[2] if len(parts) > 2 else ""
    kind = parts[4] if area == "jobs" and len(parts) > 4 else ""
    action = query.split("&")[0].split("=")[0]
    return " ".join(p for p in ("s3", handler.command, area, kind, action) if p)


def _timed(self: embedded_server._KeepAliveHandler) -> None:
    if not COUNTING[0]:
        _run_wsgi(self)
        return
    kind, started = _kind(self), time.thread_time()
    try:
        _run_wsgi(self)
    finally:
        CPU[kind] += time.thread_time() - started
        COUNT[kind] += 1
        BYTES[kind] += int(self.headers.get("Content-Length") or 0)


embedded_server._KeepAliveHandler.run_wsgi = _timed  # type: ignore[method-assign]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    config = BenchConfig(inputs=[Path("/work/shared/corpus/real")])
    docs = collect_documents(config)
    with warm_stack(docs, "kinds", timeout_s=config.timeout_s) as (bucket, _):
        COUNTING[0] = True
        for index in range(rounds):
            await_jobs(bucket, submit(bucket, f"r{index}", docs), config.timeout_s)
        COUNTING[0] = False
    total = sum(CPU.values())
    print(f"server CPU a round {total / rounds:.3f} s, requests {sum(COUNT.values()) / rounds:.0f}")
    for kind, cpu in sorted(CPU.items(), key=lambda item: -item[1]):
        print(
            f"{kind:34} n={COUNT[kind] / rounds:6.1f} cpu={cpu / rounds:6.3f} s"
            f" each={1000 * cpu / COUNT[kind]:6.3f} ms MB={BYTES[kind] / rounds / 1e6:6.2f}"
        )


if __name__ == "__main__":
    main()
