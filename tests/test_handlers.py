"""The Lambda adapters on their own: partial batch replies, and the completion function's two
handlers running at once on two threads of one process, which must keep their batches apart."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from embedded.provision import create_stack
from handlers import completion
from pagefleet import keys
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
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

    monkeypatch.setattr(completion, "complete_job", lambda bucket, job_id: fail_the_first(job_id))
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
