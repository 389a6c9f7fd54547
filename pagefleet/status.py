"""What a running stack is doing, for the operator: queue depths, jobs in flight, jobs finished,
and one document's chunks. Read-only; works the same against the embedded stack and AWS.

Jobs in flight are the manifests under ``jobs/`` whose upload has no record yet; finished jobs
are the records under ``outbox/``. Both are LISTs and GETs, fine for an operator's look at a
bucket of thousands of documents, not a metrics pipeline (CloudWatch has those).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pagefleet import keys
from pagefleet.models import ChunkResult, JobManifest, JobRecord
from pagefleet.outbox import published_job
from pagefleet.queues import QueueDepth, queue_depth
from pagefleet.settings import Settings
from pagefleet.stack import queue_specs
from pagefleet.storage import Bucket, NotFound

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

_READERS = 8  # concurrent GETs when reading many small objects


@dataclass(frozen=True)
class QueueView:
    role: str
    queue: QueueDepth
    dead_letters: QueueDepth


def queue_status(sqs: SQSClient, settings: Settings) -> list[QueueView]:
    """Each queue of the stack and its DLQ."""
    statuses = []
    for spec in queue_specs(settings):
        url = sqs.get_queue_url(QueueName=spec.name(settings.queue_prefix))["QueueUrl"]
        dlq = sqs.get_queue_url(QueueName=spec.dlq_name(settings.queue_prefix))["QueueUrl"]
        statuses.append(QueueView(spec.role, queue_depth(sqs, url), queue_depth(sqs, dlq)))
    return statuses


ChunkState = Literal["done", "failed", "pending"]


@dataclass(frozen=True)
class ChunkView:
    index: int
    first_page: int
    last_page: int
    state: ChunkState
    attempts: int = 0
    seconds: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class JobView:
    """One job: in flight (``record`` None) or finished."""

    job_id: str
    rel: str
    pages: int
    chunks: list[ChunkView]
    record: JobRecord | None = None
    created_at: float = 0.0

    @property
    def state(self) -> str:
        return self.record.status if self.record else "converting"

    @property
    def chunks_done(self) -> int:
        return sum(1 for c in self.chunks if c.state != "pending")


def _read_all(bucket: Bucket, object_keys: list[str]) -> list[bytes]:
    with ThreadPoolExecutor(_READERS) as pool:
        return list(pool.map(bucket.get, object_keys))


def jobs_in_flight(bucket: Bucket) -> list[JobView]:
    """Jobs whose manifest exists and whose upload has no record from them yet, oldest first."""
    listed = bucket.list_keys(keys.JOBS)
    manifests = [
        JobManifest.model_validate_json(body)
        for body in _read_all(bucket, [k for k in listed if keys.is_manifest(k)])
    ]
    results: dict[str, set[int]] = {}
    for key in listed:
        if parsed := keys.job_of_result(key):
            results.setdefault(parsed[0], set()).add(parsed[1])
    in_flight = []
    for manifest in manifests:
        if published_job(bucket, manifest.rel) == manifest.job_id:  # a HEAD, not the record
            continue
        done = results.get(manifest.job_id, set())
        chunks = [
            ChunkView(c.index, c.first_page, c.last_page, "done" if c.index in done else "pending")
            for c in manifest.chunks
        ]
        in_flight.append(
            JobView(
                manifest.job_id, manifest.rel, manifest.pages, chunks, None, manifest.created_at
            )
        )
    return sorted(in_flight, key=lambda job: job.created_at)


def jobs_finished(bucket: Bucket) -> list[JobRecord]:
    """Every record in the outbox, most recently finished first."""
    record_keys = [k for k in bucket.list_keys(keys.OUTBOX) if keys.is_outbox_record(k)]
    records = [JobRecord.model_validate_json(body) for body in _read_all(bucket, record_keys)]
    return sorted(records, key=lambda record: record.finished_at, reverse=True)


def job_status(bucket: Bucket, rel: str) -> JobView | None:
    """The newest job of ``rel``: in flight if a newer upload is converting, else its record."""
    newest = max(
        (job for job in jobs_in_flight(bucket) if job.rel == rel),
        key=lambda job: job.created_at,
        default=None,
    )
    if newest is not None:
        return _with_results(bucket, newest)
    record = _record(bucket, rel)
    if record is None:
        return None
    chunks = [
        ChunkView(
            c.index,
            c.first_page,
            c.last_page,
            c.status,
            c.attempts,
            c.seconds,
            f"{c.error.code}: {c.error.message}" if c.error else "",
        )
        for c in record.chunks
    ]
    return JobView(record.job_id, rel, record.pages, chunks, record)


def _with_results(bucket: Bucket, job: JobView) -> JobView:
    """``job`` with each landed chunk's outcome, attempts and time read from its result."""
    chunks = []
    for chunk in job.chunks:
        if chunk.state == "pending":
            chunks.append(chunk)
            continue
        result = ChunkResult.model_validate_json(
            bucket.get(keys.chunk_result(job.job_id, chunk.index))
        )
        error = f"{result.error.code}: {result.error.message}" if result.error else ""
        chunks.append(
            ChunkView(
                chunk.index,
                chunk.first_page,
                chunk.last_page,
                "pending" if result.status == "split" else result.status,  # its halves convert
                result.attempts,
                result.convert_s,
                error,
            )
        )
    return JobView(job.job_id, job.rel, job.pages, chunks, None, job.created_at)


def _record(bucket: Bucket, rel: str) -> JobRecord | None:
    try:
        return JobRecord.model_validate_json(bucket.get(keys.outbox_record(rel)))
    except NotFound:
        return None
