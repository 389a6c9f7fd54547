"""Lambdas: S3 upload notifications (through the ingest queue) -> a job split into chunks;
dead upload notifications (the ingest DLQ) -> a failed record, so every upload gets one."""

from __future__ import annotations

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
from pagefleet import keys
from pagefleet.events import sources_in_sqs_body
from pagefleet.models import Source
from pagefleet.splitting import record_dead_upload, refuse_stray, split_upload

processor = BatchProcessor(event_type=EventType.SQS)
dead_letter_processor = BatchProcessor(event_type=EventType.SQS)  # one per handler
logger = Logger(service="pagefleet-splitter")
metrics = Metrics(namespace="pagefleet", service="splitter")


def split(source: Source) -> None:
    settings = clients.settings()
    bucket = clients.bucket(settings, source.bucket)
    announce = clients.announcer(settings, logger, metrics)
    if keys.is_upload(source.key):
        chunks = clients.queue(settings, "chunks")
        outcome = split_upload(source, bucket, chunks, settings, announce)
    elif keys.is_stray(source.key):
        outcome = refuse_stray(source, bucket, announce)
    else:  # beside the inbox (`inboxes/`), or a folder marker in it
        logger.info("not an upload, skipped", extra={"key": source.key})
        return
    logger.info(
        "upload handled", extra={"key": source.key, "job_id": source.job_id, "outcome": outcome}
    )
    metrics.add_metric(name=f"Uploads_{outcome}", unit=MetricUnit.Count, value=1)


def record_handler(record: SQSRecord) -> None:
    metrics.add_metric(name="IngestMessages", unit=MetricUnit.Count, value=1)
    for source in sources_in_sqs_body(record.body):
        split(source)


def dead_letter_record_handler(record: SQSRecord) -> None:
    receive_count = int(record.attributes.approximate_receive_count or 0)
    for source in sources_in_sqs_body(record.body):
        if not (keys.is_upload(source.key) or keys.is_stray(source.key)):
            continue
        settings = clients.settings()
        bucket = clients.bucket(settings, source.bucket)
        announce = clients.announcer(settings, logger, metrics)
        outcome = record_dead_upload(source, bucket, receive_count, announce)
        logger.warning(
            "dead upload notification",
            extra={"key": source.key, "job_id": source.job_id, "outcome": outcome},
        )
        metrics.add_metric(name="UploadsDeadLettered", unit=MetricUnit.Count, value=1)


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )


@metrics.log_metrics
@logger.inject_lambda_context
def dead_letter_handler(
    event: dict[str, Any], context: LambdaContext
) -> PartialItemFailureResponse:
    return process_partial_response(
        event=event,
        record_handler=dead_letter_record_handler,
        processor=dead_letter_processor,
        context=context,
    )
