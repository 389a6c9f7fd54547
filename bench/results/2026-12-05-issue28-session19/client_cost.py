"""What a boto3 S3 call costs its caller's thread (CPU) against the embedded moto server.

PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session19/client_cost.py
"""

import os
import time
from collections.abc import Callable

from embedded.server import MotoServer
from pagefleet import aws
from pagefleet.settings import load_settings

BUCKET = "cost-bucket"


def timed(label: str, call: Callable[[int], object], n: int = 300) -> None:
    for i in range(20):
        call(i)
    cpu, wall = time.thread_time(), time.perf_counter()
    for i in range(n):
        call(i)
    cpu_ms = 1000 * (time.thread_time() - cpu) / n
    wall_ms = 1000 * (time.perf_counter() - wall) / n
    print(f"{label:5} client {cpu_ms:.2f} ms CPU, wall {wall_ms:.2f} ms")


def main() -> None:
    server = MotoServer()
    server.start()
    aws.use_fake_credentials()
    s3 = aws.client("s3", load_settings(endpoint_url=server.url, bucket=BUCKET))
    s3.create_bucket(Bucket=BUCKET)
    body = os.urandom(20000)  # a picture of the corpus's median size
    for _ in range(2):
        timed("put", lambda i: s3.put_object(Bucket=BUCKET, Key=f"k/{i}", Body=body))
        timed("get", lambda i: s3.get_object(Bucket=BUCKET, Key=f"k/{i}")["Body"].read())
        timed("head", lambda i: s3.head_object(Bucket=BUCKET, Key=f"k/{i}"))
        timed("list", lambda i: s3.list_objects_v2(Bucket=BUCKET, Prefix=f"k/{i}"))
    server.stop()


if __name__ == "__main__":
    main()
