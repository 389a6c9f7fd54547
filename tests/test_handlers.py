"""The Lambda adapters on their own: partial batch replies, and the completion function's two
handlers running at once on two threads of one process, which must keep their batches apart."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from handlers import completion
from tests.lambda_events import Context, dead_chunk, result_event, sqs_event


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
