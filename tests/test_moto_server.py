"""The embedded moto server answers as moto does, at a cost that does not grow with the queue
(deliveries from a deep queue), and loses no message to requests that overlap, over HTTP with
boto3."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sqs.models import Message, Queue, sqs_backends

from embedded import MotoServer
from pagefleet.settings import Settings


def _queue(moto_server: MotoServer, settings: Settings, **attributes: str) -> tuple[Any, str]:
    sqs = boto3.client("sqs", endpoint_url=moto_server.url, region_name=settings.region)
    name = f"{settings.queue_prefix}-deep"
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return sqs, url


def test_a_delivery_from_a_deep_queue_does_not_build_the_queue_attributes(
    moto_server: MotoServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs, url = _queue(moto_server, settings)
    for start in range(0, 500, 10):
        entries = [{"Id": str(n), "MessageBody": f"m{start + n}"} for n in range(10)]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    built = 0
    attributes = Queue.attributes

    def counted(queue: Queue) -> dict[str, Any]:
        nonlocal built
        built += 1
        return attributes.fget(queue)  # type: ignore[attr-defined, no-any-return]

    monkeypatch.setattr(Queue, "attributes", property(counted))
    delivered = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(delivered) == 10
    # moto's own check built every attribute (three walks of the 500 messages) three times a
    # message: 30 builds here.
    assert built == 0


def test_a_message_past_the_retention_period_is_still_not_delivered(
    moto_server: MotoServer, settings: Settings
) -> None:
    sqs, url = _queue(moto_server, settings, MessageRetentionPeriod="60")
    sqs.send_message(QueueUrl=url, MessageBody="old")
    queue = sqs_backends[DEFAULT_ACCOUNT_ID][settings.region].get_queue(
        f"{settings.queue_prefix}-deep"
    )
    [old] = queue._messages
    old.sent_timestamp -= 61_000  # sent 61 s ago, past the 60 s it is kept
    assert "Messages" not in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    sqs.send_message(QueueUrl=url, MessageBody="new")
    bodies = [
        m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    ]
    assert bodies == ["new"]


def test_a_delete_overlapping_other_requests_to_its_queue_loses_none_of_them(
    moto_server: MotoServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto's delete rebuilds the queue's message list from the one it started with: a delete
    and a send that land while it is half-way must neither come undone nor vanish. The first
    delete is held half-way (at its last message) for as long as the others take, or 2 s."""
    sqs, url = _queue(moto_server, settings)
    for body in ("first", "middle", "last"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300)
    handles = {m["Body"]: m["ReceiptHandle"] for m in received["Messages"]}
    halfway, go_on = threading.Event(), threading.Event()
    had_receipt_handle = Message.had_receipt_handle

    def holding(message: Message, receipt_handle: str) -> bool:
        if message.body == "last" and receipt_handle == handles["first"] and not halfway.is_set():
            halfway.set()
            go_on.wait(10)
        return had_receipt_handle(message, receipt_handle)

    monkeypatch.setattr(Message, "had_receipt_handle", holding)
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(sqs.delete_message, QueueUrl=url, ReceiptHandle=handles["first"])
        assert halfway.wait(10)
        others = [
            pool.submit(sqs.delete_message, QueueUrl=url, ReceiptHandle=handles["middle"]),
            pool.submit(sqs.send_message, QueueUrl=url, MessageBody="sent meanwhile"),
        ]
        wait(others, timeout=2)  # done at once unless they wait for the first delete
        go_on.set()
        for request in (first, *others):
            request.result()
    queue = sqs_backends[DEFAULT_ACCOUNT_ID][settings.region].get_queue(
        f"{settings.queue_prefix}-deep"
    )
    assert sorted(m.body for m in queue._messages) == ["last", "sent meanwhile"]
