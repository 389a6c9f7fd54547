"""CPU of making the worker's two aiobotocore clients from two sessions (as
``pagefleet.aws.async_client`` makes them, one session a call) or from one.

    for i in 1 2 3; do for m in one two; do
        PYTHONPATH=. .venv/bin/python \
            bench/results/2026-12-05-issue28-worker-session16/one_session_cpu.py $m
    done; done

A measurement for ``pagefleet/aws.py`` (not this session's file): the clients are made and
closed without a request (the endpoint is never reached), after ``runner.worker`` is imported,
so the number is the clients' alone.
"""

from __future__ import annotations

import asyncio
import sys
import time

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session

import runner.worker  # noqa: F401  (imported first, as in the worker)
from pagefleet.aws import _config, _prepared, async_client
from pagefleet.settings import Settings

SETTINGS = Settings(endpoint_url="http://127.0.0.1:1")


async def two_sessions() -> None:
    async with async_client("s3", SETTINGS), async_client("sqs", SETTINGS):
        pass


async def one_session() -> None:
    session, config = _prepared(get_session()), _config(AioConfig)
    region, endpoint = SETTINGS.region, SETTINGS.endpoint_url
    async with (
        session.create_client("s3", region_name=region, endpoint_url=endpoint, config=config),
        session.create_client("sqs", region_name=region, endpoint_url=endpoint, config=config),
    ):
        pass


if __name__ == "__main__":
    started = time.process_time()
    asyncio.run(one_session() if sys.argv[1] == "one" else two_sessions())
    print(sys.argv[1], round(time.process_time() - started, 3))
