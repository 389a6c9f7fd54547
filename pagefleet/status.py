"""What a running stack is doing, for the operator: queue depths, jobs in flight, jobs finished,
and one document's chunks. Read-only; works the same against the embedded stack and AWS.

Jobs in flight are the manifests under ``jobs/`` whose upload has no record yet; finished jobs
are the records under ``outbox/``. Both are LISTs and GETs, fine for an operator's look at a
bucket of thousands of documents, not a metrics pipeline (CloudWatch has those).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel

from pagefleet import keys
from pagefleet.models import ChunkResult, JobManifest, JobRecord, parsed
from pagefleet.outbox import placement, published_job
from pagefleet.queues import QueueDepth, queue_depth
from pagefleet.settings import Settings
from pagefleet.stack import queue_specs
from pagefleet.storage import Bucket, NotFound

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

_READERS = 8  # concurrent GETs when reading many small objects
_Read = TypeVar("_Read", bound=BaseModel)


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
    key: str = ""  # the upload's inbox key

    @property
    def state(self) -> str:
        return self.record.status if self.record else "converting"

    @property
    def chunks_done(self) -> int:
        return sum(1 for c in self.chunks if c.state != "pending")


def _read_all(bucket: Bucket, model: type[_Read], object_keys: list[str]) -> list[_Read]:
    with ThreadPoolExecutor(_READERS) as pool:
        bodies = pool.map(bucket.get, object_keys)
        read = [parsed(model, key, body) for key, body in zip(object_keys, bodies, strict=True)]
    return [item for item in read if item is not None]


def jobs_in_flight(bucket: Bucket) -> list[JobView]:
    """Jobs whose manifest exists and whose upload has no record from them yet, oldest first."""
    listed = bucket.list_keys(keys.JOBS)
    manifests = _read_all(bucket, JobManifest, [k for k in listed if keys.is_manifest(k)])
    results: dict[str, set[int]] = {}
    for key in listed:
        if result := keys.job_of_result(key):
            results.setdefault(result[0], set()).add(result[1])
    in_flight = []
    for manifest in manifests:
        if published_job(bucket, manifest.source.key) == manifest.job_id:  # HEADs, no GET
            continue
        done = results.get(manifest.job_id, set())
        chunks = [
            ChunkView(c.index, c.first_page, c.last_page, "done" if c.index in done else "pending")
            for c in manifest.chunks
        ]
        in_flight.append(
            JobView(
                manifest.job_id,
                manifest.rel,
                manifest.pages,
                chunks,
                None,
                manifest.created_at,
                manifest.source.key,
            )
        )
    return sorted(in_flight, key=lambda job: job.created_at)


def jobs_finished(bucket: Bucket) -> list[JobRecord]:
    """Every record in the outbox, most recently finished first."""
    record_keys = [k for k in bucket.list_keys(keys.OUTBOX) if keys.is_outbox_record(k)]
    records = _read_all(bucket, JobRecord, record_keys)
    return sorted(records, key=lambda record: record.finished_at, reverse=True)


def job_status(bucket: Bucket, document: keys.Document) -> JobView | None:
    """The newest job of ``document``: in flight if a newer upload is converting, else its
    record."""
    found = find_record(bucket, document)
    key = document.inbox or (found[1].source.key if found else None)
    newest = max(
        (
            job
            for job in jobs_in_flight(bucket)
            if (job.key == key if key else job.rel == document.rel)
        ),
        key=lambda job: job.created_at,
        default=None,
    )
    if newest is not None:
        return _with_results(bucket, newest)
    if found is None:
        return None
    record = found[1]
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
    rel = keys.rel_of(record.source.key)
    return JobView(record.job_id, rel, record.pages, chunks, record, key=record.source.key)


def _with_results(bucket: Bucket, job: JobView) -> JobView:
    """``job`` with each landed chunk's outcome, attempts and time read from its result."""
    chunks = []
    for chunk in job.chunks:
        if chunk.state == "pending":
            chunks.append(chunk)
            continue
        result_key = keys.chunk_result(job.job_id, chunk.index)
        result = parsed(ChunkResult, result_key, bucket.get(result_key))
        if result is None:
            chunks.append(chunk)
            continue
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
    return JobView(job.job_id, job.rel, job.pages, chunks, None, job.created_at, job.key)


def find_record(bucket: Bucket, document: keys.Document) -> tuple[str, JobRecord] | None:
    """The key and the record of ``document``, if it has one: where its inbox key's outputs are
    placed (outbox.py), or where its name says; never another upload's record."""
    if document.record is not None:
        record_key = document.record
    elif document.inbox is not None:
        variant = placement(bucket.head, document.inbox).variant
        record_key = keys.outbox_record(keys.rel_of(document.inbox), variant)
    else:
        record_key = keys.outbox_record(document.rel or "")
    try:
        record = parsed(JobRecord, record_key, bucket.get(record_key))
    except NotFound:
        return None
    if record is None or document.inbox not in (None, record.source.key):
        return None
    return record_key, record
