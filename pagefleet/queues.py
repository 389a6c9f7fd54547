"""SQS access: batched sends for the handlers, a lease-aware client for the runner."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from pagefleet.aws import transient_retry
from pagefleet.models import ChunkDelivery, ChunkMessage

log = logging.getLogger(__name__)

SQS_BATCH = 10  # SendMessageBatch and ReceiveMessage take at most 10 messages


def queue_name(prefix: str, role: str) -> str:
    """``<prefix>-<role>``: the one naming rule the local stack, Terraform and clients share."""
    return f"{prefix}-{role}"


class QueueError(Exception):
    """SQS refused some messages of a batch for a reason retrying will not fix."""


class Queue:
    """One queue through a boto3 SQS client."""

    def __init__(self, sqs: Any, url: str) -> None:
        self.sqs = sqs
        self.url = url

    @classmethod
    def named(cls, sqs: Any, name: str) -> Queue:
        return cls(sqs, _get_url(sqs, name))

    def send_all(self, bodies: Sequence[str]) -> None:
        for start in range(0, len(bodies), SQS_BATCH):
            self._send_batch({str(i): b for i, b in enumerate(bodies[start : start + SQS_BATCH])})

    def _send_batch(self, entries: dict[str, str]) -> None:
        # SendMessageBatch can accept some entries and refuse others; resend only the refused
        # ones when the fault is SQS's, give up at once when it is ours.
        for _ in range(5):
            failed = self._send(entries).get("Failed", [])
            if not failed:
                return
            if any(f.get("SenderFault") for f in failed):
                raise QueueError(f"SQS refused messages: {failed}")
            entries = {f["Id"]: entries[f["Id"]] for f in failed}
        raise QueueError(f"SQS kept refusing {len(entries)} messages")

    @transient_retry
    def _send(self, entries: dict[str, str]) -> dict[str, Any]:
        return self.sqs.send_message_batch(
            QueueUrl=self.url,
            Entries=[{"Id": i, "MessageBody": body} for i, body in entries.items()],
        )


@transient_retry
def _get_url(sqs: Any, name: str) -> str:
    return sqs.get_queue_url(QueueName=name)["QueueUrl"]


class AsyncQueue:
    """The chunks queue as the runner uses it: long poll, lease extension, delete."""

    def __init__(self, sqs: Any, url: str) -> None:
        self.sqs = sqs
        self.url = url

    @classmethod
    async def named(cls, sqs: Any, name: str) -> AsyncQueue:
        response = await sqs.get_queue_url(QueueName=name)
        return cls(sqs, response["QueueUrl"])

    @transient_retry
    async def receive(
        self, *, wait_s: int, visibility_s: int, max_messages: int = 1
    ) -> list[ChunkDelivery]:
        """Chunk messages, leased for ``visibility_s``; empty when the queue had none for
        ``wait_s``. A body that is no chunk message is logged and left alone: it comes back, and
        after the queue's maxReceiveCount it lands in the DLQ."""
        while True:
            response = await self.sqs.receive_message(
                QueueUrl=self.url,
                MaxNumberOfMessages=max_messages,
                WaitTimeSeconds=wait_s,
                VisibilityTimeout=visibility_s,
                MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp"],
            )
            received = response.get("Messages", [])
            deliveries = [d for d in map(_chunk_delivery, received) if d is not None]
            # Only bad bodies: poll again, so that an empty answer still means an empty queue
            # (a burst worker stops on it).
            if deliveries or not received:
                return deliveries

    @transient_retry
    async def extend(self, receipt: str, visibility_s: int) -> None:
        await self.sqs.change_message_visibility(
            QueueUrl=self.url, ReceiptHandle=receipt, VisibilityTimeout=visibility_s
        )

    @transient_retry
    async def delete(self, receipt: str) -> None:
        await self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=receipt)


def _chunk_delivery(raw: dict[str, Any]) -> ChunkDelivery | None:
    try:
        message = ChunkMessage.model_validate_json(raw["Body"])
    except ValidationError as exc:
        log.error("not a chunk message, left for the DLQ: %s: %s", raw["MessageId"], exc)
        return None
    return ChunkDelivery(
        receipt=raw["ReceiptHandle"],
        message=message,
        receive_count=int(raw.get("Attributes", {}).get("ApproximateReceiveCount", "1")),
    )
