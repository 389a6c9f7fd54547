"""Dead-lettered messages back to their source queues, once whatever failed them is fixed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pagefleet.queues import move_messages, queue_depth, start_move_task
from pagefleet.settings import Settings
from pagefleet.stack import queue_specs

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


def redrive(sqs: SQSClient, settings: Settings, roles: list[str] | None = None) -> dict[str, int]:
    """Move the messages of each DLQ (of ``roles``, default all) back to its source queue;
    returns how many each held.

    On AWS, SQS's message move task does it server-side (and asynchronously: the count is the
    DLQ's depth when it started). An endpoint of our own (moto) lacks that API, so there the
    messages are moved through this client.
    """
    moved = {}
    for spec in queue_specs(settings):
        if roles is not None and spec.role not in roles:
            continue
        source = sqs.get_queue_url(QueueName=spec.name(settings.queue_prefix))["QueueUrl"]
        dead = sqs.get_queue_url(QueueName=spec.dlq_name(settings.queue_prefix))["QueueUrl"]
        if settings.endpoint_url is None:
            moved[spec.role] = queue_depth(sqs, dead).visible
            if moved[spec.role]:
                start_move_task(sqs, dead, source)
        else:
            moved[spec.role] = move_messages(sqs, dead, source)
    return moved
