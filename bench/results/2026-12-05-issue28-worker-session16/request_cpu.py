"""The worker's client CPU per request kind: the requests one chunk makes, against moto.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-worker-session16/request_cpu.py [--chunks 200]

moto serves in this process's own threads; the requests go through the worker's own
``AsyncBucket``/``AsyncQueue`` on aiobotocore clients made by ``pagefleet.aws.async_client``,
and each kind's CPU is the event loop thread's (``time.thread_time``), so the server's is not
in it. Per chunk, as the worker: ReceiveMessage, GET chunk PDF, PUT of the conversions counter
(If-None-Match), GET of the counter, PUT of the result (``--result-kb``), DeleteMessage.
``--user-agent-once``: the clients as ``async_client`` makes them since session 16 (with
``pagefleet.aws.user_agent_once``, first ``runner.worker.user_agent``); without it, as it made
them before.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import defaultdict
from collections.abc import Awaitable
from typing import Any

import boto3

from embedded.server import MotoServer
from pagefleet.aws import async_client
from pagefleet.queues import AsyncQueue
from pagefleet.settings import Settings
from pagefleet.storage import AsyncBucket


async def _timed(spent: dict[str, float], kind: str, call: Awaitable[Any]) -> Any:
    started = time.thread_time()
    try:
        return await call
    finally:
        spent[kind] += time.thread_time() - started


def _plain(service: str, settings: Settings) -> Any:
    """A client as ``async_client`` made it before session 16: without the User-Agent memo."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    from pagefleet.aws import _config, _prepared

    session: Any = _prepared(get_session())  # the service by name: its stubs want a literal
    return session.create_client(
        service,
        region_name=settings.region,
        endpoint_url=settings.endpoint_url,
        config=_config(AioConfig),
    )


async def run(
    settings: Settings, chunks: int, result_kb: int, user_agent_once: bool
) -> dict[str, float]:
    spent: dict[str, float] = defaultdict(float)
    body = json.dumps(
        {"job_id": "j", "bucket": settings.bucket, "chunk": {"index": 0}, "sent_at": 0}
    )
    pdf = os.urandom(60_000)
    result = os.urandom(result_kb * 1024)
    made = async_client if user_agent_once else _plain
    async with made("s3", settings) as s3, made("sqs", settings) as sqs:
        queue = await AsyncQueue.named(sqs, "bench-chunks")
        bucket = AsyncBucket(s3, settings.bucket)
        await bucket.put("chunk.pdf", pdf)
        for index in range(chunks + 10):  # the first 10 warm the connections up
            if index == 10:
                spent.clear()
            await queue.sqs.send_message(QueueUrl=queue.url, MessageBody=body)
            response = await _timed(
                spent,
                "receive",
                queue.sqs.receive_message(QueueUrl=queue.url, WaitTimeSeconds=0),
            )
            receipt = response["Messages"][0]["ReceiptHandle"]
            await _timed(spent, "get chunk pdf", bucket.get("chunk.pdf"))
            await _timed(
                spent,
                "put counter",
                bucket.put(f"conversions/{index}.json", b'{"conversions": 1}', if_none_match=True),
            )
            await _timed(spent, "get counter", bucket.get_tagged(f"conversions/{index}.json"))
            await _timed(spent, "put result", bucket.put(f"results/{index}.json", result))
            await _timed(spent, "delete", queue.delete(receipt))
    return {kind: round(1000 * s / chunks, 3) for kind, s in spent.items()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--chunks", type=int, default=200)
    p.add_argument("--result-kb", type=int, default=100)
    p.add_argument("--user-agent-once", action="store_true")
    args = p.parse_args()
    server = MotoServer()
    url = server.start()
    settings = Settings(endpoint_url=url, bucket="bench-bucket", queue_prefix="bench")
    boto3.client("s3", endpoint_url=url, region_name=settings.region).create_bucket(
        Bucket=settings.bucket
    )
    boto3.client("sqs", endpoint_url=url, region_name=settings.region).create_queue(
        QueueName="bench-chunks"
    )
    try:
        ms = asyncio.run(run(settings, args.chunks, args.result_kb, args.user_agent_once))
    finally:
        server.stop()
    print(json.dumps({"ms_per_chunk": ms, "total_ms": round(sum(ms.values()), 3)}))


if __name__ == "__main__":
    main()
