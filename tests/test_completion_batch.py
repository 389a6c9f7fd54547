"""The completion function checks each job once per batch, however many of its results the
batch announces; a failed check fails every record of its job in the batch."""

from __future__ import annotations

import pytest

from handlers import completion
from pagefleet import keys
from tests.lambda_events import Context, result_event, sqs_event


def test_one_check_per_job_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []

    def check(bucket: object, job_id: str, announce: object, landed: dict[str, str]) -> str:
        # The result its record announced, with its ETag quoted as a listing gives it.
        assert landed == {keys.chunk_result(job_id, 0): '"d41d8cd98f00b204e9800998ecf8427e"'}
        checked.append(job_id)
        if job_id == "job-bad":
            raise RuntimeError("S3 said no")
        return "waiting"

    monkeypatch.setattr(completion, "complete_job", check)
    monkeypatch.setattr(completion.clients, "bucket", lambda settings, name=None: None)
    bodies = {f"a{i}": result_event("job-a") for i in range(5)}
    bodies |= {f"b{i}": result_event("job-bad") for i in range(3)}
    reply = completion.lambda_handler(sqs_event(bodies), Context())
    assert sorted(checked) == ["job-a", "job-bad"]
    assert reply == {"batchItemFailures": [{"itemIdentifier": f"b{i}"} for i in range(3)]}
    # The next batch checks again.
    completion.lambda_handler(sqs_event({"a9": result_event("job-a")}), Context())
    assert checked.count("job-a") == 2
