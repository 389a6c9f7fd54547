"""An SQS-fed function's entry point: the batch handled record by record, with a partial batch
response (only the records that raised return to the queue), the logger given the invocation's
context and the metrics flushed after it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

EntryPoint = Callable[[dict[str, Any], LambdaContext], PartialItemFailureResponse]


def sqs_entry_point(
    record_handler: Callable[[SQSRecord], None], logger: Logger, metrics: Metrics
) -> EntryPoint:
    # A processor of its own: a processor keeps the batch in hand on itself, so two entry
    # points of one module must not share one where a process runs both at once.
    processor = BatchProcessor(event_type=EventType.SQS)

    @metrics.log_metrics
    @logger.inject_lambda_context
    def entry_point(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
        return process_partial_response(
            event=event, record_handler=record_handler, processor=processor, context=context
        )

    return entry_point
