"""The splitter's work: one upload in, a manifest, chunk PDFs and chunk messages out."""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal

import pypdfium2 as pdfium

from pagefleet import keys
from pagefleet.chunk_results import failed_result, write_result
from pagefleet.costs import measure_pages, plan_policy
from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.job_events import Announce, JobEvent
from pagefleet.layout.outline import outline_budget, outline_of
from pagefleet.models import (
    ChunkMessage,
    ChunkSpec,
    ErrorInfo,
    JobManifest,
    JobRecord,
    PlanSummary,
    Source,
    StageTimings,
)
from pagefleet.outbox import Superseded, publish, publish_stray, published_job
from pagefleet.pdf import check_size, cut_chunk, open_pdf
from pagefleet.planning import plan_by_cost
from pagefleet.queues import SQS_BATCH, Queue
from pagefleet.settings import Settings
from pagefleet.storage import Bucket, NotFound, PreconditionFailed, Written

log = logging.getLogger(__name__)

# Chunk PDFs are written this many at a time; cutting (pdfium) stays on one thread.
_PUT_THREADS = 8
# What the splitter stores of a PDF stays within a small multiple of the upload, whatever the
# PDF holds: its manifest within a floor, a share per page (the chunk list) and a multiple of the
# upload's bytes (the outline, see pagefleet/layout/outline.py). Checked in one place,
# _checked_manifest, before anything of the job is stored or sent.
MANIFEST_FLOOR_BYTES = 256 * 1024
MANIFEST_BYTES_PER_PAGE = 128
MANIFEST_BYTES_PER_UPLOAD_BYTE = 4
# And its chunk PDFs within a floor and a multiple of the upload: every chunk copies the
# resources its pages use, so pages sharing one large image would store it once per chunk.
# The shared corpus cut into one chunk per page stays under 16x its size.
CHUNKS_FLOOR_BYTES = 64 * 1024 * 1024
CHUNKS_BYTES_PER_UPLOAD_BYTE = 16

SplitOutcome = Literal["split", "failed", "skipped"]


def split_upload(
    source: Source,
    bucket: Bucket,
    chunks: Queue,
    settings: Settings,
    announce: Announce | None = None,
) -> SplitOutcome:
    """Turn one upload into a job; returns what happened. A job that ends here (bad input) is
    announced by ``announce``, once: by the call that wrote its record.

    Idempotent (rule 1): a ``sent`` marker, written once every chunk message is out, ends
    repeats of the event; a repeat before it (a crashed or concurrent run) does the work again
    and writes the same objects. Its resent chunk messages only cost a repeated conversion
    that writes the same result. A repeat looks for the marker once it meets the job's
    manifest, or an upload gone since its split: the first delivery, nearly every one, spends
    no request on it.
    """
    job_id = source.job_id
    started = time.time()
    try:
        if problem := keys.key_problem(keys.rel_of(source.key)):
            raise PagefleetError(ErrorCode.BAD_KEY, f"{source.key} is refused: {problem}")
        doc, size = _open(source, bucket, settings)
    except PagefleetError as exc:
        if _sent(bucket, job_id):  # split already, then deleted or replaced: its job stands
            return "skipped"
        _fail(bucket, source, exc, time.time() - started, announce)
        return "failed"
    try:
        manifest, unlinked, planned_before = _write_manifest(
            source, doc, size, bucket, settings, started
        )
        if planned_before and _sent(bucket, job_id):
            return "skipped"
        _publish_chunks(doc, manifest, size, bucket, chunks, unlinked)
    except PagefleetError as exc:  # too large a manifest, or no range could be cut: none sent
        _fail(bucket, source, exc, time.time() - started, announce)
        return "failed"
    finally:
        doc.close()
    bucket.put(keys.sent_marker(job_id), b"")
    return "split"


def _sent(bucket: Bucket, job_id: str) -> bool:
    """Whether a split of the job sent every chunk message (its marker is there)."""
    return bucket.head(keys.sent_marker(job_id)) is not None


def refuse_stray(source: Source, bucket: Bucket, announce: Announce | None = None) -> SplitOutcome:
    """An inbox object not named .pdf gets a record saying so (every upload gets one), rather
    than being converted under a name that could be another upload's (keys.py)."""
    if source.key == keys.INBOX.rstrip("/"):
        fix = "`aws s3 cp my.pdf s3://BUCKET/inbox/` (with the slash) puts it in the inbox"
        message = f"the key is `{source.key}`, not a key under {keys.INBOX}: {fix}"
    else:
        message = (
            f"{source.key} is not named .pdf: only PDFs are converted; a PDF named otherwise "
            "converts once uploaded as <name>.pdf"
        )
    _fail(bucket, source, PagefleetError(ErrorCode.NOT_PDF, message), 0.0, announce)
    return "failed"


def record_dead_upload(
    source: Source, bucket: Bucket, receive_count: int, announce: Announce | None = None
) -> SplitOutcome:
    """An upload whose event reached the ingest DLQ ends with a failed record (rule 3), unless
    its job got further than that (it was split, or has its record)."""
    if _sent(bucket, source.job_id):
        return "skipped"
    if published_job(bucket, source.key) == source.job_id:
        return "skipped"
    error = PagefleetError(
        ErrorCode.DEAD_LETTER,
        f"the splitter failed on this upload {receive_count} times; its logs say why. "
        f"`pagefleet reconvert {source.key}` retries it once the cause is fixed",
    )
    _fail(bucket, source, error, 0.0, announce)
    return "failed"


def _open(source: Source, bucket: Bucket, settings: Settings) -> tuple[pdfium.PdfDocument, int]:
    """The upload, opened, and its size in bytes."""
    if source.size is not None:
        check_size(source.size, settings.max_bytes)  # before downloading a file too large
    try:
        data = bucket.get(source.key, if_match=source.etag or None, version_id=source.version_id)
    except (PreconditionFailed, NotFound) as exc:
        # A newer upload of the key has its own event and job; this one still gets its record.
        raise PagefleetError(
            ErrorCode.INPUT_GONE, f"{source.key} was deleted or replaced before it was split"
        ) from exc
    return open_pdf(data, max_bytes=settings.max_bytes, max_pages=settings.max_pages), len(data)


def _write_manifest(
    source: Source,
    doc: pdfium.PdfDocument,
    size: int,
    bucket: Bucket,
    settings: Settings,
    started: float,
) -> tuple[JobManifest, frozenset[int], bool]:
    """The plan, written before any chunk is sent: a result never precedes its manifest.
    ``size``: the upload's bytes, which bound what of the PDF the manifest holds. Returned
    with the pages the measuring found without links to mend (PageCosts.unlinked), and
    whether an earlier run of the event had written it (the job's manifest is then that
    one)."""
    costs = measure_pages(doc, settings)
    policy = plan_policy(settings, costs)
    total = sum(costs.seconds)
    manifest = JobManifest(
        job_id=source.job_id,
        rel=keys.rel_of(source.key),
        source=source,
        pages=len(doc),
        chunks=plan_by_cost(costs.seconds, policy),
        plan=PlanSummary(
            converter=settings.converter,
            lanes=policy.lanes,
            target_s=round(policy.chunk_target_s(total), 4),
            estimated_s=round(total, 4),
            ocr_pages=costs.ocr_pages,
            measure_s=round(costs.measure_s, 4),
        ),
        outline=outline_of(doc, costs.frames, budget=outline_budget(size)),
        created_at=started,
        split_s=time.time() - started,
    )
    try:
        bucket.put(
            keys.manifest(source.job_id),
            _checked_manifest(manifest, size),
            content_type="application/json",
            if_none_match=True,
        )
    except PreconditionFailed:
        # An earlier or concurrent run of this event planned it; its manifest is the job's.
        manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(source.job_id)))
        return manifest, costs.unlinked, True
    return manifest, costs.unlinked, False


def _checked_manifest(manifest: JobManifest, size: int) -> bytes:
    """The manifest's JSON, if it is within the limit for an upload of ``size`` bytes; else the
    job fails as too large, with nothing stored or sent."""
    body = manifest.model_dump_json().encode()
    limit = (
        MANIFEST_FLOOR_BYTES
        + MANIFEST_BYTES_PER_PAGE * manifest.pages
        + MANIFEST_BYTES_PER_UPLOAD_BYTE * size
    )
    if len(body) > limit:
        raise PagefleetError(
            ErrorCode.TOO_LARGE,
            f"what the file describes of itself (its outline, its pages) would take "
            f"{len(body):,} bytes, over the {limit:,} allowed for a file of {size:,} bytes",
        )
    return body


def _publish_chunks(
    doc: pdfium.PdfDocument,
    manifest: JobManifest,
    size: int,
    bucket: Bucket,
    chunks: Queue,
    unlinked: frozenset[int],
) -> None:
    """Cut, write and announce the chunks in order, a batch of messages as soon as its chunks
    are written, so runners start while later chunks are still being cut: the first batch as
    soon as there is a chunk for each lane of the fleet, then up to SQS's batch size.

    A page range that cannot be cut, or whose PDF would take the chunks past their share of an
    upload of ``size`` bytes, is recorded as a failed chunk and the job ends ``partial``; if no
    range can be cut, the job fails (the error is raised before anything is announced).
    """
    uncut: list[tuple[ChunkSpec, PagefleetError]] = []
    batch = min(manifest.plan.lanes if manifest.plan else SQS_BATCH, SQS_BATCH)
    room = CHUNKS_FLOOR_BYTES + CHUNKS_BYTES_PER_UPLOAD_BYTE * size
    with ThreadPoolExecutor(_PUT_THREADS) as pool:
        pending: list[tuple[ChunkSpec, Future[Written]]] = []
        for chunk in manifest.chunks:
            try:
                pdf = _cut(doc, chunk, room, unlinked)
            except PagefleetError as exc:
                uncut.append((chunk, exc))
            else:
                room -= len(pdf)
                key = keys.chunk_pdf(manifest.job_id, chunk.index)
                written = pool.submit(bucket.put, key, pdf, content_type="application/pdf")
                pending.append((chunk, written))
            if len(pending) == batch or (pending and chunk is manifest.chunks[-1]):
                _send(manifest, pending, chunks)
                pending, batch = [], SQS_BATCH
    if len(uncut) == len(manifest.chunks):
        raise uncut[0][1]
    for chunk, cause in uncut:
        error = ErrorInfo(code=cause.code, message=cause.message)
        write_result(bucket, failed_result(manifest.job_id, chunk, error, attempts=1))


def _cut(doc: pdfium.PdfDocument, chunk: ChunkSpec, room: int, unlinked: frozenset[int]) -> bytes:
    """The chunk's PDF, if it fits in the ``room`` (bytes) the job's chunks have left."""
    pdf = cut_chunk(doc, chunk, unlinked=unlinked) if room > 0 else b""
    if not 0 < len(pdf) <= room:
        raise PagefleetError(
            ErrorCode.TOO_LARGE,
            f"pages {chunk.first_page}-{chunk.last_page} were not converted: the file's chunk "
            f"PDFs would pass their share of {CHUNKS_FLOOR_BYTES >> 20} MiB and "
            f"{CHUNKS_BYTES_PER_UPLOAD_BYTE}x its size (its pages share fonts or images that "
            "every chunk copies)",
        )
    return pdf


def _send(
    manifest: JobManifest, pending: list[tuple[ChunkSpec, Future[Written]]], chunks: Queue
) -> None:
    for _, written in pending:
        written.result()  # a message never announces a chunk PDF that is not there yet
    now = time.time()
    chunks.send_all(
        [
            ChunkMessage(
                job_id=manifest.job_id,
                bucket=manifest.source.bucket,
                chunk=chunk,
                chunk_count=len(manifest.chunks),
                sent_at=now,
            ).model_dump_json()
            for chunk, _ in pending
        ]
    )


def _fail(
    bucket: Bucket,
    source: Source,
    exc: PagefleetError,
    split_s: float,
    announce: Announce | None = None,
) -> None:
    """Bad input ends its job here and now, with a record that says why (rule 4)."""
    log.info("job %s failed at split: %s", source.job_id, exc)
    record = JobRecord(
        status="failed",
        job_id=source.job_id,
        source=source,
        pages=0,
        error=ErrorInfo(code=exc.code, message=exc.message),
        timings=StageTimings(split_s=split_s, total_s=split_s),
        finished_at=time.time(),
    )
    try:
        if keys.is_stray(source.key):
            published = publish_stray(bucket, record)
        else:
            published = publish(bucket, keys.rel_of(source.key), record)
    except Superseded:
        log.info("a newer upload of %s already has its record", source.key)
        return
    if published is not None and announce is not None:
        announce(JobEvent.of(published))
