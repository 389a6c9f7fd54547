"""The embedded server's CPU for a PUT and a GET of one object, by the object's size.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session21/put_cpu.py

One embedded server in this process, one boto3 client (pagefleet.aws's) on the main thread.
Each size is written 60 times and read 60 times, three passes; the server's CPU of each request
is its handler thread's CPU clock around the request (``run_wsgi``), the client's its own
thread's. Prints the median pass for each size.
"""

from __future__ import annotations

import os
import statistics
import time

from embedded import server
from pagefleet import aws
from pagefleet.settings import load_settings

SIZES = (20_000, 1_000_000)
REQUESTS = 60
PASSES = 3
_served: list[float] = []
_run_wsgi = server._KeepAliveHandler.run_wsgi


def _timed(self: server._KeepAliveHandler) -> None:
    started = time.thread_time()
    try:
        _run_wsgi(self)
    finally:
        _served.append(time.thread_time() - started)


server._KeepAliveHandler.run_wsgi = _timed  # type: ignore[method-assign]


def _pass(s3: object, bucket: str, size: int, index: int) -> tuple[float, float, float, float]:
    """(server PUT, client PUT, server GET, client GET) ms a request."""
    body = os.urandom(size)
    _served.clear()
    started = time.thread_time()
    for i in range(REQUESTS):
        s3.put_object(Bucket=bucket, Key=f"{size}/{index}/{i}", Body=body)  # type: ignore[attr-defined]
    put_client = time.thread_time() - started
    put_server = sum(_served)
    _served.clear()
    started = time.thread_time()
    for i in range(REQUESTS):
        s3.get_object(Bucket=bucket, Key=f"{size}/{index}/{i}")["Body"].read()  # type: ignore[attr-defined]
    get_client = time.thread_time() - started
    get_server = sum(_served)
    return tuple(1000 * t / REQUESTS for t in (put_server, put_client, get_server, get_client))  # type: ignore[return-value]


def main() -> None:
    moto = server.MotoServer()
    moto.start()
    try:
        aws.use_fake_credentials()
        bucket = "put-cpu"
        s3 = aws.client("s3", load_settings(endpoint_url=moto.url, bucket=bucket))
        s3.create_bucket(Bucket=bucket)
        _pass(s3, bucket, SIZES[0], -1)  # warm-up
        for size in SIZES:
            passes = [_pass(s3, bucket, size, i) for i in range(PASSES)]
            put_s, put_c, get_s, get_c = (statistics.median(p[k] for p in passes) for k in range(4))
            print(
                f"{size:>9} bytes: PUT server {put_s:.3f} ms, client {put_c:.3f} ms;"
                f" GET server {get_s:.3f} ms, client {get_c:.3f} ms"
            )
    finally:
        moto.stop()


if __name__ == "__main__":
    main()
