"""The completion step: when every chunk of a job has a result, publish the document.

A chunk that was split (it failed on resources) has its result when both its halves have
theirs, recursively: the job is complete once every page range it ended as converted or failed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from pagefleet import keys
from pagefleet.assembly import LandedChunk, job_record, linked_assets, prepare, render_markdown
from pagefleet.aws import is_transient
from pagefleet.errors import ErrorCode
from pagefleet.gc_pause import paused_gc
from pagefleet.job_events import Announce, JobEvent
from pagefleet.models import ChunkResult, ChunkSpec, ErrorInfo, JobManifest, JobRecord
from pagefleet.outbox import Body, Stored, Superseded, placement, publish
from pagefleet.storage import Bucket, NotFound

log = logging.getLogger(__name__)

# "already": a twin completion published this job; "superseded": a newer upload of the key did;
# "unreadable": its manifest is not one pagefleet wrote (a user's object under jobs/).
CompletionOutcome = Literal["published", "waiting", "already", "superseded", "unreadable"]
# What a dead-lettered completion came to: a last check's outcome, a failed record ("failed"),
# or nothing it could record ("unrecorded": no readable manifest names an upload).
DeadCompletionOutcome = CompletionOutcome | Literal["failed", "unrecorded"]


# How few chunks, each holding how small a share of its pages, a job may still be waiting for
# when its check has the renderer work ahead (:func:`prepare`). Earlier checks only look: a
# forecast made with much still out is mostly redone as the rest lands (the furniture and the
# analysis change), and what it saves at the end is the writing of the chunks already in hand,
# which a forecast with the last few out saves as well. Measured on the shared corpus (each
# job's results replayed in the order they landed; the renderer's CPU seconds a round, session
# 13): a forecast at every landing 1.30, with at most two chunks out 1.02, and those two a
# quarter of the pages together 0.88, none 0.74; the end's own share on the 400-page manual
# 0.029, 0.028, 0.028 and 0.163 (its tail target is 0.15 s). Two chunks: a job's last chunks
# convert side by side and may land together.
PREPARE_WHEN_MISSING = 2
PREPARE_WHEN_LEFT = 0.25


def forecasts(manifest: JobManifest, missing: list[ChunkSpec]) -> bool:
    """Whether a check of ``manifest``'s job, with the chunks ``missing`` still out, has the
    renderer forecast (:func:`prepare`): at most two out, each at most a quarter of the pages.

    Each, not both together: a job whose check at one chunk out forecasts has then made its
    first forecast, the one that starts from nothing, a landing earlier, while its last chunks
    were converting, and the check at one out only adds a chunk to it. The last result's event
    waits for that check when the two land close together. On the 400-page manual at W=2 (six
    chunks; the last two hold a third of the pages) that check took 0.18 CPU s with the two
    counted together and takes 0.04 now; the shared corpus's forecasts and ends, replayed as
    they landed, 1.12 CPU s a round against 1.13 now, where forecasting at two out whatever
    their share costs 1.32 (bench/results/2026-12-05-issue28-tail-session15/)."""
    return len(missing) <= PREPARE_WHEN_MISSING and all(
        c.pages <= PREPARE_WHEN_LEFT * manifest.pages for c in missing
    )


def complete_job(
    bucket: Bucket,
    job_id: str,
    announce: Announce | None = None,
    landed: Mapping[str, str] | None = None,
) -> CompletionOutcome:
    """Publish job ``job_id`` if all its chunks are in; returns what happened. Safe to call
    any number of times: the one call that writes the record ("published") has ``announce``
    tell the job's end (pagefleet/job_events.py says what that guarantees).

    ``landed``: the job's results that the event in hand announced (key -> ETag, quoted as a
    listing gives it). Where they are every planned chunk's, as for nearly every job of one
    chunk, the check takes them as the results there are instead of listing the job's results;
    a split among them sends it to the listing for its halves.

    Once little is still out (:func:`forecasts`), each check reads, in this
    warm process, the results that landed since the last one, and has the renderer do what it
    can with them ahead of the end (:func:`prepare`), so when the last chunk lands only its
    share is left: reading it, counting and writing it, checking the others' writing against
    the final analysis, and stitching.
    """
    with paused_gc():
        return _complete(bucket, job_id, announce, landed)


def record_dead_completion(
    bucket: Bucket, job_id: str, receive_count: int, announce: Announce | None = None
) -> DeadCompletionOutcome:
    """A job whose completion message reached the completion DLQ (rule 3): checked once more,
    and if that fails too, ended with a failed record, so its upload still gets one. A
    transient fault is raised (the message stays, to be tried again); a job whose manifest is
    gone or unreadable has no upload to record against: "unrecorded", for the caller to report.
    """
    try:
        manifest = _manifest(bucket, job_id)
    except (NotFound, ValidationError):
        return "unrecorded"
    try:
        return complete_job(bucket, job_id, announce)
    except Exception as exc:
        if is_transient(exc):
            raise
        cause = exc
    log.warning("job %s: its completion keeps failing (%r); recorded as failed", job_id, cause)
    record = JobRecord(
        status="failed",
        job_id=job_id,
        source=manifest.source,
        pages=manifest.pages,
        plan=manifest.plan,
        error=ErrorInfo(
            code=ErrorCode.DEAD_LETTER,
            message=f"the completion step failed on this job {receive_count} times "
            f"({type(cause).__name__}); its logs say why",
        ),
        finished_at=time.time(),
    )
    try:
        published = publish(bucket, manifest.rel, record)
    except Superseded:
        return "superseded"
    if published is None:
        return "already"  # a completion of the job ended it meanwhile, and announced it
    if announce is not None:
        announce(JobEvent.of(published))
    return "failed"


def _complete(
    bucket: Bucket, job_id: str, announce: Announce | None, landed: Mapping[str, str] | None
) -> CompletionOutcome:
    try:
        manifest = _manifest(bucket, job_id)
    except NotFound:
        # Results only exist after the manifest (it is written before any message is sent),
        # so a missing manifest means the job's objects were expired: nothing left to do.
        log.warning("job %s has results but no manifest", job_id)
        return "waiting"
    except ValidationError as exc:
        # Retrying cannot mend it, and without a readable manifest there is no input to record:
        # dropped, with the reason in the log (rule 4: nothing crash-loops on what users write).
        log.warning("job %s: its manifest is unreadable, dropped: %s", job_id, exc)
        return "unreadable"
    announced = landed is not None and all(
        keys.chunk_result(job_id, c.index) in landed for c in manifest.chunks
    )
    present = dict(landed or {}) if announced else bucket.list_etags(keys.results_prefix(job_id))
    missing = [c for c in manifest.chunks if keys.chunk_result(job_id, c.index) not in present]
    if missing:
        if forecasts(manifest, missing):
            prepare(manifest, _results(bucket, manifest, present).leaves)
        return "waiting"
    place = placement(bucket.head, manifest.source.key)
    if place.owner is not None and place.owner.job_id == job_id:
        return "already"
    started = time.perf_counter()
    results = _results(bucket, manifest, present)
    if not results.complete and announced:  # a split chunk: its halves were not announced
        results = _results(bucket, manifest, bucket.list_etags(keys.results_prefix(job_id)))
    if not results.complete:  # a split chunk's halves are still converting
        prepare(manifest, results.leaves)
        return "waiting"
    chunks = results.leaves
    markdown = render_markdown(manifest, chunks)
    # The outbox gets the images the Markdown links to, not every picture a converter wrote.
    # Stored images are copied inside S3 (the completion never reads one: a GET per asset
    # saved); small ones came inside their results and are written from there.
    linked = linked_assets(markdown)
    assets: dict[str, Body] = {}
    for c in chunks:
        if c.result.status == "done":
            stored = keys.job_assets(job_id)
            assets.update((n, Stored(stored + n)) for n in c.result.assets if n in linked)
            assets.update((n, data) for n, data in c.inline_assets.items() if n in linked)
    record = job_record(manifest, chunks, time.perf_counter() - started, results.splits)
    try:
        published = publish(
            bucket,
            manifest.rel,
            record,
            markdown if record.status != "failed" else None,
            assets,
            owner=place.owner,
            variant=place.variant,
        )
    except Superseded:
        return "superseded"
    finally:
        _forget(bucket, results.read)
    if published is None:
        return "already"  # a twin wrote the record first: it announces the job
    log.info("job %s %s: %s pages", job_id, record.status, record.pages)
    if announce is not None:
        announce(JobEvent.of(published))
    return "published"


@dataclass
class _Results:
    """A job's results as far as they have landed, a split chunk replaced by its halves'."""

    leaves: list[LandedChunk]  # converted or failed, in page order
    splits: list[ChunkResult]
    read: list[str]  # the keys of all of them
    complete: bool  # every chunk, and every half of a split one, has a result


def _results(bucket: Bucket, manifest: JobManifest, present: dict[str, str]) -> _Results:
    """The results ``present`` (key -> ETag) holds of ``manifest``'s chunks: a chunk that was
    split counts by its halves' results, down to those that converted or failed."""
    wanted = {keys.chunk_result(manifest.job_id, c.index): c for c in manifest.chunks}
    found = _Results([], [], [], complete=True)
    while wanted:
        landed = {key: etag for key, etag in present.items() if key in wanted}
        found.complete = found.complete and len(landed) == len(wanted)
        found.read += list(landed)
        halves: dict[str, ChunkSpec] = {}
        for key, chunk in zip(landed, _landed(bucket, landed), strict=True):
            result = chunk.result
            if result.status != "split":
                found.leaves.append(chunk)
                continue
            if result.chunk != wanted[key]:
                # Halves lie strictly inside their chunk only if the chunk is the one waited
                # for here: anything else could send the walk round in circles.
                raise ValueError(f"{key} is not the result of chunk {wanted[key]}")
            found.splits.append(result)
            halves |= {keys.chunk_result(manifest.job_id, h.index): h for h in result.halves}
        wanted = halves
    found.leaves.sort(key=lambda c: c.result.chunk.first_page)
    return found


# Chunk results read when they land, by (bucket, key), with the ETag they were read at: a
# result rewritten since (a twin delivery's) is read again. Bounded by the bytes read.
_LANDED: OrderedDict[tuple[str, str], tuple[str, LandedChunk]] = OrderedDict()
_LANDED_BYTES = 24 * 2**20
_LANDED_LOCK = threading.Lock()
_READ_THREADS = 16


def _landed(bucket: Bucket, etags: dict[str, str]) -> list[LandedChunk]:
    """The results ``etags`` names, parsed, in its order: kept ones as they are, the others
    read concurrently (and kept for the next check of their job)."""
    found: dict[str, LandedChunk] = {}
    with _LANDED_LOCK:
        for key, etag in etags.items():
            kept = _LANDED.get((bucket.name, key))
            if kept is not None and kept[0] == etag:
                _LANDED.move_to_end((bucket.name, key))
                found[key] = kept[1]
    missing = [key for key in etags if key not in found]
    if missing:
        with ThreadPoolExecutor(max_workers=min(_READ_THREADS, len(missing))) as pool:
            read = pool.map(lambda k: LandedChunk.parse(bucket.get(k)), missing)
            found.update(zip(missing, read, strict=True))
        with _LANDED_LOCK:
            for key in missing:
                _LANDED[(bucket.name, key)] = (etags[key], found[key])
            size = sum(chunk.size for _, chunk in _LANDED.values())
            while _LANDED and size > _LANDED_BYTES:
                _, (_, dropped) = _LANDED.popitem(last=False)
                size -= dropped.size
    return [found[key] for key in etags]


def _forget(bucket: Bucket, keys_: list[str]) -> None:
    with _LANDED_LOCK:
        for key in keys_:
            _LANDED.pop((bucket.name, key), None)


# A manifest never changes once written, and a job's completion is checked as its results
# land: a warm process reads each manifest once.
_MANIFESTS: OrderedDict[tuple[str, str], JobManifest] = OrderedDict()
_MANIFESTS_KEPT = 256
_MANIFESTS_LOCK = threading.Lock()


def _manifest(bucket: Bucket, job_id: str) -> JobManifest:
    key = (bucket.name, job_id)
    with _MANIFESTS_LOCK:
        if key in _MANIFESTS:
            _MANIFESTS.move_to_end(key)
            return _MANIFESTS[key]
    manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(job_id)))
    with _MANIFESTS_LOCK:
        _MANIFESTS[key] = manifest
        while len(_MANIFESTS) > _MANIFESTS_KEPT:
            _MANIFESTS.popitem(last=False)
    return manifest
