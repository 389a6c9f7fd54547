"""Lambdas: chunk results -> the assembled document; dead chunk messages -> failed chunks; dead
completion messages -> a failed record, or a report of what named no job."""

from __future__ import annotations

import functools
import json
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from handlers import clients
from handlers.batch import sqs_entry_point
from pagefleet import keys
from pagefleet.aws import is_transient
from pagefleet.chunk_results import dead_letter_result, write_result
from pagefleet.completion import CompletionOutcome, complete_job, record_dead_completion
from pagefleet.events import sources_in_sqs_body
from pagefleet.models import ChunkMessage
from pagefleet.queues import PRIOR_ATTEMPTS, prior_attempts

# One processor per handler: a processor keeps the batch in hand on itself, so the module's
# functions must not share one where a process runs them at once (tests/test_handlers.py does;
# Lambda and the embedded stack give each function environments of its own). The dead-letter
# entry points get theirs from sqs_entry_point.
processor = BatchProcessor(event_type=EventType.SQS)
logger = Logger(service="pagefleet-completion")
metrics = Metrics(namespace="pagefleet", service="completion")


# What each job's check in this batch came to: an outcome, or the error it raised.
BatchChecks = dict[tuple[str, str], CompletionOutcome | Exception]


def record_handler(record: SQSRecord, checks: BatchChecks | None = None) -> None:
    metrics.add_metric(name="CompletionMessages", unit=MetricUnit.Count, value=1)
    settings = clients.settings()
    checks = {} if checks is None else checks
    # One completion check per job per batch, however many of its results the batch announces:
    # every result announced in a batch was written before the batch was received, so the first
    # check of a job sees them all. A record whose job's check failed fails with it.
    # Each job's results the record announces, with their ETags quoted as a listing gives
    # them: an S3 event's eTag is bare hex (AWS's event structure; moto 5.2.5's
    # s3/notifications.py strips the quotes too). Only the completion's cache of parsed
    # results compares them: a mismatch would cost a read, never a wrong result.
    jobs: dict[tuple[str, str], dict[str, str]] = {}
    for source in sources_in_sqs_body(record.body):
        if parsed := keys.job_of_result(source.key):
            jobs.setdefault((source.bucket, parsed[0]), {})[source.key] = f'"{source.etag}"'
    for (bucket_name, job_id), landed in sorted(jobs.items()):
        if (bucket_name, job_id) not in checks:
            try:
                bucket = clients.bucket(settings, bucket_name)
                announce = clients.announcer(settings, logger, metrics)
                outcome = complete_job(bucket, job_id, announce, landed)
            except Exception as exc:
                checks[(bucket_name, job_id)] = exc
                raise
            checks[(bucket_name, job_id)] = outcome
            logger.info("completion check", extra={"job_id": job_id, "outcome": outcome})
            metrics.add_metric(name=f"Completion_{outcome}", unit=MetricUnit.Count, value=1)
        elif isinstance(failed := checks[(bucket_name, job_id)], Exception):
            raise failed


def dead_letter_record_handler(record: SQSRecord) -> None:
    message = ChunkMessage.model_validate(json.loads(record.body))
    # A released chunk's message carries the attempts before it (pagefleet/queues.py).
    prior = record.message_attributes[PRIOR_ATTEMPTS]
    attempts = int(record.attributes.approximate_receive_count or 0) + prior_attempts(
        prior.string_value if prior is not None else None
    )
    # A result a runner wrote meanwhile wins.
    write_result(
        clients.bucket(clients.settings(), message.bucket), dead_letter_result(message, attempts)
    )
    logger.warning(
        "chunk recorded as failed from the DLQ",
        extra={"job_id": message.job_id, "chunk": message.chunk.index},
    )
    metrics.add_metric(name="ChunksDeadLettered", unit=MetricUnit.Count, value=1)


def completion_dead_letter_record_handler(record: SQSRecord) -> None:
    """A completion message that failed every delivery. Nothing reads the completion DLQ after
    this, so whatever it holds is recorded (a failed record for its job) or reported (an error
    log and a metric, beside the DLQ's alarm): never dropped unseen (rule 3). Only a transient
    fault keeps the message, to be tried again; anything else would fail the same way until the
    DLQ's retention ended it silently."""
    metrics.add_metric(name="CompletionDeadLetterMessages", unit=MetricUnit.Count, value=1)
    receive_count = int(record.attributes.approximate_receive_count or 0)
    settings = clients.settings()
    try:
        sources = list(sources_in_sqs_body(record.body))
    except Exception as exc:
        _report_unrecorded(record, None, f"not an S3 event: {exc!r}")
        return
    for source in sources:
        try:
            parsed = keys.job_of_result(source.key)
            if parsed is None:
                _report_unrecorded(record, source.key, "not the key of a chunk result")
                continue
            bucket = clients.bucket(settings, source.bucket)
            outcome = record_dead_completion(
                bucket, parsed[0], receive_count, clients.announcer(settings, logger, metrics)
            )
        except Exception as exc:
            if is_transient(exc):
                raise
            _report_unrecorded(record, source.key, repr(exc))
            continue
        if outcome == "unrecorded":
            _report_unrecorded(record, source.key, "its job has no readable manifest")
            continue
        logger.warning(
            "dead completion message handled",
            extra={"key": source.key, "job_id": parsed[0], "outcome": outcome},
        )
        metrics.add_metric(
            name=f"CompletionsDeadLettered_{outcome}", unit=MetricUnit.Count, value=1
        )


def _report_unrecorded(record: SQSRecord, key: str | None, why: str) -> None:
    logger.error(
        "dead completion message names no job to record; reported and dropped",
        extra={"message_id": record.message_id, "key": key, "why": why, "body": record.body[:4096]},
    )
    metrics.add_metric(name="CompletionsDeadLettered_unrecorded", unit=MetricUnit.Count, value=1)


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    checks: BatchChecks = {}
    return process_partial_response(
        event=event,
        record_handler=functools.partial(record_handler, checks=checks),
        processor=processor,
        context=context,
    )


dead_letter_handler = sqs_entry_point(dead_letter_record_handler, logger, metrics)
completion_dead_letter_handler = sqs_entry_point(
    completion_dead_letter_record_handler, logger, metrics
)
