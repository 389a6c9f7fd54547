"""SQS events as Lambda delivers them to the handlers, and the context powertools reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pagefleet import keys
from pagefleet.models import ChunkMessage, ChunkSpec

EVENTS = Path(__file__).parent / "events"


class Context:
    """The parts of a LambdaContext that powertools' logger reads."""

    function_name = "pagefleet-test"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:pagefleet-test"
    aws_request_id = "test-request"


def sqs_event(bodies: dict[str, str]) -> dict[str, Any]:
    """An SQS batch of ``bodies`` by message id, each received three times."""
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


def object_event(key: str, bucket: str | None = None) -> str:
    """The S3 notification of a PUT of ``key`` (in ``bucket``), as a queue holds it."""
    event = json.loads((EVENTS / "s3_put_via_sqs.json").read_text())
    event["Records"][0]["s3"]["object"]["key"] = key
    if bucket is not None:
        event["Records"][0]["s3"]["bucket"]["name"] = bucket
    return json.dumps(event)


def result_event(job_id: str) -> str:
    """The S3 notification of chunk 0's result of ``job_id``, as the completion queue holds it."""
    return object_event(keys.chunk_result(job_id, 0))


def dead_chunk(job_id: str) -> str:
    """A chunk message of ``job_id`` as the chunks DLQ holds it."""
    chunk = ChunkSpec(index=0, first_page=1, last_page=1)
    return ChunkMessage(
        job_id=job_id, bucket="b", chunk=chunk, chunk_count=1, sent_at=0
    ).model_dump_json()
