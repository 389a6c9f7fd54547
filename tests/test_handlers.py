"""The Lambda adapters on their own: partial batch replies, and the completion function's two
handlers running at once on two threads, as the embedded stack runs them."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from handlers import completion
from pagefleet import keys
from pagefleet.models import ChunkMessage, ChunkSpec

EVENTS = Path(__file__).parent / "events"


class Context:
    """The parts of a LambdaContext that powertools' logger reads."""

    function_name = "pagefleet-test"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:pagefleet-test"
    aws_request_id = "test-request"


def _sqs_event(bodies: dict[str, str]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": message_id,
                "receiptHandle": f"receipt-{message_id}",
                "body": body,
                "attributes": {"ApproximateReceiveCount": "3"},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                "awsRegion": "us-east-1",
            }
            for message_id, body in bodies.items()
        ]
    }


def _result_event(job_id: str) -> str:
    event = json.loads((EVENTS / "s3_put_via_sqs.json").read_text())
    event["Records"][0]["s3"]["object"]["key"] = keys.chunk_result(job_id, 0)
    return json.dumps(event)


def _dead_chunk(job_id: str) -> str:
    chunk = ChunkSpec(index=0, first_page=1, last_page=1)
    return ChunkMessage(
        job_id=job_id, bucket="b", chunk=chunk, chunk_count=1, sent_at=0
    ).model_dump_json()


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
        "record_dead_chunk",
        lambda bucket, message, receive_count: fail_the_first(message.job_id),
    )
    monkeypatch.setattr(completion.clients, "bucket", lambda settings, name=None: None)
    results_batch = _sqs_event({"r1": _result_event("job-r-fail"), "r2": _result_event("job-r")})
    dead_batch = _sqs_event({"d1": _dead_chunk("job-d-fail"), "d2": _dead_chunk("job-d")})
    with ThreadPoolExecutor(2) as pool:
        results = pool.submit(completion.lambda_handler, results_batch, Context())
        dead = pool.submit(completion.dead_letter_handler, dead_batch, Context())
        assert results.result() == {"batchItemFailures": [{"itemIdentifier": "r1"}]}
        assert dead.result() == {"batchItemFailures": [{"itemIdentifier": "d1"}]}
