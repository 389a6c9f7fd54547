"""Publishing a job's outputs to ``outbox/`` exactly once (rule 2).

Racing completions of one job compute the same bytes; conditional writes let exactly one of
them create each object. A new upload of the same key is a new job that replaces the older
job's objects with ``If-Match`` on their ETag, and never the other way round: an older job that
finishes late leaves a newer job's outputs alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from pagefleet import keys
from pagefleet.models import JobRecord, Source
from pagefleet.storage import Bucket, PreconditionFailed

_JOB = "pagefleet-job"
_UPLOADED = "pagefleet-uploaded"  # orders two uploads of one key


class Superseded(Exception):
    """A newer upload of the same key already owns the outbox objects."""


def _upload_order(source: Source) -> str:
    return source.sequencer or source.event_time or ""


def _write_once(bucket: Bucket, key: str, body: bytes, content_type: str, source: Source) -> None:
    job_id = source.job_id
    meta = {_JOB: job_id, _UPLOADED: _upload_order(source)}
    for _ in range(5):
        head = bucket.head(key)
        try:
            if head is None:
                bucket.put(key, body, content_type=content_type, metadata=meta, if_none_match=True)
                return
            owner = head.get("Metadata", {})
            if owner.get(_JOB) == job_id:
                return  # a twin of this completion (or an earlier try) wrote it
            if owner.get(_UPLOADED, "") > meta[_UPLOADED]:
                raise Superseded(key)
            bucket.put(key, body, content_type=content_type, metadata=meta, if_match=head["ETag"])
            return
        except PreconditionFailed:
            continue  # someone wrote between our look and our write: look again
    raise PreconditionFailed(key)


def publish(
    bucket: Bucket,
    rel: str,
    record: JobRecord,
    markdown: str | None = None,
    assets: Mapping[str, bytes] | None = None,
) -> None:
    """Write assets, then the Markdown, then the job record: readers that see the record (written
    last) see everything it points to. Raises :class:`Superseded` if a newer upload won."""
    for name, data in (assets or {}).items():
        # Asset names are unique per job and their bytes fixed, so plain writes are idempotent.
        bucket.put(f"{keys.outbox_assets(rel)}{name}", data)
    if markdown is not None:
        _write_once(
            bucket,
            keys.outbox_markdown(rel),
            markdown.encode(),
            "text/markdown; charset=utf-8",
            record.source,
        )
    _write_once(
        bucket,
        keys.outbox_record(rel),
        record.model_dump_json(indent=2).encode(),
        "application/json",
        record.source,
    )


def published_job(bucket: Bucket, rel: str) -> str | None:
    """The job id whose record is in the outbox for ``rel``, if any."""
    head = bucket.head(keys.outbox_record(rel))
    return None if head is None else head.get("Metadata", {}).get(_JOB)
