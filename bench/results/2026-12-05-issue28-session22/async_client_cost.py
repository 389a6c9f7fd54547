"""CPU of one aiobotocore client made by ``pagefleet.aws.async_client`` and used once (its
first request, where aiobotocore builds the connection's TLS context), against an embedded
server in this process (its CPU counted too), the mean of 5:

    PYTHONPATH=TREE .venv/bin/python \
        bench/results/2026-12-05-issue28-session22/async_client_cost.py
"""

from __future__ import annotations

import asyncio
import time

from embedded.server import MotoServer
from pagefleet import aws
from pagefleet.settings import load_settings

CLIENTS = 5


async def clients(url: str) -> float:
    settings = load_settings(endpoint_url=url, bucket="async-client-cost")
    started = time.process_time()
    for _ in range(CLIENTS):
        async with aws.async_client("sqs", settings) as sqs:
            await sqs.list_queues()
    return (time.process_time() - started) / CLIENTS


if __name__ == "__main__":
    server = MotoServer()
    aws.use_fake_credentials()
    try:
        each = asyncio.run(clients(server.start()))
    finally:
        server.stop()
    print(f"an async client and its first request: {1000 * each:.1f} ms of CPU")
