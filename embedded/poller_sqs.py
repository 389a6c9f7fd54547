"""The SQS client of the local Lambda pollers (:mod:`embedded.dispatch`): this process's moto,
called directly rather than over HTTP.

On AWS, Lambda's event source mappings poll SQS on Lambda's own hosts: their requests cost the
deployment nothing. Here each poll and each batch's delete was a request to the server in this
process, ~2 ms of CPU between botocore and moto for a message or two: 122 of the ~955 requests
of a corpus round. The handlers and the runner still speak the wire protocol (rule 6); only the
emulator's stand-in for Lambda skips it. What it gets is what botocore parses from moto's reply
(moto 5.2.5, moto/sqs/responses.py ``receive_message`` and ``delete_message_batch``):
tests/test_poller_sqs.py holds the two side by side, and tests/test_dispatch.py runs the
pollers over both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import moto.sqs.models
from moto.sqs.models import Message, SQSBackend


class PollerSQS:
    """``receive_message`` and ``delete_message_batch`` of a boto3 SQS client, for queues of
    this process's moto in ``region`` (embedded.server.MotoServer serves them)."""

    def __init__(self, region: str) -> None:
        self.region = region

    def _queue(self, url: str) -> tuple[SQSBackend, str]:
        account, name = url.rstrip("/").split("/")[-2:]
        return moto.sqs.models.sqs_backends[account][self.region], name

    def receive_message(
        self,
        *,
        QueueUrl: str,
        MaxNumberOfMessages: int = 1,
        WaitTimeSeconds: int = 0,
        MessageSystemAttributeNames: Sequence[str] = (),
        MessageAttributeNames: Sequence[str] = (),
    ) -> dict[str, Any]:
        backend, name = self._queue(QueueUrl)
        messages = backend.receive_message(
            name,
            MaxNumberOfMessages,
            WaitTimeSeconds,
            int(backend.get_queue(name).visibility_timeout),  # type: ignore[attr-defined]
            list(MessageAttributeNames),
        )
        names = set(MessageSystemAttributeNames)
        return {"Messages": [_received(m, names) for m in messages]} if messages else {}

    def delete_message_batch(
        self, *, QueueUrl: str, Entries: Iterable[Mapping[str, str]]
    ) -> dict[str, Any]:
        backend, name = self._queue(QueueUrl)
        deleted, failed = backend.delete_message_batch(name, [dict(e) for e in Entries])
        return {"Successful": [{"Id": i} for i in deleted], "Failed": failed}


def _received(message: Message, names: set[str]) -> dict[str, Any]:
    """One message of ReceiveMessage's reply, as moto writes it and botocore reads it back,
    with the system attributes ``names`` asks for ("All": every one moto answers with)."""
    received: dict[str, Any] = {
        "MessageId": message.id,
        "ReceiptHandle": message.receipt_handle,
        "MD5OfBody": message.body_md5,
        "Body": message.body,
    }
    if message.message_attributes:
        received["MessageAttributes"] = message.message_attributes
        received["MD5OfMessageAttributes"] = message.attribute_md5
    trace = (message.system_attributes or {}).get("AWSTraceHeader", {}).get("StringValue")
    values = {  # every system attribute moto answers with, in its order
        "AWSTraceHeader": trace,
        "ApproximateFirstReceiveTimestamp": str(message.approximate_first_receive_timestamp),
        "ApproximateReceiveCount": str(message.approximate_receive_count),
        "MessageDeduplicationId": message.deduplication_id,
        "MessageGroupId": message.group_id,
        "SenderId": message.sender_id,
        "SentTimestamp": str(message.sent_timestamp),
        "SequenceNumber": message.sequence_number,
    }
    wanted = {a: v for a, v in values.items() if "All" in names or a in names}
    if wanted:  # moto leaves the ones a message does not have out, not the field
        received["Attributes"] = {a: v for a, v in wanted.items() if v is not None}
    return received
