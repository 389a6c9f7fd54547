"""The Lambda adapters on their own: partial batch replies, the completion function's handlers
running at once on two threads of one process, which must keep their batches apart, and the
completion DLQ's consumer under its own role."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError

from embedded import MotoServer
from embedded.provision import create_stack
from handlers import clients, completion
from pagefleet import keys
from pagefleet.settings import Settings, settings_env
from pagefleet.storage import Bucket
from rehearsal.iam import IamDouble, iam_double
from tests.lambda_events import Context, dead_chunk, object_event, result_event, sqs_event


def test_both_completion_handlers_at_once_keep_their_own_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Both batches are in flight together: each handler's first record waits for the other's.
    together = threading.Barrier(2, timeout=10)

    def fail_the_first(job_id: str) -> None:
        together.wait()
        if job_id.endswith("fail"):
            raise RuntimeError(f"{job_id} cannot be handled")

    monkeypatch.setattr(
        completion, "complete_job", lambda bucket, job_id, announce, landed: fail_the_first(job_id)
    )
    monkeypatch.setattr(
        completion,
        "write_result",
        lambda bucket, result: fail_the_first(result.job_id),
    )
    monkeypatch.setattr(completion.clients, "bucket", lambda settings, name=None: None)
    results_batch = sqs_event({"r1": result_event("job-r-fail"), "r2": result_event("job-r")})
    dead_batch = sqs_event({"d1": dead_chunk("job-d-fail"), "d2": dead_chunk("job-d")})
    with ThreadPoolExecutor(2) as pool:
        results = pool.submit(completion.lambda_handler, results_batch, Context())
        dead = pool.submit(completion.dead_letter_handler, dead_batch, Context())
        assert results.result() == {"batchItemFailures": [{"itemIdentifier": "r1"}]}
        assert dead.result() == {"batchItemFailures": [{"itemIdentifier": "d1"}]}


def test_result_keys_and_manifests_no_pipeline_wrote_are_dropped_not_retried(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = create_stack(settings)
    bucket = Bucket(stack.s3, settings.bucket)
    assert settings.endpoint_url is not None
    monkeypatch.setenv("PAGEFLEET_ENDPOINT_URL", settings.endpoint_url)
    monkeypatch.setenv("PAGEFLEET_BUCKET", settings.bucket)
    # What a user can write under jobs/: an index int() refuses, and a manifest that is not one.
    bucket.put("jobs/x/results/²³.result.json", b"{}")
    bucket.put(keys.manifest("garbage"), b"{not a manifest")
    bucket.put(keys.chunk_result("garbage", 0), b"{}")
    bodies = {
        "digits": object_event("jobs/x/results/²³.result.json", bucket.name),
        "garbage": object_event(keys.chunk_result("garbage", 0), bucket.name),
    }
    assert completion.lambda_handler(sqs_event(bodies), Context()) == {"batchItemFailures": []}


@pytest.fixture
def as_role(
    moto_server: MotoServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], IamDouble]]:
    """Run a handler here as its Lambda runs on AWS: configured by the environment, signing as
    its own role through the IAM double (rehearsal/iam.py). Returns: entry point -> double."""
    create_stack(settings)
    with iam_double(moto_server.url, settings.bucket, settings.queue_prefix) as double:

        def become(entry_point: str) -> IamDouble:
            environment = {
                **settings_env(settings.model_copy(update={"endpoint_url": double.url})),
                **double.credentials(double.role_of(entry_point)),
            }
            for name, value in environment.items():
                monkeypatch.setenv(name, value)
            for cached in (clients._s3, clients._sqs, clients._queue):
                cached.cache_clear()  # clients signed as another role
            return double

        yield become
    for cached in (clients._s3, clients._sqs, clients._queue):
        cached.cache_clear()


def test_the_completion_dlq_consumer_reports_what_names_no_job(
    as_role: Callable[[str], IamDouble], settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Under its own role: nothing it cannot record fails the batch (it would only sit on the
    DLQ until its retention ended it), and each such message is reported with its key."""
    double = as_role("handlers.completion:completion_dead_letter_handler")
    foreign = ["jobs/no-such-job/results/00000.result.json", "outbox/a user's.json"]
    bodies = {f"m{i}": object_event(key, settings.bucket) for i, key in enumerate(foreign)}
    bodies["garbage"] = "not an S3 event"
    reply = completion.completion_dead_letter_handler(sqs_event(bodies), Context())
    assert reply == {"batchItemFailures": []}
    reports = [
        r
        for r in caplog.records
        if r.levelno == logging.ERROR and "names no job to record" in r.getMessage()
    ]
    assert sorted(r.message_id for r in reports) == ["garbage", "m0", "m1"]
    assert {r.key for r in reports} == {*foreign, None}
    assert double.denials() == []


def test_the_completion_dlq_consumer_keeps_a_message_only_on_a_transient_fault(
    as_role: Callable[[str], IamDouble], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_role("handlers.completion:completion_dead_letter_handler")

    def throttled(bucket: object, job_id: str, receive_count: int, announce: object) -> str:
        if job_id == "throttled":
            raise ClientError({"Error": {"Code": "SlowDown"}}, "GetObject")
        raise ValueError("a bug, or a manifest no model reads")

    monkeypatch.setattr(completion, "record_dead_completion", throttled)
    bodies = {
        name: object_event(keys.chunk_result(name, 0), settings.bucket)
        for name in ("throttled", "broken")
    }
    reply = completion.completion_dead_letter_handler(sqs_event(bodies), Context())
    assert reply == {"batchItemFailures": [{"itemIdentifier": "throttled"}]}


def test_a_warm_environment_builds_its_settings_once_per_set_of_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAGEFLEET_BUCKET", "first-bucket")
    first = clients.settings()
    assert first.bucket == "first-bucket"
    assert clients.settings() is first  # the next invocation of a warm environment
    monkeypatch.setenv("PAGEFLEET_BUCKET", "second-bucket")
    second = clients.settings()
    assert second.bucket == "second-bucket"
    monkeypatch.setenv("OTHER_VARIABLE", "x")  # not one Settings reads: built again for nothing
    assert clients.settings() is second
