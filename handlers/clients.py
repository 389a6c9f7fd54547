"""What the handlers share: settings and clients, built once per endpoint and reused across the
invocations a warm execution environment runs (a Lambda's, or an embedded stack environment
process's), and across the threads one invocation reads with."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from pagefleet import aws
from pagefleet.job_events import JobEvents
from pagefleet.queues import Queue, queue_name
from pagefleet.settings import Settings
from pagefleet.storage import Bucket

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient


@cache
def _s3(endpoint_url: str | None, region: str) -> S3Client:
    return aws.client("s3", Settings(endpoint_url=endpoint_url, region=region))


@cache
def _sqs(endpoint_url: str | None, region: str) -> SQSClient:
    return aws.client("sqs", Settings(endpoint_url=endpoint_url, region=region))


@cache
def _events(endpoint_url: str | None, region: str) -> aws.EventsClient:
    return aws.client("events", Settings(endpoint_url=endpoint_url, region=region))


def job_events(settings: Settings) -> JobEvents:
    """Where ``settings`` send job-end events (PAGEFLEET_EVENT_BUS, PAGEFLEET_WEBHOOK_URL)."""
    bus = settings.event_bus
    return JobEvents(
        _events(settings.endpoint_url, settings.region) if bus else None,
        bus,
        settings.webhook_url,
        settings.webhook_timeout_s,
    )


def bucket(settings: Settings, name: str | None = None) -> Bucket:
    return Bucket(_s3(settings.endpoint_url, settings.region), name or settings.bucket)


@cache
def _queue(role: str, prefix: str, endpoint_url: str | None, region: str) -> Queue:
    return Queue.named(_sqs(endpoint_url, region), queue_name(prefix, role))


def queue(settings: Settings, role: str) -> Queue:
    return _queue(role, settings.queue_prefix, settings.endpoint_url, settings.region)
