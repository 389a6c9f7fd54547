"""The splitter's work: one upload in, a manifest, chunk PDFs and chunk messages out."""

from __future__ import annotations

import logging
import time

from pagefleet import keys
from pagefleet.errors import PagefleetError
from pagefleet.layout.outline import outline_of
from pagefleet.models import ChunkMessage, ErrorInfo, JobManifest, JobRecord, Source, StageTimings
from pagefleet.outbox import Superseded, publish
from pagefleet.pdf import check_size, cut_chunks, open_pdf
from pagefleet.planning import plan_chunks
from pagefleet.queues import Queue
from pagefleet.settings import Settings
from pagefleet.storage import Bucket, NotFound, PreconditionFailed

log = logging.getLogger(__name__)


def split_upload(source: Source, bucket: Bucket, chunks: Queue, settings: Settings) -> str:
    """Turn one upload into a job; returns what happened ("split", "failed", "skipped").

    Idempotent (rule 1): the manifest is created once, and its messages are resent until a
    ``sent`` marker says a run got all of them out. Resent chunk messages only cost a
    repeated conversion that writes the same result.
    """
    job_id = source.job_id
    if bucket.head(keys.job_prefix(job_id) + "sent") is not None:
        return "skipped"
    existing = bucket.head(keys.manifest(job_id))
    if existing is not None:
        manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(job_id)))
    else:
        started = time.time()
        try:
            manifest = _split(source, bucket, settings, started)
        except PagefleetError as exc:
            _fail(bucket, source, exc, time.time() - started)
            return "failed"
        except (PreconditionFailed, NotFound) as exc:
            # The key was overwritten or deleted since this event: that upload no longer exists,
            # and a newer one has its own event.
            log.warning("upload %s is gone (%s); nothing to convert", source.key, exc)
            return "skipped"
    _send(manifest, chunks)
    bucket.put(keys.job_prefix(job_id) + "sent", b"")
    return "split"


def _split(source: Source, bucket: Bucket, settings: Settings, started: float) -> JobManifest:
    if source.size is not None:
        check_size(source.size, settings.max_bytes)  # before downloading a file too large
    data = bucket.get(source.key, if_match=source.etag or None, version_id=source.version_id)
    doc = open_pdf(data, max_bytes=settings.max_bytes, max_pages=settings.max_pages)
    try:
        pages = len(doc)
        outline = outline_of(doc)
        plan = plan_chunks(pages, settings.chunk_pages)
        for chunk, pdf in cut_chunks(doc, plan):
            bucket.put(
                keys.chunk_pdf(source.job_id, chunk.index), pdf, content_type="application/pdf"
            )
    finally:
        doc.close()
    manifest = JobManifest(
        job_id=source.job_id,
        rel=keys.rel_of(source.key),
        source=source,
        pages=pages,
        chunks=plan,
        outline=outline,
        created_at=started,
        split_s=time.time() - started,
    )
    try:
        bucket.put(
            keys.manifest(source.job_id),
            manifest.model_dump_json().encode(),
            content_type="application/json",
            if_none_match=True,
        )
    except PreconditionFailed:
        # A twin delivery of this event split it concurrently; its manifest is the job's.
        return JobManifest.model_validate_json(bucket.get(keys.manifest(source.job_id)))
    return manifest


def _send(manifest: JobManifest, chunks: Queue) -> None:
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
            for chunk in manifest.chunks
        ]
    )


def _fail(bucket: Bucket, source: Source, exc: PagefleetError, split_s: float) -> None:
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
        publish(bucket, keys.rel_of(source.key), record)
    except Superseded:
        log.info("a newer upload of %s already has its record", source.key)
