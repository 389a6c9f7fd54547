"""S3 event notifications, as they reach a handler: the only place that reads their wire format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from aws_lambda_powertools.utilities.data_classes import S3Event

from pagefleet.keys import decode_event_key
from pagefleet.models import Source


def sources_in_sqs_body(body: str) -> Iterator[Source]:
    """The uploads an SQS message from an S3 notification announces (none for a test event)."""
    payload = json.loads(body)
    if payload.get("Event") == "s3:TestEvent":  # sent when a notification is configured
        return
    yield from sources_in_s3_event(payload)


def sources_in_s3_event(payload: dict[str, Any]) -> Iterator[Source]:
    for record in S3Event(payload).records:
        if not record.event_name.startswith("ObjectCreated"):
            continue
        obj = record.s3.get_object
        yield Source(
            bucket=record.s3.bucket.name,
            # S3 form-encodes keys ('+' for space); moto also encodes '/'. Decode once, here.
            key=decode_event_key(obj.key),
            etag=obj.etag or "",
            version_id=obj.version_id or None,
            sequencer=obj.get("sequencer"),  # moto sends none
            event_time=record.event_time,
            size=obj.get("size"),
        )
