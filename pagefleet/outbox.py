"""Publishing a job's outputs to ``outbox/`` exactly once (rule 2), the newest upload owning
every outbox object of its key, and no two keys sharing one (rule 3).

Racing completions of one job compute the same bytes; conditional writes let exactly one of
them create each object. A new upload of the same key is a new job that replaces the older
job's objects with ``If-Match`` on their ETag, and never the other way round: an older job that
finishes late leaves a newer job's outputs alone, and takes back what it wrote, whenever it
wrote it, on every way out of :func:`publish` that finds it lost. A newer job removes the older
job's Markdown and assets that it does not replace itself (a failed job writes none), so no
older Markdown stays beside a newer record.

Two inbox keys that differ only in the letter case of ``.pdf`` share a plain outbox name
(``keys.py``): the key whose upload holds it first keeps it, the other publishes under its
variant name. A key holds the plain name once its record is there; before that, whichever key
wrote an object there first: the other one meets it, takes back what it wrote and moves over.
A key that ever published under its variant name stays there.

Every outbox object carries its job, its upload order and its inbox key in its metadata.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, NamedTuple

from pagefleet import keys
from pagefleet.models import JobRecord, Source
from pagefleet.storage import Bucket, PreconditionFailed

_JOB = "pagefleet-job"
_UPLOADED = "pagefleet-uploaded"  # orders two uploads of one key
_KEY = "pagefleet-key"  # which inbox key's upload wrote it: a digest, as metadata is ASCII
_ASSET_TYPE = "application/octet-stream"
_WRITES_AT_ONCE = 8  # a job's assets written side by side

Head = Callable[[str], Mapping[str, Any] | None]


class Stored(NamedTuple):
    """An object of the bucket whose bytes an outbox object takes (a job's asset): copied
    inside S3, not read by the caller and written back."""

    key: str


Body = bytes | Stored


class Superseded(Exception):
    """A newer upload of the same key already owns the outbox objects."""


class _NameTaken(Exception):
    """Another inbox key holds the plain outbox name: this one publishes under its variant."""


def upload_order(source: Source) -> str:
    """What orders two uploads of one key: S3's sequencer where the event has one."""
    return upload_order_of(source.sequencer, source.event_time)


def upload_order_of(sequencer: str | None, event_time: str | None) -> str:
    return sequencer or event_time or ""


def _key_digest(inbox_key: str) -> str:
    return hashlib.sha256(inbox_key.encode()).hexdigest()[:32]


class Owner(NamedTuple):
    """The job that wrote an outbox object, from the object's metadata."""

    job_id: str
    uploaded: str  # the upload order of that job's source
    key: str = ""  # the digest of its inbox key; "" on objects written before it was kept

    def of_key(self, inbox_key: str) -> bool:
        """Written by an upload of ``inbox_key`` (as is an object that does not say)."""
        return self.key in ("", _key_digest(inbox_key))


def owner_of(head: Mapping[str, Any] | None) -> Owner | None:
    """The owner of an existing outbox object (its HEAD); None if there is none."""
    if head is None:
        return None
    meta = head.get("Metadata", {})
    return Owner(meta.get(_JOB, ""), meta.get(_UPLOADED, ""), meta.get(_KEY, ""))


class Published(NamedTuple):
    """A job record this call wrote: its key, and the record as written."""

    key: str
    record: JobRecord


class Placement(NamedTuple):
    """Where an inbox key's outputs go, and the owner of the record there now."""

    variant: str  # "" for the plain name, else the key's suffix (keys.outbox_record)
    owner: Owner | None


def placement(head: Head, inbox_key: str) -> Placement:
    """Where the outputs of ``inbox_key`` go, read with ``head`` (a HEAD per record looked at:
    one for a key that holds its plain name, two for a new one)."""
    rel, variant = keys.rel_of(inbox_key), keys.suffix_of(inbox_key)
    plain = owner_of(head(keys.outbox_record(rel)))
    if plain is not None and plain.of_key(inbox_key):
        return Placement("", plain)
    moved = owner_of(head(keys.outbox_record(rel, variant)))
    if plain is not None or moved is not None:
        return Placement(variant, moved)
    return Placement("", None)


def _newer(owner: Owner | None, source: Source) -> bool:
    """The object belongs to a newer upload of ``source``'s key than ``source``."""
    return (
        owner is not None
        and owner.of_key(source.key)
        and owner.job_id != source.job_id
        and owner.uploaded > upload_order(source)
    )


def _write(
    bucket: Bucket,
    key: str,
    body: Body,
    content_type: str,
    meta: dict[str, str],
    *,
    if_none_match: bool = False,
    if_match: str | None = None,
) -> None:
    """One conditional write of ``body``: its bytes, or a copy of a stored object."""
    if isinstance(body, Stored):
        bucket.copy(
            body.key,
            key,
            content_type=content_type,
            metadata=meta,
            if_none_match=if_none_match,
            if_match=if_match,
        )
    else:
        bucket.put(
            key,
            body,
            content_type=content_type,
            metadata=meta,
            if_none_match=if_none_match,
            if_match=if_match,
        )


def _write_once(
    bucket: Bucket, key: str, body: Body, content_type: str, source: Source, held: bool
) -> bool:
    """Create or replace ``key``; ``held``: this key holds the name, so another key's object
    there is a loser's leftover, not a claim. False: this job's object was there already.
    Exactly one of racing writers of one job gets True: each write is conditional."""
    job_id = source.job_id
    meta = {_JOB: job_id, _UPLOADED: upload_order(source), _KEY: _key_digest(source.key)}
    try:  # most keys are new: write first, look only if the key is taken (one request saved)
        _write(bucket, key, body, content_type, meta, if_none_match=True)
        return True
    except PreconditionFailed:
        pass
    for _ in range(5):
        head = bucket.head(key)
        owner = owner_of(head)
        try:
            if head is None:
                _write(bucket, key, body, content_type, meta, if_none_match=True)
                return True
            if owner is not None and owner.job_id == job_id:
                return False  # a twin of this completion (or an earlier try) wrote it
            if owner is not None and not owner.of_key(source.key) and not held:
                raise _NameTaken(key)
            if _newer(owner, source):
                raise Superseded(key)
            _write(bucket, key, body, content_type, meta, if_match=head["ETag"])
            return True
        except PreconditionFailed:
            continue  # someone wrote between our look and our write: look again
    raise PreconditionFailed(key)


def _write_assets(bucket: Bucket, assets: Mapping[str, Body], source: Source, held: bool) -> None:
    """:func:`_write_once` of each asset, several at a time: against S3 each write waits out a
    round trip, and a document's pictures are many (117 for the shared corpus's 400-page
    manual), all before its record. The first error is raised once every write has ended, so
    that a take-back after it finds all this call wrote."""
    with ThreadPoolExecutor(min(_WRITES_AT_ONCE, len(assets)) or 1) as pool:
        writes = [
            pool.submit(_write_once, bucket, key, data, _ASSET_TYPE, source, held)
            for key, data in assets.items()
        ]
    for write in writes:
        write.result()


def _remove_older(bucket: Bucket, key: str, source: Source, held: bool) -> None:
    """Delete ``key`` if an older upload of the key wrote it, or a loser of the name did."""
    owner = owner_of(bucket.head(key))
    if owner is None or owner.job_id == source.job_id:
        return
    if owner.of_key(source.key):
        if not _newer(owner, source):
            bucket.delete(key)
    elif held:
        bucket.delete(key)
    else:
        raise _NameTaken(key)  # another key is publishing here: it was first


def _take_back(bucket: Bucket, rel: str, variant: str, source: Source) -> None:
    """Delete what this job wrote under the name, in this try or an earlier one that died."""
    markdown = keys.outbox_markdown(rel, variant)
    for key in [markdown, *bucket.list_keys(keys.outbox_assets(rel, variant))]:
        owner = owner_of(bucket.head(key))
        if owner is not None and owner.job_id == source.job_id:
            bucket.delete(key)


def publish(
    bucket: Bucket,
    rel: str,
    record: JobRecord,
    markdown: str | None = None,
    assets: Mapping[str, Body] | None = None,
    *,
    owner: Owner | Literal["unread"] | None = "unread",
    variant: str = "",
) -> Published | None:
    """Write assets (their bytes, or copies of the objects :class:`Stored` names), then the
    Markdown (its asset links placed, see keys.ASSET_LINK_PREFIX), then the job record:
    readers that see the record (written last) see everything it points to. Raises
    :class:`Superseded` if a newer upload won. Returns the record if this call wrote it; None
    if a twin (or an earlier try) of this job had, so one of racing twins, the one that ends
    the job, gets it.

    ``owner`` and ``variant``: the :func:`placement` of the record's key, read a moment ago (a
    caller that looked already saves the requests); a newer upload since is still caught by the
    writes.
    """
    source = record.source
    if owner == "unread":
        variant, owner = placement(bucket.head, source.key)
    try:
        return _publish_at(bucket, rel, variant, record, markdown, assets or {}, owner)
    except _NameTaken:
        variant = keys.suffix_of(source.key)
        owner = owner_of(bucket.head(keys.outbox_record(rel, variant)))
    return _publish_at(bucket, rel, variant, record, markdown, assets or {}, owner)


def _publish_at(
    bucket: Bucket,
    rel: str,
    variant: str,
    record: JobRecord,
    markdown: str | None,
    assets: Mapping[str, Body],
    owner: Owner | None,
) -> Published | None:
    source = record.source
    record_key = keys.outbox_record(rel, variant)
    markdown_key = keys.outbox_markdown(rel, variant)
    asset_prefix = keys.outbox_assets(rel, variant)
    # A variant name is this key's alone; the plain one is held once this key's record is there.
    held = bool(variant) or owner is not None
    if variant:  # an earlier try may have written under the plain name before it lost it
        _take_back(bucket, rel, "", source)
    try:
        if owner is not None and not variant and not owner.of_key(source.key):
            raise _NameTaken(record_key)
        if _newer(owner, source):
            raise Superseded(record_key)
        _write_assets(bucket, {asset_prefix + n: data for n, data in assets.items()}, source, held)
        if markdown is None:
            _remove_older(bucket, markdown_key, source, held)
        else:
            links = keys.asset_dir_name(rel, variant) + "/"
            body = markdown.replace(keys.ASSET_LINK_PREFIX, links).encode()
            _write_once(bucket, markdown_key, body, "text/markdown; charset=utf-8", source, held)
            record = record.model_copy(update={"markdown": markdown_key})
        # What an older upload left that this job does not replace goes before the record.
        for key in set(bucket.list_keys(asset_prefix)) - {asset_prefix + n for n in assets}:
            _remove_older(bucket, key, source, held)
        body = record.model_dump_json(indent=2).encode()
        wrote = _write_once(bucket, record_key, body, "application/json", source, held)
    except (Superseded, _NameTaken):
        _take_back(bucket, rel, variant, source)
        raise
    return Published(record_key, record) if wrote else None


def published_job(bucket: Bucket, inbox_key: str) -> str | None:
    """The job id whose record is in the outbox for ``inbox_key``, if any."""
    if keys.is_stray(inbox_key):
        owner = owner_of(bucket.head(keys.stray_record(inbox_key)))
    else:
        owner = placement(bucket.head, inbox_key).owner
    return None if owner is None else owner.job_id


def publish_stray(bucket: Bucket, record: JobRecord) -> Published | None:
    """The record of a stray upload (keys.is_stray): a name of its key's alone, nothing beside
    it. Raises :class:`Superseded` if a newer upload of the key already has its record; returns
    the record if this call wrote it, as :func:`publish` does."""
    body = record.model_dump_json(indent=2).encode()
    key = keys.stray_record(record.source.key)
    wrote = _write_once(bucket, key, body, "application/json", record.source, held=True)
    return Published(key, record) if wrote else None
