"""CPU a request costs the embedded server and its clients, each measured in a process of its
own so that neither's CPU lands on the other's clock.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session24/request_costs.py \
        server|boto3|aiobotocore|parts [--rounds 3]

- ``server``: the embedded moto server (embedded/server.py) in this process, a boto3 client in
  a child process making a corpus round's mix (150 20 kB PUTs; 50 GETs and 50 HEADs; 20 prefix
  listings; 30 SQS send, receive and delete): the server threads' CPU (``thread_time``) a
  request, split into the WSGI application (moto's views, the reply) and the rest (http.server
  reading the request, the environ, writing the reply).
- ``boto3`` / ``aiobotocore``: pagefleet's own clients (pagefleet.aws) making that mix against a
  server in a child process: this process's CPU a request.
- ``parts``: two pieces of moto's request cycle alone, per request: werkzeug's Response built
  and iterated for a reply, and ``Request.raw_url`` read three times against once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

BODY = os.urandom(20_000)
BUCKET = "request-costs"
# The mix of one round: (PUTs, GETs and HEADs each, listings, SQS send-receive-delete triples).
PUTS, READS, LISTINGS, MESSAGES = 150, 50, 20, 30
REQUESTS = PUTS + 2 * READS + LISTINGS + 3 * MESSAGES


def _sync_round(s3: Any, sqs: Any, queue: str, tag: str) -> None:
    for i in range(PUTS):
        s3.put_object(Bucket=BUCKET, Key=f"outbox/{tag}/a{i}.png", Body=BODY)
    for i in range(READS):
        s3.get_object(Bucket=BUCKET, Key=f"outbox/{tag}/a{i}.png")["Body"].read()
        s3.head_object(Bucket=BUCKET, Key=f"outbox/{tag}/a{i}.png")
    for _ in range(LISTINGS):
        s3.list_objects_v2(Bucket=BUCKET, Prefix=f"outbox/{tag}/a1")
    for _ in range(MESSAGES):
        sqs.send_message_batch(QueueUrl=queue, Entries=[{"Id": "1", "MessageBody": "x" * 300}])
        got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1, WaitTimeSeconds=0)
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=got["Messages"][0]["ReceiptHandle"])


async def _async_round(s3: Any, sqs: Any, queue: str, tag: str) -> None:
    for i in range(PUTS):
        await s3.put_object(Bucket=BUCKET, Key=f"outbox/{tag}/a{i}.png", Body=BODY)
    for i in range(READS):
        got = await s3.get_object(Bucket=BUCKET, Key=f"outbox/{tag}/a{i}.png")
        async with got["Body"] as body:
            await body.read()
        await s3.head_object(Bucket=BUCKET, Key=f"outbox/{tag}/a{i}.png")
    for _ in range(LISTINGS):
        await s3.list_objects_v2(Bucket=BUCKET, Prefix=f"outbox/{tag}/a1")
    for _ in range(MESSAGES):
        entries = [{"Id": "1", "MessageBody": "x" * 300}]
        await sqs.send_message_batch(QueueUrl=queue, Entries=entries)
        got = await sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=1, WaitTimeSeconds=0)
        await sqs.delete_message(QueueUrl=queue, ReceiptHandle=got["Messages"][0]["ReceiptHandle"])


def _settings(url: str) -> Any:
    from pagefleet import aws
    from pagefleet.settings import Settings

    aws.use_fake_credentials()
    return Settings(endpoint_url=url, region="us-east-1")


def _client_round(url: str, tag: str) -> None:
    """One round from a child process (the ``server`` measurement's client)."""
    from pagefleet import aws

    settings = _settings(url)
    s3, sqs = aws.client("s3", settings), aws.client("sqs", settings)
    _sync_round(s3, sqs, sqs.get_queue_url(QueueName="costs")["QueueUrl"], tag)


def _serve() -> None:
    """A server for the client measurements: prints its URL, serves until killed."""
    from embedded.server import MotoServer

    print(MotoServer().start(), flush=True)
    threading.Event().wait()


def server(rounds: int) -> None:
    import boto3
    from botocore.config import Config

    import embedded.server as es

    spent = {"request": 0.0, "app": 0.0}
    lock = threading.Lock()
    handle, app_call = es._KeepAliveHandler.handle_one_request, es._HostCachingDispatcher.__call__

    def timed(key: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            started = time.thread_time()
            try:
                return call(*args)
            finally:
                with lock:
                    spent[key] += time.thread_time() - started

        return wrapper

    es._KeepAliveHandler.handle_one_request = timed("request", handle)  # type: ignore[method-assign]
    es._HostCachingDispatcher.__call__ = timed("app", app_call)  # type: ignore[method-assign]
    url = es.MotoServer().start()
    settings = _settings(url)
    config = Config(s3={"addressing_style": "path"})
    boto3.client("s3", endpoint_url=url, region_name=settings.region, config=config).create_bucket(
        Bucket=BUCKET
    )
    boto3.client("sqs", endpoint_url=url, region_name=settings.region).create_queue(
        QueueName="costs"
    )
    for index in range(rounds + 1):  # the first warms the server
        spent.update(request=0.0, app=0.0)
        subprocess.run([sys.executable, __file__, "client-round", url, f"r{index}"], check=True)
        if index:
            request, app = (1000 * spent[k] / REQUESTS for k in ("request", "app"))
            print(f"server: {request:.3f} ms a request, {app:.3f} of it the application")


def clients(kind: str, rounds: int) -> None:
    child = subprocess.Popen([sys.executable, __file__, "serve"], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    url = child.stdout.readline().strip()
    try:
        if kind == "boto3":
            _boto3_rounds(url, rounds)
        else:
            asyncio.run(_aiobotocore_rounds(url, rounds))
    finally:
        child.kill()


def _boto3_rounds(url: str, rounds: int) -> None:
    from pagefleet import aws

    settings = _settings(url)
    s3, sqs = aws.client("s3", settings), aws.client("sqs", settings)
    s3.create_bucket(Bucket=BUCKET)
    queue = sqs.create_queue(QueueName="costs")["QueueUrl"]
    for index in range(rounds + 1):
        started = time.process_time()
        _sync_round(s3, sqs, queue, f"r{index}")
        if index:
            print(f"boto3: {1000 * (time.process_time() - started) / REQUESTS:.3f} ms a request")


async def _aiobotocore_rounds(url: str, rounds: int) -> None:
    from pagefleet import aws

    settings = _settings(url)
    async with aws.async_client("s3", settings) as s3, aws.async_client("sqs", settings) as sqs:
        await s3.create_bucket(Bucket=BUCKET)
        queue = (await sqs.create_queue(QueueName="costs"))["QueueUrl"]
        for index in range(rounds + 1):
            started = time.process_time()
            await _async_round(s3, sqs, queue, f"r{index}")
            if index:
                spent = 1000 * (time.process_time() - started) / REQUESTS
                print(f"aiobotocore: {spent:.3f} ms a request")


def parts(rounds: int) -> None:
    from flask import Flask
    from moto.core.request import Request

    app = Flask(__name__)
    environ = {
        "REQUEST_METHOD": "PUT",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "5000",
        "HTTP_HOST": "127.0.0.1:5000",
        "wsgi.url_scheme": "http",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/bucket/outbox/a.png",
        "RAW_URI": "/bucket/outbox/a.png",
        "QUERY_STRING": "",
    }
    # What moto's S3 answers a PUT with (moto/s3/responses.py, _key_response_put).
    headers = {
        "ETag": '"9a0364b9e99bb480dd25e1f0284c8555"',
        "last-modified": "Sat, 05 Dec 2026 10:00:00 GMT",
        "content-type": "binary/octet-stream",
        "x-amz-checksum-crc32": "AAAAAA==",
    }

    def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
        return len  # a write() callable; these replies never call it

    def response() -> None:
        reply = app.response_class(response="", status=200, headers=headers)
        b"".join(reply(environ, start_response))

    def raw_url(times: int) -> Callable[[], None]:
        def read() -> None:
            request = Request(environ)
            for _ in range(times):
                _ = request.raw_url

        return read

    n = 20_000
    for _ in range(rounds):
        for name, call in (
            ("werkzeug Response", response),
            ("raw_url x3", raw_url(3)),
            ("raw_url x1", raw_url(1)),
        ):
            started = time.process_time()
            for _ in range(n):
                call()
            print(f"{name}: {1e6 * (time.process_time() - started) / n:.1f} us a request")


def main() -> None:
    if sys.argv[1:2] == ["client-round"]:
        _client_round(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1:2] == ["serve"]:
        _serve()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["server", "boto3", "aiobotocore", "parts"])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.what == "server":
        server(args.rounds)
    elif args.what == "parts":
        parts(args.rounds)
    else:
        clients(args.what, args.rounds)


if __name__ == "__main__":
    main()
