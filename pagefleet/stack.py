"""The queues and notifications of a deployment, defined once.

The local stack creates exactly this on moto; Terraform creates the same on AWS, and
`tests/test_terraform.py` reads both back and compares them with this definition.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from pagefleet import keys
from pagefleet.queues import queue_name
from pagefleet.settings import Settings

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import FilterRuleTypeDef, NotificationConfigurationTypeDef
    from mypy_boto3_sqs.literals import QueueAttributeNameType

DAY_S = 86_400
MAX_RETENTION_S = 14 * DAY_S  # SQS's longest


class QueueSpec(BaseModel):
    """One source queue and its DLQ. terraform/modules/queues/README.md has the arithmetic
    behind the retention and maxReceiveCount."""

    model_config = ConfigDict(frozen=True)

    role: str  # ingest | chunks | completion
    visibility_timeout_s: int
    # As long as SQS keeps anything: a fleet stuck for days (no GPU capacity, a broken image)
    # loses no chunk, and the oldest-chunk alarm has two weeks to be heard (rule 3).
    retention_s: int = MAX_RETENTION_S
    # Deliveries that end in no result: a release on drain or Spot interruption is none, it
    # sends the chunk again as a new message (pagefleet/queues.py: AsyncQueue.release).
    max_receive_count: int = 5
    # A standard queue's DLQ keeps a message's first enqueue time, so it expires a message when
    # the source would have: equal to the source's loses nothing the source would have kept, and
    # each DLQ's consumer takes what arrives at once.
    dlq_retention_s: int = MAX_RETENTION_S
    # The chunks DLQ feeds a Lambda, and an event source queue's visibility must cover the
    # function's timeout; the same value on every DLQ keeps them alike.
    dlq_visibility_timeout_s: int = 6 * 60
    max_message_size: int = 262_144

    @model_validator(mode="after")
    def _retention_fits(self) -> QueueSpec:
        if not self.retention_s <= self.dlq_retention_s <= MAX_RETENTION_S:
            raise ValueError(
                f"{self.role}: the DLQ's retention ({self.dlq_retention_s} s) must be at least "
                f"the queue's ({self.retention_s} s) and at most SQS's {MAX_RETENTION_S} s"
            )
        return self

    def name(self, prefix: str) -> str:
        return queue_name(prefix, self.role)

    def dlq_name(self, prefix: str) -> str:
        return queue_name(prefix, self.role) + "-dlq"


class NotificationSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    queue_role: str
    prefix: str
    suffix: str = ""
    events: tuple[Literal["s3:ObjectCreated:*"], ...] = ("s3:ObjectCreated:*",)

    @property
    def rule_id(self) -> str:
        return "-".join(p for p in (self.queue_role, self.prefix.strip("/"), self.suffix[1:]) if p)

    def filter_rules(self) -> list[FilterRuleTypeDef]:
        rules: list[FilterRuleTypeDef] = [{"Name": "prefix", "Value": self.prefix}]
        if self.suffix:
            rules.append({"Name": "suffix", "Value": self.suffix})
        return rules


# Lambda's rule of thumb: an event source queue's visibility is 6x the function timeout.
HANDLER_TIMEOUT_S = 60
# Messages per invocation of each function's event source mapping, by Terraform's function key
# (terraform/modules/functions). One upload per splitter invocation bounds its memory and time
# by one PDF's; the others handle small JSON records.
BATCH_SIZES = {
    "splitter": 1,
    "completion": 10,
    "dead_letter": 10,
    "upload_dead_letter": 10,
    "completion_dead_letter": 10,
}


def queue_specs(settings: Settings) -> list[QueueSpec]:
    return [
        QueueSpec(role="ingest", visibility_timeout_s=6 * HANDLER_TIMEOUT_S),
        # The runner's heartbeat extends a held chunk's lease; this is the lease of a runner
        # that died, i.e. how soon its chunk is converted again (rule 3).
        QueueSpec(role="chunks", visibility_timeout_s=settings.visibility_timeout_s),
        QueueSpec(role="completion", visibility_timeout_s=6 * HANDLER_TIMEOUT_S),
    ]


def notification_specs() -> list[NotificationSpec]:
    return [
        # Every key in the inbox, PDF or not, and ``inbox`` itself: each gets a record
        # (keys.is_upload, keys.is_stray); the splitter skips the few others the prefix takes.
        NotificationSpec(queue_role="ingest", prefix=keys.INBOX.rstrip("/")),
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
                "Id": n.rule_id,
                "QueueArn": queue_arns[n.queue_role],
                "Events": list(n.events),
                "Filter": {"Key": {"FilterRules": n.filter_rules()}},
            }
            for n in notification_specs()
        ]
    }
