"""The embedded server's CPU per request kind: each request's ``run_wsgi`` on its thread's CPU
clock, over 3 runs of 300 rounds of a 20 KB PUT with metadata and If-None-Match, a HEAD, a 2 KB
GET and (every fifth round) a LIST; prints ms per request of each kind, one line a run.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session16/server_cpu_by_kind.py
"""

from __future__ import annotations

import collections
import time

from embedded import server
from pagefleet import aws
from pagefleet.settings import load_settings

CPU: collections.defaultdict[str, float] = collections.defaultdict(float)
COUNT: collections.Counter[str] = collections.Counter()
_run_wsgi = server._KeepAliveHandler.run_wsgi


def _timed(self: server._KeepAliveHandler) -> None:
    kind = self.command + (" list" if "list-type" in self.path else "")
    started = time.thread_time()
    _run_wsgi(self)
    CPU[kind] += time.thread_time() - started
    COUNT[kind] += 1


server._KeepAliveHandler.run_wsgi = _timed  # type: ignore[method-assign]


def main() -> None:
    moto = server.MotoServer()
    settings = load_settings(endpoint_url=moto.start(), bucket="micro", queue_prefix="micro")
    s3 = aws.client("s3", settings)
    s3.create_bucket(Bucket="micro")
    for k in range(30):
        s3.put_object(Bucket="micro", Key=f"w/{k}", Body=b"x" * 2000)
    for run in range(3):
        CPU.clear()
        COUNT.clear()
        for k in range(300):
            s3.put_object(
                Bucket="micro",
                Key=f"o/{run}/{k}",
                Body=b"y" * 20000,
                Metadata={"pagefleet-job": "j", "pagefleet-key": "k"},
                IfNoneMatch="*",
                ContentType="application/octet-stream",
            )
            s3.head_object(Bucket="micro", Key=f"o/{run}/{k}")
            s3.get_object(Bucket="micro", Key=f"w/{k % 30}")["Body"].read()
            if k % 5 == 0:
                s3.list_objects_v2(Bucket="micro", Prefix="w/1")
        print(" ".join(f"{kind} {CPU[kind] / COUNT[kind] * 1000:.3f}" for kind in sorted(CPU)))


if __name__ == "__main__":
    main()
