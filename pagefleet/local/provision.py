"""Create the deployment's bucket, queues, DLQs and notifications from pagefleet/stack.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pagefleet import aws, stack
from pagefleet.queues import queue_arn
from pagefleet.settings import Settings


@dataclass
class Stack:
    settings: Settings
    s3: Any
    sqs: Any
    queue_urls: dict[str, str] = field(default_factory=dict)  # role -> url
    dlq_urls: dict[str, str] = field(default_factory=dict)
    queue_arns: dict[str, str] = field(default_factory=dict)
    dlq_arns: dict[str, str] = field(default_factory=dict)


def create_stack(settings: Settings, *, create_bucket: bool = True) -> Stack:
    """Create (or find, since every call is idempotent) the stack that Terraform deploys."""
    s3, sqs = aws.client("s3", settings), aws.client("sqs", settings)
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
    return built
