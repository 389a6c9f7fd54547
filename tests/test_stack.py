"""pagefleet/stack.py's queues: the retention and attempts arithmetic of
terraform/modules/queues/README.md, which Terraform deploys from terraform/stack.json."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pagefleet.settings import Settings
from pagefleet.stack import DAY_S, QueueSpec, queue_specs


def test_every_queue_keeps_messages_as_long_as_sqs_can() -> None:
    """A fleet stuck for days loses no chunk, and no DLQ expires what its source kept."""
    for spec in queue_specs(Settings()):
        assert spec.retention_s == 14 * DAY_S, spec.role
        assert spec.dlq_retention_s >= spec.retention_s, spec.role


def test_a_dlq_that_would_expire_messages_first_is_refused() -> None:
    with pytest.raises(ValidationError, match="at least the queue's"):
        QueueSpec(role="chunks", visibility_timeout_s=60, dlq_retention_s=DAY_S)


def test_the_worker_records_a_failure_before_the_redrive_takes_the_chunk() -> None:
    chunks = next(s for s in queue_specs(Settings()) if s.role == "chunks")
    assert Settings().max_attempts < chunks.max_receive_count
