"""Lambda's SQS event source mapping, locally: poll a queue, invoke a function with a batch.

As on AWS: up to ``batch_size`` records per invocation, the records the handler reports in
``batchItemFailures`` (or all, if it raises) stay on the queue and come back after their
visibility timeout, and the queue's redrive policy moves them to its DLQ. Everything else in
the batch is deleted.

Concurrency, as Lambda scales an SQS mapping: each function has up to ``concurrency`` pollers,
each invoking its own execution environment (:mod:`embedded.environment`) one batch at a
time. One poller runs from the start; another joins whenever a poll comes back with a full
batch (a backlog), and the newest one leaves again when its poll comes back empty, as Lambda
scales a mapping's pollers down when the backlog is gone: an idle stack polls each queue once
per long poll, not once per poller it ever needed. A poller that leaves keeps its environment
warm for when it joins again.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from embedded.environment import Environment, EnvironmentSpec, FakeLambdaContext

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any], Any], dict[str, Any] | None]
# Told the messages of a batch that the function handled (they are deleted).
Observer = Callable[[list[dict[str, Any]]], None]

__all__ = [
    "Dispatcher",
    "EnvironmentSpec",
    "FakeLambdaContext",
    "Handler",
    "MappingStats",
    "sqs_event",
]


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    """ReceiveMessage output in the shape Lambda hands to a function."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {
                    name: _lambda_attribute(value)
                    for name, value in m.get("MessageAttributes", {}).items()
                },
                "md5OfBody": m.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for m in messages
        ]
    }


def _lambda_attribute(value: dict[str, Any]) -> dict[str, Any]:
    """A message attribute as Lambda spells it (camel case, with the list fields it adds)."""
    return {
        "stringValue": value.get("StringValue"),
        "binaryValue": value.get("BinaryValue"),
        "stringListValues": [],
        "binaryListValues": [],
        "dataType": value["DataType"],
    }


@dataclass
class MappingStats:
    invocations: int = 0
    records: int = 0
    failed_records: int = 0  # reported in batchItemFailures, or in a batch that raised
    failed_invocations: int = 0
    pollers: int = 0  # pollers that have joined at least once (the concurrency reached)
    busy: int = 0  # invocations running now
    peak_busy: int = 0


@dataclass
class _Mapping:
    name: str
    url: str
    arn: str
    handler: Handler | EnvironmentSpec
    batch_size: int
    concurrency: int
    observer: Observer | None = None
    warm: bool = True  # start its first environment with the dispatcher, not on its first batch
    batching_window_s: float = 0.0  # gather records this long for a fuller batch
    report_failures: bool = True  # ReportBatchItemFailures: else a reply's failures are ignored
    stats: MappingStats = field(default_factory=MappingStats)
    wanted: int = 1  # pollers allowed to poll: grows with the backlog, shrinks when it is gone
    last_full_batch: float = float("-inf")  # time.monotonic() of the last full batch
    paused: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    environments: list[Environment] = field(default_factory=list)


class Dispatcher:
    """Pollers for each mapping, each long-polling its queue until :meth:`stop`."""

    def __init__(
        self,
        sqs: Any,
        region: str,
        *,
        wait_s: int = 1,
        release: Callable[[list[str]], None] | None = None,
    ) -> None:
        """``release``: ends the long polls waiting on the queues named (by URL) at once, where
        the server can (:meth:`embedded.server.MotoServer.release_polls`): stopping then takes
        no longer than the batches in hand, whatever ``wait_s``."""
        self.sqs = sqs
        self.region = region
        self.wait_s = wait_s
        self.release = release
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._mappings: dict[str, _Mapping] = {}
        self.errors: list[BaseException] = []

    def add(
        self,
        name: str,
        queue_url: str,
        queue_arn: str,
        handler: Handler | EnvironmentSpec,
        batch_size: int = 10,
        *,
        concurrency: int = 1,
        observer: Observer | None = None,
        warm: bool = True,
        batching_window_s: float = 0.0,
        report_failures: bool = True,
    ) -> None:
        """Map a queue to a function: ``handler`` is called in this process (it must then be
        thread-safe when ``concurrency`` > 1), or, given an :class:`EnvironmentSpec`, each
        poller invokes an environment process of its own. Unless ``warm``, that process starts
        on the first batch, as a cold start does on Lambda. ``batching_window_s`` and
        ``report_failures``: the mapping's MaximumBatchingWindowInSeconds and whether its
        FunctionResponseTypes hold ReportBatchItemFailures."""
        mapping = _Mapping(
            name,
            queue_url,
            queue_arn,
            handler,
            batch_size,
            max(1, concurrency),
            observer,
            warm,
            batching_window_s,
            report_failures,
        )
        for index in range(mapping.concurrency):
            mapping.threads.append(
                threading.Thread(
                    target=self._loop,
                    args=(mapping, index),
                    name=f"dispatch-{name}-{index}",
                    daemon=True,
                )
            )
        self._mappings[name] = mapping

    def stats(self) -> dict[str, MappingStats]:
        return {name: m.stats for name, m in self._mappings.items()}

    def environments(self) -> dict[str, list[Environment]]:
        """Each mapping's execution environments so far (the bench reads their processes)."""
        return {name: list(m.environments) for name, m in self._mappings.items()}

    def polling(self, name: str) -> int:
        """How many of ``name``'s pollers poll now (the others wait for a backlog)."""
        with self._changed:
            return self._mappings[name].wanted

    def backlogged(self, within_s: float = 2.0) -> bool:
        """Whether a poll of any queue came back with a full batch within ``within_s``."""
        now = time.monotonic()
        return any(now - m.last_full_batch < within_s for m in self._mappings.values())

    def busy(self) -> int:
        """Invocations running now, over every mapping."""
        return sum(m.stats.busy for m in self._mappings.values())

    def start(self) -> None:
        for mapping in self._mappings.values():
            if mapping.warm and isinstance(mapping.handler, EnvironmentSpec):
                # The first environment of each function warms up while the rest starts.
                environment = self._environment(mapping, 0)
                environment.start()
            for thread in mapping.threads:
                thread.start()

    def pause(self, name: str, timeout_s: float | None = None) -> None:
        """Stop polling ``name``'s queue; returns once its invocations in hand have ended."""
        mapping = self._mappings[name]
        mapping.paused.set()
        with self._changed:
            self._changed.notify_all()
        self._join(mapping, timeout_s)

    def stop(self, *, wait: bool = True) -> None:
        """No new polls; with ``wait``, return once every poller has ended (each first finishes
        its long poll and the batch it brings) and so has every environment."""
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        if not wait:
            return
        for mapping in self._mappings.values():
            self._join(mapping)
            for environment in mapping.environments:
                environment.stop()

    def _join(self, mapping: _Mapping, timeout_s: float | None = None) -> None:
        """Wait for ``mapping``'s pollers to end, releasing its queue's long polls meanwhile:
        again and again, as a poller may start its last poll just after a release."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for thread in mapping.threads:
            while thread.is_alive():
                if self.release is not None:
                    self.release([mapping.url])
                left = 0.1 if deadline is None else min(0.1, deadline - time.monotonic())
                if left <= 0:
                    return
                thread.join(left)

    # --- pollers ---

    def _environment(self, mapping: _Mapping, index: int) -> Environment:
        assert isinstance(mapping.handler, EnvironmentSpec)
        while len(mapping.environments) <= index:
            number = len(mapping.environments)
            mapping.environments.append(Environment(f"{mapping.name}[{number}]", mapping.handler))
        return mapping.environments[index]

    def _loop(self, mapping: _Mapping, index: int) -> None:
        handler: Handler | None = None
        while True:
            with self._changed:
                while mapping.wanted <= index and not self._done(mapping):
                    self._changed.wait()
            if self._done(mapping):
                return
            if handler is None:
                mapping.stats.pollers += 1
                handler = (
                    self._environment(mapping, index)
                    if isinstance(mapping.handler, EnvironmentSpec)
                    else mapping.handler
                )
            try:
                handled = self._round(mapping, handler)
            except Exception as exc:  # the mapping survives a failed poll, as Lambda's does
                log.exception("dispatch to %s failed", mapping.name)
                self.errors.append(exc)
                self._stop.wait(1)  # an endpoint that is down: do not spin
                continue
            if not handled and index > 0:
                with self._changed:
                    if index == mapping.wanted - 1:  # the newest poller: the backlog is gone
                        mapping.wanted -= 1

    def _done(self, mapping: _Mapping) -> bool:
        return self._stop.is_set() or mapping.paused.is_set()

    def poll_once(
        self,
        name: str,
        url: str,
        arn: str,
        handler: Handler,
        batch_size: int = 10,
        *,
        batching_window_s: float = 0.0,
        report_failures: bool = True,
    ) -> int:
        """One receive-invoke-delete round outside any poller; returns how many records were
        handled (deleted)."""
        mapping = _Mapping(
            name,
            url,
            arn,
            handler,
            batch_size,
            1,
            batching_window_s=batching_window_s,
            report_failures=report_failures,
        )
        return self._round(mapping, handler)

    def _receive(self, mapping: _Mapping, most: int, wait_s: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=mapping.url,
            MaxNumberOfMessages=min(most, 10),  # SQS's most per receive
            WaitTimeSeconds=wait_s,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],  # Lambda hands a function every attribute
        ).get("Messages", [])
        return messages

    def _round(self, mapping: _Mapping, handler: Handler) -> int:
        messages = self._receive(mapping, mapping.batch_size, self.wait_s)
        if not messages:
            return 0
        # A batching window: receive more until the batch is full or the window has passed.
        closes = time.monotonic() + mapping.batching_window_s
        while len(messages) < mapping.batch_size and (left := closes - time.monotonic()) > 0:
            wait_s = min(int(left), 20)  # SQS long-polls 20 s at most
            messages += self._receive(mapping, mapping.batch_size - len(messages), wait_s)
        if len(messages) == mapping.batch_size:
            mapping.last_full_batch = time.monotonic()
            if mapping.wanted < mapping.concurrency:
                with self._changed:  # a backlog: one more concurrent poller
                    mapping.wanted += 1
                    self._changed.notify_all()
        stats = mapping.stats
        with self._changed:
            stats.invocations += 1
            stats.records += len(messages)
            stats.busy += 1
            stats.peak_busy = max(stats.peak_busy, stats.busy)
        context = FakeLambdaContext(function_name=mapping.name, aws_request_id=str(uuid.uuid4()))
        try:
            response = handler(sqs_event(messages, mapping.arn, self.region), context) or {}
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
            if not mapping.report_failures:
                failed = set()  # without ReportBatchItemFailures a reply is no failure
        except Exception:
            log.exception("%s failed a whole batch", mapping.name)
            with self._changed:
                stats.failed_invocations += 1
                stats.failed_records += len(messages)
            return 0
        finally:
            with self._changed:
                stats.busy -= 1
        done = [m for m in messages if m["MessageId"] not in failed]
        with self._changed:
            stats.failed_records += len(messages) - len(done)
        if done:
            self.sqs.delete_message_batch(
                QueueUrl=mapping.url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)
                ],
            )
            if mapping.observer is not None:
                mapping.observer(done)
        return len(done)
