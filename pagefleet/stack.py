"""The queues and notifications of a deployment, defined once.

The local stack creates exactly this on moto; Terraform creates the same on AWS, and
`tests/test_terraform.py` reads both back and compares them with this definition.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from pagefleet import keys
from pagefleet.queues import queue_name
from pagefleet.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import NotificationConfigurationTypeDef
    from mypy_boto3_sqs.literals import QueueAttributeNameType

DAY_S = 86_400


class QueueSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str  # ingest | chunks | completion
    visibility_timeout_s: int
    retention_s: int = 4 * DAY_S
    max_receive_count: int = 5
    # Longer than the source's, or a message could expire before anyone reads the DLQ.
    dlq_retention_s: int = 14 * DAY_S
    # The chunks DLQ feeds a Lambda, and an event source queue's visibility must cover the
    # function's timeout; the same value on every DLQ keeps them alike.
    dlq_visibility_timeout_s: int = 6 * 60
    max_message_size: int = 262_144

    def name(self, prefix: str) -> str:
        return queue_name(prefix, self.role)

    def dlq_name(self, prefix: str) -> str:
        return queue_name(prefix, self.role) + "-dlq"


class NotificationSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    queue_role: str
    prefix: str
    suffix: str
    events: tuple[Literal["s3:ObjectCreated:*"], ...] = ("s3:ObjectCreated:*",)


# Lambda's rule of thumb: an event source queue's visibility is 6x the function timeout.
HANDLER_TIMEOUT_S = 60


def queue_specs(settings: Settings) -> list[QueueSpec]:
    return [
        QueueSpec(role="ingest", visibility_timeout_s=6 * HANDLER_TIMEOUT_S),
        # The runner's heartbeat extends a held chunk's lease; this is the lease of a runner
        # that died, i.e. how soon its chunk is converted again (rule 3).
        QueueSpec(role="chunks", visibility_timeout_s=settings.visibility_timeout_s),
        QueueSpec(role="completion", visibility_timeout_s=6 * HANDLER_TIMEOUT_S),
    ]


def notification_specs() -> list[NotificationSpec]:
    inbox = [
        NotificationSpec(queue_role="ingest", prefix=keys.INBOX, suffix=s)
        for s in keys.PDF_SUFFIXES
    ]
    return [
        *inbox,
        NotificationSpec(queue_role="completion", prefix=keys.JOBS, suffix=keys.RESULT_SUFFIX),
    ]


def queue_attributes(spec: QueueSpec, dlq_arn: str) -> dict[QueueAttributeNameType, str]:
    """SQS attributes of a source queue, as SetQueueAttributes/GetQueueAttributes spell them."""
    return {
        "VisibilityTimeout": str(spec.visibility_timeout_s),
        "MessageRetentionPeriod": str(spec.retention_s),
        "MaximumMessageSize": str(spec.max_message_size),
        "RedrivePolicy": json.dumps(
            {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": spec.max_receive_count}
        ),
    }


def dlq_attributes(spec: QueueSpec) -> dict[QueueAttributeNameType, str]:
    return {
        "VisibilityTimeout": str(spec.dlq_visibility_timeout_s),
        "MessageRetentionPeriod": str(spec.dlq_retention_s),
    }


def notification_configuration(queue_arns: dict[str, str]) -> NotificationConfigurationTypeDef:
    """The bucket's NotificationConfiguration for PutBucketNotificationConfiguration."""
    return {
        "QueueConfigurations": [
            {
                "Id": f"{n.queue_role}-{n.prefix.strip('/')}-{n.suffix.strip('.')}",
                "QueueArn": queue_arns[n.queue_role],
                "Events": list(n.events),
                "Filter": {
                    "Key": {
                        "FilterRules": [
                            {"Name": "prefix", "Value": n.prefix},
                            {"Name": "suffix", "Value": n.suffix},
                        ]
                    }
                },
            }
            for n in notification_specs()
        ]
    }
