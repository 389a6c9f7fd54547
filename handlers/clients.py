"""What the handlers share: settings and clients, built once per endpoint and reused across
invocations of a warm Lambda (and across the local stack's dispatch threads)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pagefleet import aws
from pagefleet.queues import Queue, queue_name
from pagefleet.settings import Settings
from pagefleet.storage import Bucket


@cache
def _client(service: str, endpoint_url: str | None, region: str) -> Any:
    return aws.client(service, Settings(endpoint_url=endpoint_url, region=region))


def bucket(settings: Settings, name: str | None = None) -> Bucket:
    return Bucket(_client("s3", settings.endpoint_url, settings.region), name or settings.bucket)


@cache
def _queue(role: str, prefix: str, endpoint_url: str | None, region: str) -> Queue:
    return Queue.named(_client("sqs", endpoint_url, region), queue_name(prefix, role))


def queue(settings: Settings, role: str) -> Queue:
    return _queue(role, settings.queue_prefix, settings.endpoint_url, settings.region)
