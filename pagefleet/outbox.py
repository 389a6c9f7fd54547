"""Publishing a job's outputs to ``outbox/`` exactly once (rule 2), the newest upload owning
every outbox object of its key (rule 3).

Racing completions of one job compute the same bytes; conditional writes let exactly one of
them create each object. A new upload of the same key is a new job that replaces the older
job's objects with ``If-Match`` on their ETag, and never the other way round: an older job that
finishes late leaves a newer job's outputs alone, and takes back what it wrote before it found
out. A newer job removes the older job's Markdown and assets that it does not replace itself
(a failed job writes none), so no older Markdown stays beside a newer record.

Every outbox object carries its job and upload order in its metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from pagefleet import keys
from pagefleet.keys import key_problem
from pagefleet.models import JobRecord, Source
from pagefleet.storage import Bucket, PreconditionFailed

_JOB = "pagefleet-job"
_UPLOADED = "pagefleet-uploaded"  # orders two uploads of one key


class Superseded(Exception):
    """A newer upload of the same key already owns the outbox objects."""


def upload_order(source: Source) -> str:
    """What orders two uploads of one key: S3's sequencer where the event has one."""
    return upload_order_of(source.sequencer, source.event_time)


def upload_order_of(sequencer: str | None, event_time: str | None) -> str:
    return sequencer or event_time or ""


class Owner(NamedTuple):
    """The job that wrote an outbox object, from the object's metadata."""

    job_id: str
    uploaded: str  # the upload order of that job's source


def owner_of(head: Mapping[str, Any] | None) -> Owner | None:
    """The owner of an existing outbox object (its HEAD); None if there is none."""
    if head is None:
        return None
    meta = head.get("Metadata", {})
    return Owner(meta.get(_JOB, ""), meta.get(_UPLOADED, ""))


def _newer(owner: Owner | None, source: Source) -> bool:
    """The object belongs to a newer upload than ``source``'s."""
    return (
        owner is not None
        and owner.job_id != source.job_id
        and owner.uploaded > upload_order(source)
    )


def _write_once(bucket: Bucket, key: str, body: bytes, content_type: str, source: Source) -> None:
    job_id = source.job_id
    meta = {_JOB: job_id, _UPLOADED: upload_order(source)}
    try:  # most keys are new: write first, look only if the key is taken (one request saved)
        bucket.put(key, body, content_type=content_type, metadata=meta, if_none_match=True)
        return
    except PreconditionFailed:
        pass
    for _ in range(5):
        head = bucket.head(key)
        owner = owner_of(head)
        try:
            if head is None:
                bucket.put(key, body, content_type=content_type, metadata=meta, if_none_match=True)
                return
            if owner is not None and owner.job_id == job_id:
                return  # a twin of this completion (or an earlier try) wrote it
            if _newer(owner, source):
                raise Superseded(key)
            bucket.put(key, body, content_type=content_type, metadata=meta, if_match=head["ETag"])
            return
        except PreconditionFailed:
            continue  # someone wrote between our look and our write: look again
    raise PreconditionFailed(key)


def _remove_older(bucket: Bucket, key: str, source: Source) -> None:
    """Delete ``key`` if an older upload of the key wrote it."""
    owner = owner_of(bucket.head(key))
    if owner is not None and owner.job_id != source.job_id and not _newer(owner, source):
        bucket.delete(key)


def _remove_own(bucket: Bucket, key: str, source: Source) -> None:
    """Delete ``key`` if this job wrote it (it lost the race to a newer upload)."""
    owner = owner_of(bucket.head(key))
    if owner is not None and owner.job_id == source.job_id:
        bucket.delete(key)


def publish(
    bucket: Bucket,
    rel: str,
    record: JobRecord,
    markdown: str | None = None,
    assets: Mapping[str, bytes] | None = None,
    *,
    owner: Owner | Literal["unread"] | None = "unread",
) -> None:
    """Write assets, then the Markdown, then the job record: readers that see the record (written
    last) see everything it points to. Raises :class:`Superseded` if a newer upload won.

    ``owner``: the record's owner as :func:`record_owner` read it a moment ago (a caller that
    looked already saves the request); a newer upload since is still caught by the writes.
    """
    source = record.source
    record_key = keys.outbox_record(rel)
    if owner == "unread":
        owner = record_owner(bucket, rel)
    if _newer(owner, source):
        raise Superseded(record_key)
    assets = assets or {}
    asset_prefix = keys.outbox_assets(rel)
    written = [f"{asset_prefix}{name}" for name in assets]
    try:
        for key, data in zip(written, assets.values(), strict=True):
            _write_once(bucket, key, data, "application/octet-stream", source)
        if markdown is not None:
            written.append(keys.outbox_markdown(rel))
            body = markdown.encode()
            _write_once(bucket, written[-1], body, "text/markdown; charset=utf-8", source)
        # What an older upload left that this job does not replace goes before the record.
        if not key_problem(rel):  # a refused name has no Markdown or assets to look for
            if markdown is None:
                _remove_older(bucket, keys.outbox_markdown(rel), source)
            for key in set(bucket.list_keys(asset_prefix)) - set(written):
                _remove_older(bucket, key, source)
        _write_once(
            bucket,
            record_key,
            record.model_dump_json(indent=2).encode(),
            "application/json",
            source,
        )
    except Superseded:
        for key in written:
            _remove_own(bucket, key, source)
        raise


def record_owner(bucket: Bucket, rel: str) -> Owner | None:
    """The owner of the job record in the outbox for ``rel``, if there is one (a HEAD)."""
    return owner_of(bucket.head(keys.outbox_record(rel)))


def published_job(bucket: Bucket, rel: str) -> str | None:
    """The job id whose record is in the outbox for ``rel``, if any."""
    owner = record_owner(bucket, rel)
    return None if owner is None else owner.job_id
