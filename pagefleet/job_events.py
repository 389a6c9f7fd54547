"""Job-end events: each finished job announced once, on an EventBridge bus and to a webhook,
so users chain work on it without polling ``outbox/``.

Who announces: only the completion whose write created the job's record
(:func:`pagefleet.outbox.publish` returns it), so racing twins of one job announce it once.
What is at least once: a PutEvents or POST whose reply was lost is sent again by its retry,
and EventBridge delivers to its targets at least once; consumers dedupe on ``job_id``. What
can be lost: an event that fails every attempt (logged with the whole event, and counted by
the caller: the completion handler's ``JobEventsFailed``), and the event of a completion that
dies between writing the record and sending it (its retry finds the record, and the job
already ended). Sending never fails, delays only within its bounded retries, and never
repeats the job's publication.
"""

from __future__ import annotations

import logging
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from pagefleet.aws import EventsClient, is_transient, retrying
from pagefleet.errors import ErrorCode
from pagefleet.models import JobStatus
from pagefleet.outbox import Published

log = logging.getLogger(__name__)

SOURCE = "pagefleet"
DETAIL_TYPE = "Job finished"
# PutEvents' entry errors worth another try (AWS's docs); any other is the bus refusing it.
_RETRIED_ENTRY_ERRORS = {"InternalFailure", "ThrottlingException"}
# A webhook that does not answer holds the completion: few attempts, each within its timeout.
WEBHOOK_ATTEMPTS = 3


class JobEvent(BaseModel):
    """The event's detail: what a user chains on, as the record says it."""

    model_config = ConfigDict(frozen=True)

    bucket: str
    key: str  # the upload's inbox key
    record: str  # the job record's key (outbox/<name>.json)
    markdown: str | None  # the Markdown's key; None for a failed job
    status: JobStatus
    pages: int
    job_id: str
    error: ErrorCode | None  # the failed job's code
    finished_at: float  # seconds since the epoch, as the record has it

    @classmethod
    def of(cls, published: Published) -> JobEvent:
        record = published.record
        return cls(
            bucket=record.source.bucket,
            key=record.source.key,
            record=published.key,
            markdown=record.markdown,
            status=record.status,
            pages=record.pages,
            job_id=record.job_id,
            error=record.error.code if record.error is not None else None,
            finished_at=record.finished_at,
        )


# What the completion step calls with each job it ended.
Announce = Callable[[JobEvent], None]


class EntryRejected(Exception):
    """PutEvents answered 200 but did not take the entry."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def _put_retryable(exc: BaseException) -> bool:
    return is_transient(exc) or (
        isinstance(exc, EntryRejected) and exc.code in _RETRIED_ENTRY_ERRORS
    )


@retrying(_put_retryable)
def put_event(events: EventsClient, bus: str, event: JobEvent) -> str:
    """Put ``event`` on ``bus``; returns its event id. PutEvents reports a refused entry in a
    200 answer (``FailedEntryCount``), so the answer is read, not just the status."""
    answer = events.put_events(
        Entries=[
            {
                "EventBusName": bus,
                "Source": SOURCE,
                "DetailType": DETAIL_TYPE,
                "Detail": event.model_dump_json(),
                "Time": datetime.fromtimestamp(event.finished_at, UTC),
            }
        ]
    )
    entry = answer["Entries"][0]
    if answer.get("FailedEntryCount") or "EventId" not in entry:
        raise EntryRejected(entry.get("ErrorCode", "unknown"), entry.get("ErrorMessage", ""))
    return str(entry["EventId"])


def _post_retryable(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code == 429 or exc.code >= 500
    return isinstance(exc, OSError)  # refused, reset, timed out (URLError is one)


@retrying(_post_retryable, attempts=WEBHOOK_ATTEMPTS)
def post_event(url: str, event: JobEvent, timeout_s: float) -> None:
    """POST ``event`` as JSON to ``url``: any 2xx takes it; a 429 or 5xx is tried again, any
    other answer is final."""
    request = urllib.request.Request(
        url,
        data=event.model_dump_json().encode(),
        headers={"Content-Type": "application/json", "User-Agent": "pagefleet"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as reply:
        reply.read()


class JobEvents:
    """Where job-end events go: a bus (with its client), a webhook, both or neither."""

    def __init__(
        self,
        events: EventsClient | None = None,
        bus: str | None = None,
        webhook_url: str | None = None,
        webhook_timeout_s: float = 3.0,
    ) -> None:
        self.events = events
        self.bus = bus
        self.webhook_url = webhook_url
        self.webhook_timeout_s = webhook_timeout_s

    def send(self, event: JobEvent) -> list[str]:
        """Send ``event`` everywhere configured; returns where it could not go ("bus",
        "webhook"), each logged with the whole event, to be sent by hand. Never raises."""
        failed: list[tuple[str, Exception]] = []
        if self.events is not None and self.bus is not None:
            try:
                put_event(self.events, self.bus, event)
            except Exception as exc:
                failed.append(("bus", exc))
        if self.webhook_url is not None:
            try:
                post_event(self.webhook_url, event, self.webhook_timeout_s)
            except Exception as exc:
                failed.append(("webhook", exc))
        for sink, cause in failed:
            log.error(
                "job %s: its event did not reach the %s (%r): %s",
                event.job_id,
                sink,
                cause,
                event.model_dump_json(),
            )
        return [sink for sink, _ in failed]
