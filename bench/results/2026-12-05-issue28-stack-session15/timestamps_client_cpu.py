"""Client CPU of a LIST of 25 keys, a HEAD and a GET, botocore's timestamp parsing against
pagefleet.aws's (each distinct value parsed once), in one process against one embedded server.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-stack-session15/timestamps_client_cpu.py

Two boto3 clients with the same configuration: one from a plain boto3 session (botocore's
parser), one from ``pagefleet.aws.client``; 150 rounds each, alternated five times, the
calling thread's CPU clock (the server's threads are not counted).
"""

from __future__ import annotations

import time

import boto3
from botocore.config import Config

from embedded import server
from pagefleet import aws
from pagefleet.settings import load_settings


def main() -> None:
    moto = server.MotoServer()
    settings = load_settings(endpoint_url=moto.start(), bucket="micro", queue_prefix="micro")
    aws.use_fake_credentials()
    ours = aws.client("s3", settings)
    plain = boto3.session.Session().client(
        "s3", region_name=settings.region, endpoint_url=settings.endpoint_url,
        config=aws._config(Config),
    )  # fmt: skip
    ours.create_bucket(Bucket="micro")
    for k in range(25):
        ours.put_object(Bucket="micro", Key=f"jobs/x/results/{k}", Body=b"x" * 2000)

    def rounds(s3: object, n: int) -> float:
        started = time.thread_time()
        for k in range(n):
            s3.list_objects_v2(Bucket="micro", Prefix="jobs/x/results/")  # type: ignore[attr-defined]
            s3.head_object(Bucket="micro", Key=f"jobs/x/results/{k % 25}")  # type: ignore[attr-defined]
            s3.get_object(Bucket="micro", Key=f"jobs/x/results/{k % 25}")["Body"].read()  # type: ignore[attr-defined]
        return (time.thread_time() - started) / n * 1000

    rounds(plain, 20), rounds(ours, 20)
    for _ in range(5):
        before, after = rounds(plain, 150), rounds(ours, 150)
        print(f"client CPU a round: botocore's parsing {before:.2f} ms, parsed once {after:.2f} ms")
    moto.stop()


if __name__ == "__main__":
    main()
