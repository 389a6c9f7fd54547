"""The embedded server's CPU per request kind, on a fixed mix of the stack's S3 and SQS requests.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-stack-3/server_cpu_micro.py

One MotoServer in this process, boto3 clients; each request's ``run_wsgi`` timed on its thread's
CPU clock (the request line and header parsing before it are not counted). 100 rounds of: a
20 KB PUT with metadata and If-None-Match, a HEAD, a 2 KB GET, a prefix LIST of ~11 keys (every
fourth round), an SQS SendMessageBatch, ReceiveMessage and DeleteMessage.
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
    target = (self.headers.get("X-Amz-Target") or "").rsplit(".", 1)[-1]
    kind = f"{self.command}{' list' if 'list-type' in self.path else ''} {target}".strip()
    started = time.thread_time()
    _run_wsgi(self)
    CPU[kind] += time.thread_time() - started
    COUNT[kind] += 1


server._KeepAliveHandler.run_wsgi = _timed  # type: ignore[method-assign]


def main() -> None:
    moto = server.MotoServer()
    settings = load_settings(endpoint_url=moto.start(), bucket="micro", queue_prefix="micro")
    s3, sqs = aws.client("s3", settings), aws.client("sqs", settings)
    s3.create_bucket(Bucket="micro")
    queue = sqs.create_queue(QueueName="micro-q")["QueueUrl"]
    for k in range(300):
        s3.put_object(Bucket="micro", Key=f"jobs/x/{k}", Body=b"x" * 2000)
    CPU.clear()
    COUNT.clear()
    for k in range(100):
        s3.put_object(
            Bucket="micro",
            Key=f"outbox/a/{k}",
            Body=b"y" * 20000,
            Metadata={"pagefleet-job": "j", "pagefleet-key": "k"},
            IfNoneMatch="*",
        )
        s3.head_object(Bucket="micro", Key=f"outbox/a/{k}")
        s3.get_object(Bucket="micro", Key=f"jobs/x/{k}")["Body"].read()
        if k % 4 == 0:
            s3.list_objects_v2(Bucket="micro", Prefix="jobs/x/11")
        sqs.send_message_batch(QueueUrl=queue, Entries=[{"Id": "1", "MessageBody": "m" * 300}])
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        for message in got.get("Messages", []):
            sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    for kind in sorted(COUNT):
        print(f"{kind:24} n={COUNT[kind]:4} {1000 * CPU[kind] / COUNT[kind]:.3f} ms")
    total, n = sum(CPU.values()), sum(COUNT.values())
    print(f"total {total:.3f} s for {n} requests: {1000 * total / n:.3f} ms/request")
    moto.stop()


if __name__ == "__main__":
    main()
