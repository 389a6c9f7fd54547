"""The local stand-in for Lambda's SQS event source mapping, against moto over HTTP and through
its in-process poller client (embedded/poller_sqs.py, what the local stack uses): batches,
partial batch failures, concurrency under a backlog, and execution environments in processes."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from embedded.dispatch import Dispatcher, EnvironmentSpec, FakeLambdaContext
from embedded.environment import Environment, InvocationError
from embedded.logs import LogRouter
from embedded.poller_sqs import PollerSQS
from embedded.provision import Stack, create_stack
from pagefleet.settings import Settings
from tests.conftest import outlived

INVOCATIONS = 0  # module state, one environment's own when run there

# The clients a dispatcher polls with: boto3's over HTTP (an endpoint of another process, AWS
# in the rehearsal) and moto's own in this process (the local stack's).
POLLERS = ("http", "in-process")


def poller(kind: str, stack: Stack, region: str) -> Any:
    return stack.sqs if kind == "http" else PollerSQS(region)


def environment_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """What the environment tests run in a process of its own."""
    global INVOCATIONS
    INVOCATIONS += 1
    failures = []
    for record in event["Records"]:
        body = json.loads(record["body"])
        print(json.dumps({"_aws": {"CloudWatchMetrics": []}, "Seen": [1.0]}))  # EMF, to stdout
        if body.get("poison"):
            failures.append({"itemIdentifier": record["messageId"]})
        if body.get("raise"):
            raise RuntimeError("this batch cannot be handled")
        if body.get("exit"):
            os._exit(3)
        if body.get("sleep"):
            time.sleep(body["sleep"])
    return {
        "batchItemFailures": failures,
        "pid": os.getpid(),
        "invocations": INVOCATIONS,
        "remaining_ms": context.get_remaining_time_in_millis(),
    }


def _event(*bodies: dict[str, Any]) -> dict[str, Any]:
    return {
        "Records": [
            {"messageId": f"m{i}", "receiptHandle": f"r{i}", "body": json.dumps(b)}
            for i, b in enumerate(bodies)
        ]
    }


@pytest.mark.parametrize("kind", POLLERS)
def test_partial_batch_failures_are_retried_then_redriven_to_the_dlq(
    settings: Settings, kind: str
) -> None:
    stack = create_stack(settings, create_bucket=False)
    sqs = stack.sqs
    url, arn = stack.queue_urls["completion"], stack.queue_arns["completion"]
    sqs.set_queue_attributes(
        QueueUrl=url,
        Attributes={
            "VisibilityTimeout": "0",
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": stack.dlq_arns["completion"], "maxReceiveCount": 2}
            ),
        },
    )
    for n in range(4):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": n}))
    seen: list[int] = []

    def handler(event: dict, context: object) -> dict:
        failures = []
        for record in event["Records"]:
            n = json.loads(record["body"])["n"]
            seen.append(n)
            assert record["eventSourceARN"] == arn
            if n == 3:  # a poison message
                failures.append({"itemIdentifier": record["messageId"]})
        return {"batchItemFailures": failures}

    dispatcher = Dispatcher(poller(kind, stack, settings.region), settings.region, wait_s=0)
    rounds = [dispatcher.poll_once("test", url, arn, handler) for _ in range(4)]
    assert sorted(set(seen)) == [0, 1, 2, 3]
    assert seen.count(3) == 2  # delivered maxReceiveCount times, then moved
    assert sum(rounds) == 3  # the others were deleted after one delivery each
    moved = sqs.receive_message(QueueUrl=stack.dlq_urls["completion"], MaxNumberOfMessages=10)
    assert [json.loads(m["Body"])["n"] for m in moved["Messages"]] == [3]


def test_a_handler_that_raises_leaves_the_whole_batch(settings: Settings) -> None:
    stack = create_stack(settings, create_bucket=False)
    url, arn = stack.queue_urls["ingest"], stack.queue_arns["ingest"]
    stack.sqs.send_message(QueueUrl=url, MessageBody="{}")

    def crash(event: dict, context: object) -> dict:
        raise RuntimeError("boom")

    assert Dispatcher(stack.sqs, settings.region, wait_s=0).poll_once("t", url, arn, crash) == 0
    attrs = stack.sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "1"


def test_without_report_batch_item_failures_a_reply_fails_no_record(settings: Settings) -> None:
    """A mapping without ReportBatchItemFailures ignores the reply: the batch is deleted
    (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html)."""
    stack = create_stack(settings, create_bucket=False)
    url, arn = stack.queue_urls["ingest"], stack.queue_arns["ingest"]
    for n in range(2):
        stack.sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"n": n}))

    def fail_all(event: dict, context: object) -> dict:
        return {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in event["Records"]]}

    dispatcher = Dispatcher(stack.sqs, settings.region, wait_s=0)
    assert dispatcher.poll_once("t", url, arn, fail_all, report_failures=False) == 2
    assert dispatcher.poll_once("t", url, arn, fail_all) == 0  # nothing left


@pytest.mark.parametrize("kind", POLLERS)
def test_a_batching_window_gathers_a_fuller_batch(settings: Settings, kind: str) -> None:
    """A message sent after the first receive joins the batch while the window is open."""
    stack = create_stack(settings, create_bucket=False)
    url, arn = stack.queue_urls["ingest"], stack.queue_arns["ingest"]
    stack.sqs.send_message(QueueUrl=url, MessageBody="{}")
    batches: list[int] = []

    def handler(event: dict, context: object) -> None:
        batches.append(len(event["Records"]))

    later = threading.Timer(
        0.3, stack.sqs.send_message, kwargs={"QueueUrl": url, "MessageBody": "{}"}
    )
    later.start()
    dispatcher = Dispatcher(poller(kind, stack, settings.region), settings.region, wait_s=0)
    handled = dispatcher.poll_once("t", url, arn, handler, 2, batching_window_s=10)
    later.join()
    assert (handled, batches) == (2, [2])


@pytest.mark.parametrize("kind", POLLERS)
def test_a_backlog_is_handled_by_concurrent_batches_of_at_most_ten(
    settings: Settings, kind: str
) -> None:
    stack = create_stack(settings, create_bucket=False)
    url, arn = stack.queue_urls["ingest"], stack.queue_arns["ingest"]
    for start in range(0, 60, 10):
        stack.sqs.send_message_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(n), "MessageBody": json.dumps({"n": n})}
                for n in range(start, start + 10)
            ],
        )
    # Three invocations must be in flight at once for any of them to return.
    together = threading.Barrier(3, timeout=20)
    handled: list[int] = []
    sizes: list[int] = []
    lock = threading.Lock()

    def handler(event: dict, context: object) -> dict:
        records = event["Records"]
        with lock:
            sizes.append(len(records))
            first = len(sizes) <= 3
        if first:
            together.wait()
        with lock:
            handled.extend(json.loads(r["body"])["n"] for r in records)
        return {"batchItemFailures": []}

    dispatcher = Dispatcher(poller(kind, stack, settings.region), settings.region, wait_s=1)
    dispatcher.add("splitter", url, arn, handler, concurrency=3)
    dispatcher.start()
    try:
        deadline = time.monotonic() + 30
        while len(set(handled)) < 60:
            assert time.monotonic() < deadline, f"{len(handled)} of 60 handled"
            assert not dispatcher.errors, dispatcher.errors
            time.sleep(0.05)  # the handler's progress: nothing else to await
        # The backlog gone, the pollers that joined for it leave, newest first, one empty
        # long poll (1 s) each: an idle queue is polled by one.
        while dispatcher.polling("splitter") > 1:
            assert time.monotonic() < deadline, f"{dispatcher.polling('splitter')} pollers"
            time.sleep(0.05)  # the pollers' own pace: nothing else to await
    finally:
        dispatcher.stop()
    stats = dispatcher.stats()["splitter"]
    # Each deleted after its batch (moto, like SQS, may deliver one twice to racing receivers).
    assert set(handled) == set(range(60))
    attrs = stack.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert (
        attrs["ApproximateNumberOfMessages"]
        == attrs["ApproximateNumberOfMessagesNotVisible"]
        == "0"
    )
    assert max(sizes) == 10 and stats.peak_busy == 3 and stats.pollers == 3


def test_an_idle_queue_keeps_one_poller(settings: Settings) -> None:
    stack = create_stack(settings, create_bucket=False)
    url, arn = stack.queue_urls["completion"], stack.queue_arns["completion"]
    stack.sqs.send_message(QueueUrl=url, MessageBody="{}")
    done = threading.Event()
    dispatcher = Dispatcher(stack.sqs, settings.region, wait_s=0)
    dispatcher.add("completion", url, arn, lambda e, c: done.set(), concurrency=4)
    dispatcher.start()
    try:
        assert done.wait(20)
    finally:
        dispatcher.stop()
    assert dispatcher.stats()["completion"].pollers == 1  # no full batch, no scale-up


@pytest.mark.parametrize("kind", POLLERS)
def test_a_stop_ends_the_long_polls_of_its_pollers(
    moto_server, settings: Settings, kind: str
) -> None:
    """Pollers in 20 s long polls (as Lambda's) stop at once: the server releases them."""
    stack = create_stack(settings, create_bucket=False)
    url, arn = stack.queue_urls["completion"], stack.queue_arns["completion"]

    def release(urls: list[str]) -> None:
        moto_server.release_polls(settings.region, urls)

    sqs = poller(kind, stack, settings.region)
    dispatcher = Dispatcher(sqs, settings.region, wait_s=20, release=release)
    dispatcher.add("completion", url, arn, lambda e, c: None)
    dispatcher.start()
    time.sleep(0.5)  # its first poll in flight: nothing of it to await
    started = time.monotonic()
    dispatcher.stop()
    assert time.monotonic() - started < 10


def test_an_environment_runs_the_handler_in_its_own_process(tmp_path: Path) -> None:
    logs = LogRouter(log_file=tmp_path / "log", terminal=False)
    spec = EnvironmentSpec("tests.test_dispatch:environment_handler", attach_logs=logs.attach)
    first, second = Environment("fn[0]", spec), Environment("fn[1]", spec)
    try:
        replies = [
            env(_event({"n": 1}, {"poison": True}), FakeLambdaContext("fn"))
            for env in (first, first, second)
        ]
    finally:
        first.stop()
        second.stop()
        logs.close()
    assert all(r is not None for r in replies)
    pids = [r["pid"] for r in replies if r]
    assert pids[0] == pids[1] != pids[2] != os.getpid()  # warm reuse; one process per env
    assert [r["invocations"] for r in replies if r] == [1, 2, 1]  # module state is per env
    assert replies[0] and replies[0]["batchItemFailures"] == [{"itemIdentifier": "m1"}]
    assert 0 < replies[0]["remaining_ms"] <= 60_000
    # What the function printed went to its logs, not into the reply channel.
    assert (tmp_path / "log").read_text().count('[fn[0]] {"_aws"') == 4


def test_an_environment_that_raises_dies_or_times_out_fails_the_batch() -> None:
    spec = EnvironmentSpec("tests.test_dispatch:environment_handler", timeout_s=2)
    env = Environment("fn[0]", spec)
    try:
        with pytest.raises(InvocationError, match="cannot be handled"):
            env(_event({"raise": True}), FakeLambdaContext("fn"))
        warm = env.proc.pid if env.proc else None
        with pytest.raises(InvocationError, match="exited"):
            env(_event({"exit": True}), FakeLambdaContext("fn"))
        with pytest.raises(InvocationError, match="within 2 s"):
            env(_event({"sleep": 30}), FakeLambdaContext("fn"))
        reply = env(_event({"n": 1}), FakeLambdaContext("fn"))
    finally:
        env.stop()
    assert reply is not None and reply["pid"] != warm  # a cold start after each death
    assert reply["invocations"] == 1 and env.cold_starts == 3


# A stack process of its own: one environment, one invocation that would run for ten minutes.
_STACK = """
import json
from embedded.environment import Environment, EnvironmentSpec, FakeLambdaContext
spec = EnvironmentSpec("tests.test_dispatch:environment_handler", timeout_s=600)
env = Environment("fn[0]", spec)
env.start()
print(env.proc.pid, flush=True)
event = {"Records": [{"messageId": "m0", "receiptHandle": "r0", "body": '{"sleep": 600}'}]}
env(event, FakeLambdaContext("fn"))
"""


def test_an_environment_ends_with_the_process_that_started_it_mid_invocation() -> None:
    """kill -9 of the stack (or SIGTERM of `pagefleet run`, left to its default): nothing is
    left to take the reply, so the environment ends at once, not when its handler does, and
    the template it was forked from and the resource tracker follow."""
    stack = subprocess.Popen(
        [sys.executable, "-c", _STACK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    children: list[psutil.Process] = []
    try:
        assert stack.stdout is not None and stack.stderr is not None
        environment = psutil.Process(int(stack.stdout.readline()))
        # The handler's first print reaches the stack's standard error: it is running.
        assert '"_aws"' in stack.stderr.readline()
        children = psutil.Process(stack.pid).children(recursive=True)
        assert environment in children
        stack.kill()
        stack.wait()
        assert outlived(children, 10) == []
    finally:
        stack.kill()
        for child in children:  # what outlived the stack, should this fail
            with contextlib.suppress(psutil.Error):
                child.kill()
        stack.communicate()  # read and closed, once nothing holds the pipes


def test_a_function_mapped_cold_starts_its_environment_on_its_first_batch(
    settings: Settings,
) -> None:
    stack = create_stack(settings, create_bucket=False)
    spec = EnvironmentSpec("tests.test_dispatch:environment_handler")
    handled = threading.Event()
    dispatcher = Dispatcher(stack.sqs, settings.region, wait_s=0)
    for name, warm in (("ingest", True), ("completion", False)):
        dispatcher.add(
            name,
            stack.queue_urls[name],
            stack.queue_arns[name],
            spec,
            warm=warm,
            observer=lambda messages: handled.set(),
        )

    def environments() -> int:
        """Processes forked from the environments' template (multiprocessing's fork server)."""
        found = 0
        for child in psutil.Process().children():
            with contextlib.suppress(psutil.Error):  # another test's child, gone meanwhile
                if "multiprocessing.forkserver" in " ".join(child.cmdline()):
                    found += len(child.children())
        return found

    dispatcher.start()
    try:
        assert environments() == 1  # the warm function's, started with the dispatcher
        stack.sqs.send_message(QueueUrl=stack.queue_urls["completion"], MessageBody="{}")
        assert handled.wait(30)
        assert environments() == 2
    finally:
        dispatcher.stop()
