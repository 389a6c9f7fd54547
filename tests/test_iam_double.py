"""The IAM double itself: it answers as AWS answers each role, by terraform/policies.json, and
enforces the KMS use and the TLS-only queue policies Terraform deploys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from embedded import MotoServer
from embedded.pipeline import FUNCTIONS
from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.settings import Settings
from rehearsal.iam import IamDouble, Statement, iam_double
from rehearsal.tls import loopback_certificate


@pytest.fixture
def double(moto_server: MotoServer, settings: Settings) -> Iterator[IamDouble]:
    create_stack(settings)
    with iam_double(moto_server.url, settings.bucket, settings.queue_prefix) as running:
        yield running


def _client(double: IamDouble, service: str, role: str, verify: str | None = None) -> Any:
    credentials = double.credentials(role)
    return boto3.session.Session().client(
        service,
        region_name="us-east-1",
        endpoint_url=double.url,
        verify=verify,
        aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=credentials["AWS_SESSION_TOKEN"],
        config=Config(retries={"total_max_attempts": 1}, s3={"addressing_style": "path"}),
    )


def _code(call: Any, **kwargs: Any) -> str:
    with pytest.raises(ClientError) as raised:
        call(**kwargs)
    return str(raised.value.response["Error"]["Code"])


def test_a_missing_key_is_a_403_to_a_role_that_cannot_list(
    double: IamDouble, settings: Settings
) -> None:
    chunk = keys.chunk_pdf("job", 0)
    runner = _client(double, "s3", "runner")
    assert _code(runner.get_object, Bucket=settings.bucket, Key=chunk) == "AccessDenied"
    assert _code(runner.head_object, Bucket=settings.bucket, Key=chunk) == "403"
    splitter = _client(double, "s3", "splitter")
    assert _code(splitter.get_object, Bucket=settings.bucket, Key=chunk) == "NoSuchKey"
    splitter.put_object(Bucket=settings.bucket, Key=chunk, Body=b"%PDF")
    assert runner.get_object(Bucket=settings.bucket, Key=chunk)["Body"].read() == b"%PDF"


def test_what_a_role_is_not_given_is_denied(double: IamDouble, settings: Settings) -> None:
    runner = _client(double, "s3", "runner")
    inbox = keys.inbox_key("a")
    assert _code(runner.get_object, Bucket=settings.bucket, Key=inbox) == "AccessDenied"
    assert _code(runner.list_objects_v2, Bucket=settings.bucket) == "AccessDenied"
    assert _code(runner.put_object, Bucket=settings.bucket, Key="outbox/a.md", Body=b"") == (
        "AccessDenied"
    )
    runner.put_object(Bucket=settings.bucket, Key=keys.chunk_result("job", 0), Body=b"{}")
    completion = _client(double, "sqs", "completion")
    chunks = f"{settings.queue_prefix}-chunks"
    assert _code(completion.get_queue_url, QueueName=chunks) == "AccessDenied"
    url = _client(double, "sqs", "runner").get_queue_url(QueueName=chunks)["QueueUrl"]
    assert url.endswith(chunks)
    assert ("completion", "sqs:GetQueueUrl") in double.denials()


def test_a_request_signed_by_no_role_is_denied(double: IamDouble, settings: Settings) -> None:
    stranger = boto3.session.Session().client(
        "s3",
        region_name="us-east-1",
        endpoint_url=double.url,
        aws_access_key_id="someone",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, s3={"addressing_style": "path"}),
    )
    assert _code(stranger.list_objects_v2, Bucket=settings.bucket) == "AccessDenied"


def test_a_policy_the_double_cannot_evaluate_is_refused() -> None:
    conditional = {
        "Effect": "Allow",
        "Action": "s3:GetObject",
        "Resource": "*",
        "Condition": {"Bool": {"aws:SecureTransport": "true"}},
    }
    with pytest.raises(ValueError, match="Condition"):
        Statement.of(conditional)


def test_every_entry_point_has_a_role(double: IamDouble) -> None:
    for _, _, entry_point, _ in FUNCTIONS.values():
        assert double.role_of(entry_point) in double.roles
    assert double.role_of("python -m runner") == "runner"


def _double_for(
    moto_server: MotoServer, settings: Settings, tls: bool, tmp_path: Path
) -> tuple[IamDouble, str | None]:
    """A double with one role that may read and write the bucket and use its queue, under the
    bucket's and the queue's KMS key and the queue's TLS-only policy, as Terraform writes them
    (terraform/modules/queues/main.tf: DenyInsecureTransport)."""
    bucket_arn = f"arn:aws:s3:::{settings.bucket}"
    queue_arn = f"arn:aws:sqs:us-east-1:123456789012:{settings.queue_prefix}-chunks"
    key = "arn:aws:kms:us-east-1:123456789012:key/k"
    policy = {
        "Statement": [
            {
                "Sid": "Objects",
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:PutObject"],
                "Resource": [f"{bucket_arn}/*"],
            },
            {
                "Sid": "Chunks",
                "Effect": "Allow",
                "Action": ["sqs:GetQueueUrl", "sqs:SendMessage"],
                "Resource": [queue_arn],
            },
            {
                "Sid": "Encrypt",
                "Effect": "Allow",
                "Action": ["kms:GenerateDataKey"],
                "Resource": [key],
            },
        ]
    }
    tls_only = {
        "Statement": [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ]
    }
    context, ca = loopback_certificate(tmp_path) if tls else (None, None)
    double = IamDouble(
        moto_server.url,
        {"writer": policy},
        arn_tail="us-east-1:123456789012",
        data_keys={bucket_arn: key, queue_arn: key},
        resource_policies={queue_arn: tls_only},
        tls=context,
    )
    double.start()
    return double, None if ca is None else str(ca)


def test_kms_and_the_tls_only_queue_policy_are_enforced(
    moto_server: MotoServer, settings: Settings, tmp_path: Path
) -> None:
    """A role that may write but not decrypt under the bucket's key puts an object and cannot
    read it back (kms:Decrypt named); a queue whose policy denies insecure transport refuses
    plain HTTP (the statement named) and answers over TLS, where SendMessage needs
    kms:Decrypt too."""
    create_stack(settings)
    plain, _ = _double_for(moto_server, settings, tls=False, tmp_path=tmp_path)
    secure, ca = _double_for(moto_server, settings, tls=True, tmp_path=tmp_path)
    try:
        s3 = _client(plain, "s3", "writer")
        s3.put_object(Bucket=settings.bucket, Key="a", Body=b"x")
        assert _code(s3.get_object, Bucket=settings.bucket, Key="a") == "AccessDenied"
        assert [(d.action, d.denied_by) for d in plain.denied] == [("kms:Decrypt", "")]
        chunks = f"{settings.queue_prefix}-chunks"
        sqs = _client(plain, "sqs", "writer")
        assert _code(sqs.get_queue_url, QueueName=chunks) == "AccessDenied"
        assert plain.denied[-1].denied_by == "denied by DenyInsecureTransport"
        over_tls = _client(secure, "sqs", "writer", verify=ca)
        url = over_tls.get_queue_url(QueueName=chunks)["QueueUrl"]
        assert _code(over_tls.send_message, QueueUrl=url, MessageBody="m") == "AccessDenied"
        assert [(d.action, d.denied_by) for d in secure.denied] == [("kms:Decrypt", "")]
    finally:
        plain.stop()
        secure.stop()
