"""The local stand-in for Lambda's SQS event source mapping, against moto over HTTP."""

from __future__ import annotations

import json

from pagefleet.local.dispatch import Dispatcher
from pagefleet.local.provision import create_stack
from pagefleet.settings import Settings


def test_partial_batch_failures_are_retried_then_redriven_to_the_dlq(settings: Settings) -> None:
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

    dispatcher = Dispatcher(sqs, settings.region, wait_s=0)
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
