"""The local Lambda pollers' SQS client (embedded/poller_sqs.py) hands back what boto3 reads from
the moto server over HTTP, for the same messages: the poller cannot tell the two apart."""

from __future__ import annotations

from typing import Any

from embedded.poller_sqs import PollerSQS
from embedded.provision import create_stack
from pagefleet.settings import Settings

ALL = {"MessageSystemAttributeNames": ["All"], "MessageAttributeNames": ["All"]}


def _comparable(message: dict[str, Any]) -> dict[str, Any]:
    """A received message less what differs between two deliveries of equal messages."""
    attributes = dict(message["Attributes"])
    for name in ("SentTimestamp", "ApproximateFirstReceiveTimestamp", "SequenceNumber"):
        assert attributes.pop(name, "0").isdigit()
    return {
        **{k: v for k, v in message.items() if k not in ("MessageId", "ReceiptHandle")},
        "Attributes": attributes,
    }


def test_a_received_message_reads_as_boto3_reads_it_over_http(settings: Settings) -> None:
    stack = create_stack(settings, create_bucket=False)
    sqs, url = stack.sqs, stack.queue_urls["chunks"]
    attributes = {"prior_attempts": {"DataType": "Number", "StringValue": "2"}}
    for _ in range(2):
        sqs.send_message(QueueUrl=url, MessageBody='{"n": 1}', MessageAttributes=attributes)
    over_http = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, **ALL)["Messages"]
    in_process = PollerSQS(settings.region).receive_message(
        QueueUrl=url, MaxNumberOfMessages=1, **ALL
    )["Messages"]
    assert len(over_http) == len(in_process) == 1
    assert _comparable(in_process[0]) == _comparable(over_http[0])
    assert in_process[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    assert in_process[0]["MessageAttributes"] == attributes
    # Only the system attributes asked for, as SQS answers.
    sqs.send_message(QueueUrl=url, MessageBody="{}")
    one = PollerSQS(settings.region).receive_message(
        QueueUrl=url, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    )["Messages"][0]
    assert set(one["Attributes"]) == {"ApproximateReceiveCount"} and "MessageAttributes" not in one


def test_fifo_attributes_and_deletes_match_too(settings: Settings) -> None:
    stack = create_stack(settings, create_bucket=False)
    sqs = stack.sqs
    url = sqs.create_queue(
        QueueName=f"{settings.queue_prefix}-order.fifo", Attributes={"FifoQueue": "true"}
    )["QueueUrl"]
    for n in range(2):
        sqs.send_message(
            QueueUrl=url, MessageBody="{}", MessageGroupId="g", MessageDeduplicationId=f"d{n}"
        )
    poller = PollerSQS(settings.region)
    first = sqs.receive_message(QueueUrl=url, **ALL)["Messages"][0]
    # A group's next message waits for the one in flight to go.
    assert poller.receive_message(QueueUrl=url, **ALL) == {}
    entries = [{"Id": "a", "ReceiptHandle": first["ReceiptHandle"]}]
    assert poller.delete_message_batch(QueueUrl=url, Entries=entries) == {
        "Successful": [{"Id": "a"}],
        "Failed": [],
    }
    second = poller.receive_message(QueueUrl=url, **ALL)["Messages"][0]
    assert _comparable(second) == {
        **_comparable(first),
        "Attributes": {**_comparable(first)["Attributes"], "MessageDeduplicationId": "d1"},
    }
    assert first["Attributes"]["MessageDeduplicationId"] == "d0"
    # A receipt handle that was never handed out fails alone, as over HTTP.
    bad = [{"Id": "b", "ReceiptHandle": "nothing"}]
    failed = poller.delete_message_batch(QueueUrl=url, Entries=bad)["Failed"]
    assert failed == sqs.delete_message_batch(QueueUrl=url, Entries=bad)["Failed"]
    assert [f["Code"] for f in failed] == ["ReceiptHandleIsInvalid"]
