"""Lambda's SQS event source mapping, locally: poll a queue, invoke a handler with a batch.

As on AWS: up to ``batch_size`` records per invocation, the records the handler reports in
``batchItemFailures`` (or all, if it raises) stay on the queue and come back after their
visibility timeout, and the queue's redrive policy moves them to its DLQ. Everything else in
the batch is deleted.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], Any], dict[str, Any] | None]


@dataclass
class FakeLambdaContext:
    """The attributes powertools reads from a Lambda context."""

    function_name: str
    memory_limit_in_mb: int = 1024
    function_version: str = "$LATEST"
    aws_request_id: str = ""

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    """ReceiveMessage output in the shape Lambda hands to a function."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": m.get("MessageAttributes", {}),
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


class Dispatcher:
    """One thread per mapping, each long-polling its queue until :meth:`stop`."""

    def __init__(self, sqs: Any, region: str, *, wait_s: int = 1) -> None:
        self.sqs = sqs
        self.region = region
        self.wait_s = wait_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def add(
        self, name: str, queue_url: str, queue_arn: str, handler: Handler, batch_size: int = 10
    ) -> None:
        thread = threading.Thread(
            target=self._loop,
            args=(name, queue_url, queue_arn, handler, batch_size),
            name=f"dispatch-{name}",
            daemon=True,
        )
        self._threads.append(thread)

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _loop(self, name: str, url: str, arn: str, handler: Handler, batch_size: int) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once(name, url, arn, handler, batch_size)
            except Exception as exc:  # the mapping survives a failed poll, as Lambda's does
                log.exception("dispatch to %s failed", name)
                self.errors.append(exc)

    def poll_once(
        self, name: str, url: str, arn: str, handler: Handler, batch_size: int = 10
    ) -> int:
        """One receive-invoke-delete round; returns how many records were handled."""
        messages = self.sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=batch_size,
            WaitTimeSeconds=self.wait_s,
            MessageSystemAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return 0
        context = FakeLambdaContext(function_name=name, aws_request_id=str(uuid.uuid4()))
        try:
            response = handler(sqs_event(messages, arn, self.region), context) or {}
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        except Exception:
            log.exception("%s failed a whole batch", name)
            return 0
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            self.sqs.delete_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)
                ],
            )
        return len(done)
