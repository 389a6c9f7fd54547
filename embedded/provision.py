"""Create the deployment's bucket, queues, DLQs and notifications from pagefleet/stack.py, or
find them where they exist already (a server of your own, a stack Terraform made)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, overload

from botocore.exceptions import ClientError

from pagefleet import aws, stack
from pagefleet.queues import queue_arn
from pagefleet.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient

# The embedded stack's own calls (the event source mappings, the janitor) say who they are in
# the User-Agent (`app/...`): on AWS they are AWS's own services, and a fault-injecting proxy
# in front of the endpoint leaves them alone (tests/fault_proxy.py).
STACK_APP_ID = "pagefleet-embedded-stack"


@dataclass
class Stack:
    settings: Settings
    s3: S3Client
    sqs: SQSClient
    queue_urls: dict[str, str] = field(default_factory=dict)  # role -> url
    dlq_urls: dict[str, str] = field(default_factory=dict)
    queue_arns: dict[str, str] = field(default_factory=dict)
    dlq_arns: dict[str, str] = field(default_factory=dict)
    found: list[str] = field(default_factory=list)  # what existed already (open_stack)
    created: list[str] = field(default_factory=list)


@overload
def stack_client(service: Literal["s3"], settings: Settings) -> S3Client: ...
@overload
def stack_client(service: Literal["sqs"], settings: Settings) -> SQSClient: ...
def stack_client(service: Literal["s3", "sqs"], settings: Settings) -> S3Client | SQSClient:
    """A client as :func:`pagefleet.aws.client` makes, that says it is the embedded stack."""
    if service == "s3":
        return aws.client("s3", settings, app_id=STACK_APP_ID)
    return aws.client("sqs", settings, app_id=STACK_APP_ID)


def create_stack(settings: Settings, *, create_bucket: bool = True) -> Stack:
    """Create (or find, since every call is idempotent) the stack that Terraform deploys."""
    s3, sqs = stack_client("s3", settings), stack_client("sqs", settings)
    built = Stack(settings=settings, s3=s3, sqs=sqs)
    for spec in stack.queue_specs(settings):
        dlq_url = sqs.create_queue(
            QueueName=spec.dlq_name(settings.queue_prefix),
            Attributes=stack.dlq_attributes(spec),
        )["QueueUrl"]
        dlq_arn = queue_arn(sqs, dlq_url)
        url = sqs.create_queue(
            QueueName=spec.name(settings.queue_prefix),
            Attributes=stack.queue_attributes(spec, dlq_arn),
        )["QueueUrl"]
        built.queue_urls[spec.role], built.dlq_urls[spec.role] = url, dlq_url
        built.queue_arns[spec.role], built.dlq_arns[spec.role] = queue_arn(sqs, url), dlq_arn
    if create_bucket:
        s3.create_bucket(Bucket=settings.bucket)
        s3.put_bucket_versioning(
            Bucket=settings.bucket, VersioningConfiguration={"Status": "Enabled"}
        )
        s3.put_bucket_notification_configuration(
            Bucket=settings.bucket,
            NotificationConfiguration=stack.notification_configuration(built.queue_arns),
        )
    built.created = ["queues", "bucket"] if create_bucket else ["queues"]
    return built


def _queue_url(sqs: SQSClient, name: str) -> str | None:
    try:
        url: str = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    except ClientError as exc:
        if "NonExistentQueue" in (aws.error_code(exc) or "") or "QueueDoesNotExist" in str(exc):
            return None
        raise
    return url


def open_stack(settings: Settings) -> Stack:
    """The stack at ``settings.endpoint_url``: what exists is used as it is (a queue's
    attributes, the bucket's versioning and notifications are left alone), what is missing is
    created as :func:`create_stack` would. ``found`` and ``created`` say which was which."""
    s3, sqs = stack_client("s3", settings), stack_client("sqs", settings)
    built = Stack(settings=settings, s3=s3, sqs=sqs)
    for spec in stack.queue_specs(settings):
        for role_urls, role_arns, name, attributes in (
            (built.dlq_urls, built.dlq_arns, spec.dlq_name(settings.queue_prefix), None),
            (built.queue_urls, built.queue_arns, spec.name(settings.queue_prefix), spec),
        ):
            url = _queue_url(sqs, name)
            if url is None:
                attrs = (
                    stack.dlq_attributes(spec)
                    if attributes is None
                    else stack.queue_attributes(spec, built.dlq_arns[spec.role])
                )
                url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
                built.created.append(name)
            else:
                built.found.append(name)
            role_urls[spec.role], role_arns[spec.role] = url, queue_arn(sqs, url)
    try:
        s3.head_bucket(Bucket=settings.bucket)
    except ClientError:
        s3.create_bucket(Bucket=settings.bucket)
        s3.put_bucket_versioning(
            Bucket=settings.bucket, VersioningConfiguration={"Status": "Enabled"}
        )
        built.created.append(f"s3://{settings.bucket}")
    else:
        built.found.append(f"s3://{settings.bucket}")
    configured = s3.get_bucket_notification_configuration(Bucket=settings.bucket)
    if not configured.get("QueueConfigurations"):
        s3.put_bucket_notification_configuration(
            Bucket=settings.bucket,
            NotificationConfiguration=stack.notification_configuration(built.queue_arns),
        )
        built.created.append("notifications")
    return built
