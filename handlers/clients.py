"""What the handlers share: settings and clients, built once per endpoint and reused across the
invocations a warm execution environment runs (a Lambda's, or an embedded stack environment
process's), and across the threads one invocation reads with."""

from __future__ import annotations

import os
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from pagefleet import aws
from pagefleet.job_events import Announce, JobEvent, JobEvents
from pagefleet.queues import Queue, queue_name
from pagefleet.settings import Settings
from pagefleet.storage import Bucket

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient


_PREFIX = Settings.model_config.get("env_prefix", "").upper()


def settings() -> Settings:
    """The function's settings. A warm environment's ``PAGEFLEET_*`` variables stay as they
    were between invocations, so the settings are built once per set of them: building them
    (pydantic-settings reads every variable of the environment and validates each field) took
    ~1-3 ms of CPU a record, as much as a request."""
    return _settings(
        tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(_PREFIX)))
    )


@lru_cache(maxsize=8)  # keyed by the variables: a test that sets others gets its own
def _settings(variables: tuple[tuple[str, str], ...]) -> Settings:
    return Settings()


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


def announcer(settings: Settings, logger: Logger, metrics: Metrics) -> Announce:
    """A job's end as a log line of the function that ended it, and an event where ``settings``
    send them; an event that could not go is counted (``JobEventsFailed``) and never fails the
    message: the job is published, and a retry would find it so and announce nothing."""

    def announce(event: JobEvent) -> None:
        logger.info("job finished", extra={"job_event": event.model_dump(mode="json")})
        # Once per job, by the function that ended it: the dashboard's jobs by status.
        metrics.add_metric(name=f"Jobs_{event.status}", unit=MetricUnit.Count, value=1)
        for _ in job_events(settings).send(event):
            metrics.add_metric(name="JobEventsFailed", unit=MetricUnit.Count, value=1)

    return announce


def bucket(settings: Settings, name: str | None = None) -> Bucket:
    return Bucket(_s3(settings.endpoint_url, settings.region), name or settings.bucket)


@cache
def _queue(role: str, prefix: str, endpoint_url: str | None, region: str) -> Queue:
    return Queue.named(_sqs(endpoint_url, region), queue_name(prefix, role))


def queue(settings: Settings, role: str) -> Queue:
    return _queue(role, settings.queue_prefix, settings.endpoint_url, settings.region)
