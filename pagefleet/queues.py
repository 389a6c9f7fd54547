"""SQS access: batched sends for the handlers, a lease-aware client for the runner, and the
operator's view (depths, redrive)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from pydantic import ValidationError

from pagefleet.aws import transient_retry
from pagefleet.models import ChunkDelivery, ChunkMessage

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef, SendMessageBatchResultTypeDef
    from types_aiobotocore_sqs import SQSClient as AsyncSQSClient
    from types_aiobotocore_sqs.type_defs import MessageTypeDef as AsyncMessageTypeDef

log = logging.getLogger(__name__)

SQS_BATCH = 10  # SendMessageBatch and ReceiveMessage take at most 10 messages
# The attempts at a chunk before its message, on a message a release sent (AsyncQueue.release).
PRIOR_ATTEMPTS = "pagefleet-prior-attempts"


def queue_name(prefix: str, role: str) -> str:
    """``<prefix>-<role>``: the one naming rule the local stack, Terraform and clients share."""
    return f"{prefix}-{role}"


class QueueError(Exception):
    """SQS refused some messages of a batch for a reason retrying will not fix."""


class Queue:
    """One queue through a boto3 SQS client."""

    def __init__(self, sqs: SQSClient, url: str) -> None:
        self.sqs = sqs
        self.url = url

    @classmethod
    def named(cls, sqs: SQSClient, name: str) -> Queue:
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
    def _send(self, entries: dict[str, str]) -> SendMessageBatchResultTypeDef:
        return self.sqs.send_message_batch(
            QueueUrl=self.url,
            Entries=[{"Id": i, "MessageBody": body} for i, body in entries.items()],
        )


@transient_retry
def _get_url(sqs: SQSClient, name: str) -> str:
    return sqs.get_queue_url(QueueName=name)["QueueUrl"]


class AsyncQueue:
    """The chunks queue as the runner uses it: long poll, lease extension, delete, and send
    (the halves of a chunk it splits)."""

    def __init__(self, sqs: AsyncSQSClient, url: str) -> None:
        self.sqs = sqs
        self.url = url

    @classmethod
    async def named(cls, sqs: AsyncSQSClient, name: str) -> AsyncQueue:
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
            leased_at = time.monotonic()
            response = await self.sqs.receive_message(
                QueueUrl=self.url,
                MaxNumberOfMessages=max_messages,
                WaitTimeSeconds=wait_s,
                VisibilityTimeout=visibility_s,
                MessageSystemAttributeNames=["ApproximateReceiveCount", "SentTimestamp"],
                MessageAttributeNames=[PRIOR_ATTEMPTS],
            )
            received = response.get("Messages", [])
            deliveries = [d for r in received if (d := _chunk_delivery(r, leased_at))]
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

    @transient_retry
    async def send(self, body: str, *, prior_attempts: int = 0) -> None:
        """One message (a split chunk's half, a released chunk: the runner sends them one at a
        time, not batches); ``prior_attempts``: the attempts at its chunk before it."""
        if not prior_attempts:
            await self.sqs.send_message(QueueUrl=self.url, MessageBody=body)
            return
        await self.sqs.send_message(
            QueueUrl=self.url,
            MessageBody=body,
            MessageAttributes={
                PRIOR_ATTEMPTS: {"DataType": "Number", "StringValue": str(prior_attempts)}
            },
        )

    async def release(self, delivery: ChunkDelivery) -> None:
        """Hand a chunk in hand back at once, without using up one of its attempts: SQS counts
        every receive towards maxReceiveCount, and a release (a drain, a Spot interruption) is
        no attempt. So the chunk is sent again as a new message carrying the attempts so far,
        and the held one deleted. Should the send fail, the lease is ended instead (that
        receive then counts); a delete that fails leaves a twin, which rule 1 allows."""
        try:
            await self.send(
                delivery.message.model_dump_json(), prior_attempts=delivery.attempts - 1
            )
        except Exception:
            log.warning("could not send a released chunk again; ending its lease instead")
            await self.extend(delivery.receipt, 0)
            return
        await self.delete(delivery.receipt)


def _chunk_delivery(raw: AsyncMessageTypeDef, leased_at: float) -> ChunkDelivery | None:
    try:
        message = ChunkMessage.model_validate_json(raw["Body"])
    except ValidationError as exc:
        log.error("not a chunk message, left for the DLQ: %s: %s", raw["MessageId"], exc)
        return None
    attribute = raw.get("MessageAttributes", {}).get(PRIOR_ATTEMPTS)
    prior = attribute.get("StringValue") if attribute is not None else None
    return ChunkDelivery(
        receipt=raw["ReceiptHandle"],
        message=message,
        receive_count=int(raw.get("Attributes", {}).get("ApproximateReceiveCount", "1")),
        prior_attempts=prior_attempts(prior),
        leased_at=leased_at,
    )


def prior_attempts(value: str | None) -> int:
    """The :data:`PRIOR_ATTEMPTS` attribute's value as a count (0 where a message has none)."""
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


class QueueDepth(NamedTuple):
    """What a queue holds: messages waiting, and messages leased to a consumer right now."""

    visible: int
    in_flight: int


@transient_retry
def queue_depth(sqs: SQSClient, url: str) -> QueueDepth:
    attributes = sqs.get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return QueueDepth(
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


@transient_retry
def queue_arn(sqs: SQSClient, url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]


@transient_retry
def start_move_task(sqs: SQSClient, dead_letter_url: str, source_url: str) -> str:
    """SQS's own redrive: move every message of a DLQ back to its source queue, server-side."""
    response = sqs.start_message_move_task(
        SourceArn=queue_arn(sqs, dead_letter_url), DestinationArn=queue_arn(sqs, source_url)
    )
    return str(response["TaskHandle"])


def move_messages(sqs: SQSClient, from_url: str, to_url: str) -> int:
    """Move what ``from_url`` holds now to ``to_url`` through this client: send, then delete
    (a crash between them repeats a message, which every consumer here tolerates: rule 1).
    For endpoints without SQS's message move task (moto)."""
    moved = 0
    while True:
        messages = _receive_batch(sqs, from_url)
        if not messages:
            return moved
        Queue(sqs, to_url).send_all([m["Body"] for m in messages])
        _delete_batch(sqs, from_url, [m["ReceiptHandle"] for m in messages])
        moved += len(messages)


@transient_retry
def _receive_batch(sqs: SQSClient, url: str) -> list[MessageTypeDef]:
    # Leased long enough to send and delete; a short wait ends the loop on an empty queue.
    response = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=SQS_BATCH, WaitTimeSeconds=1, VisibilityTimeout=60
    )
    return list(response.get("Messages", []))


@transient_retry
def _delete_batch(sqs: SQSClient, url: str, receipts: list[str]) -> None:
    sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(i), "ReceiptHandle": r} for i, r in enumerate(receipts)],
    )
