"""Server CPU of a listing by the number of keys it returns, and of a HEAD, on one embedded
server; run it from each tree to compare.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-stack-session15/listing_server_cpu.py

Each request's ``run_wsgi`` timed on its thread's CPU clock (the request line and header
parsing before it are not counted), 100 listings of a folder of 0-40 records, one level deep
(as pagefleet.submission's record watcher lists), and 100 HEADs. Client CPU is the calling
thread's.
"""

from __future__ import annotations

import time

from embedded import server
from pagefleet import aws
from pagefleet.settings import load_settings

CPU = [0.0]
_run_wsgi = server._KeepAliveHandler.run_wsgi


def _timed(self: server._KeepAliveHandler) -> None:
    started = time.thread_time()
    _run_wsgi(self)
    CPU[0] += time.thread_time() - started


server._KeepAliveHandler.run_wsgi = _timed  # type: ignore[method-assign]


def main() -> None:
    moto = server.MotoServer()
    settings = load_settings(endpoint_url=moto.start(), bucket="micro", queue_prefix="micro")
    aws.use_fake_credentials()
    s3 = aws.client("s3", settings)
    s3.create_bucket(Bucket="micro")
    s3.put_bucket_versioning(Bucket="micro", VersioningConfiguration={"Status": "Enabled"})
    for n in (0, 1, 10, 25, 40):
        for k in range(n):
            s3.put_object(Bucket="micro", Key=f"l{n}/doc{k}.json", Body=b"x")
        s3.list_objects_v2(Bucket="micro", Prefix=f"l{n}/", Delimiter="/")
        CPU[0], client = 0.0, time.thread_time()
        for _ in range(100):
            s3.list_objects_v2(Bucket="micro", Prefix=f"l{n}/", Delimiter="/")
        client = (time.thread_time() - client) * 10
        print(f"LIST of {n} keys: server {CPU[0] * 10:.2f} ms, client {client:.2f} ms")
    CPU[0] = 0.0
    for _ in range(100):
        s3.head_object(Bucket="micro", Key="l1/doc0.json")
    print(f"HEAD: server {CPU[0] * 10:.2f} ms")
    moto.stop()


if __name__ == "__main__":
    main()
