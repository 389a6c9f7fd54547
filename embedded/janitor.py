"""Job internals deleted once the job has ended: the embedded stack's lifecycle rule.

On AWS a lifecycle rule expires ``jobs/`` (and its noncurrent versions) after days
(terraform/modules/storage: ``expire-jobs``). Locally the bucket lives in the moto server's
memory, and moto keeps every version of a versioned bucket, so without this a steady stream of
jobs grows the server without bound. The janitor is not in the handlers' code path: the event
source mapping tells it which jobs a batch touched (:class:`~embedded.dispatch.Dispatcher`
observers), and ``grace_s`` after a job's last activity it looks whether the job has ended; if
so, it deletes every version under ``jobs/<job_id>/``. Jobs that ended while no janitor watched
(a stop within ``grace_s`` of their end, a kill, a crash) are found by a scan of ``jobs/`` when it
starts: every job there gets one look, and those not ended yet get theirs from the mapping.

A job has ended when the outbox record of its name is its own, or is a newer upload's while
every chunk of this job has a result (its completion found itself superseded). Nothing under
``inbox/`` or ``outbox/`` is ever touched: only the prefix of one job id.
"""

from __future__ import annotations

import heapq
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from pagefleet import keys
from pagefleet.events import sources_in_sqs_body
from pagefleet.outbox import placement, upload_order_of

log = logging.getLogger(__name__)

DELETE_BATCH = 1000  # DeleteObjects' limit
# Jobs the start-up scan looks at, at most: a stack's recent past, not an unbounded walk.
SCAN_LIMIT = 10_000
MAX_ROUNDS = 20  # versions of one key (a chunk result is written again by a repeated message)


@dataclass
class JanitorStats:
    checked: int = 0
    jobs_deleted: int = 0
    objects_deleted: int = 0  # versions
    errors: int = 0
    deferred: int = 0  # looks put off while the stack had a backlog
    deleted_ids: list[str] = field(default_factory=list)


class Janitor:
    def __init__(
        self,
        s3: Any,
        bucket: str,
        *,
        grace_s: float = 10.0,
        busy: Callable[[], bool] | None = None,
        max_defer_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``busy``: whether the stack has a backlog now; the janitor's requests then wait (a
        fifth of the server's work in a burst), each job at most ``max_defer_s``."""
        self.s3 = s3
        self.bucket = bucket
        self.grace_s = grace_s
        self.busy = busy
        self.max_defer_s = max_defer_s
        self._clock = clock
        self._due: dict[str, float] = {}  # job id -> when to look
        self._first_due: dict[str, float] = {}  # job id -> when it first came due
        self._heap: list[tuple[float, str]] = []
        self._wake = threading.Condition()
        self._stop = False
        self._busy = False
        self._thread: threading.Thread | None = None
        self.stats = JanitorStats()

    # --- what the mapping tells it ---

    def observe(self, messages: Iterable[dict[str, Any]]) -> None:
        """Messages of S3 notifications the completion function handled: the jobs whose chunk
        results they announce get a look. (A job that fails at its split writes nothing under
        ``jobs/``, except a manifest when no page range of it could be cut.)"""
        for message in messages:
            try:
                sources = list(sources_in_sqs_body(message["Body"]))
            except (ValueError, KeyError, TypeError):
                continue  # not an S3 notification: nothing of ours
            for source in sources:
                if source.bucket != self.bucket:
                    continue
                parsed = keys.job_of_result(source.key)
                if parsed is not None:
                    self.touch(parsed[0])

    def touch(self, job_id: str) -> None:
        """Look at ``job_id`` ``grace_s`` from now (later activity pushes the look back)."""
        due = self._clock() + self.grace_s
        with self._wake:
            self._due[job_id] = due
            heapq.heappush(self._heap, (due, job_id))
            self._wake.notify()

    # --- the thread ---

    def start(self) -> None:
        with self._wake:
            self._busy = True  # scanning: not idle until every job found has had its look
        self._thread = threading.Thread(target=self._run, name="janitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join()

    def pending(self) -> int:
        """Jobs waiting for a look, plus one being looked at."""
        with self._wake:
            return len(self._due) + (1 if self._busy else 0)

    def idle(self, timeout_s: float) -> bool:
        """Wait until no job is waiting for a look (or ``timeout_s``); True if none is."""
        deadline = time.monotonic() + timeout_s
        with self._wake:
            while self._due or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(left)
            return True

    def scan(self) -> int:
        """A look at every job under ``jobs/`` (up to ``SCAN_LIMIT``); returns how many."""
        found = 0
        pages = self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=keys.JOBS, Delimiter="/"
        )
        for page in pages:
            for common in page.get("CommonPrefixes", []):
                job_id = keys.job_of_prefix(common["Prefix"])
                if job_id is None:
                    continue
                if found == SCAN_LIMIT or self._stop:
                    return found
                self.touch(job_id)
                found += 1
        return found

    def _run(self) -> None:
        try:
            self.scan()
        except Exception:
            self.stats.errors += 1
            log.exception("janitor: could not scan jobs/; jobs are looked at as they end")
        finally:
            with self._wake:
                self._busy = False
                self._wake.notify_all()
        while True:
            with self._wake:
                job_id = self._next_due()
                while job_id is None and not self._stop:
                    wait = self._heap[0][0] - self._clock() if self._heap else None
                    self._wake.wait(wait)
                    job_id = self._next_due()
                if self._stop or job_id is None:
                    return
                self._busy = True
            try:
                self.sweep(job_id)
            except Exception:
                self.stats.errors += 1
                log.exception("janitor: could not clean job %s; it is looked at again", job_id)
                self.touch(job_id)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()

    def _next_due(self) -> str | None:
        now = self._clock()
        busy = (
            self.busy is not None and bool(self._heap) and self._heap[0][0] <= now and self.busy()
        )
        while self._heap and self._heap[0][0] <= now:
            due, job_id = heapq.heappop(self._heap)
            if self._due.get(job_id) != due:
                continue  # pushed back by later activity
            first = self._first_due.setdefault(job_id, due)
            if busy and now - first < self.max_defer_s:
                self._due[job_id] = now + 1.0  # after the backlog
                heapq.heappush(self._heap, (now + 1.0, job_id))
                self.stats.deferred += 1
                return None
            del self._due[job_id]
            del self._first_due[job_id]
            return job_id
        return None

    # --- one job ---

    def sweep(self, job_id: str) -> int:
        """Delete ``job_id``'s internals if the job has ended; returns the objects deleted."""
        self.stats.checked += 1
        if not self.ended(job_id):
            return 0
        deleted = self.delete_job(job_id)
        if deleted:
            self.stats.jobs_deleted += 1
            self.stats.objects_deleted += deleted
            self.stats.deleted_ids.append(job_id)
            del self.stats.deleted_ids[:-100]
        return deleted

    def ended(self, job_id: str) -> bool:
        try:
            # Only the fields read here: a job's manifest is the splitter's, but the janitor must
            # not choke on one it cannot fully parse (it would look at it again for ever).
            manifest = json.loads(self._get(keys.manifest(job_id)))
        except KeyError:
            # Results only follow a manifest, so a job without one either never got that far
            # (a failed split wrote nothing here) or was cleaned and something late (a repeated
            # chunk message) wrote again: either way nothing under it is waited for.
            return True
        source = manifest.get("source", {})
        inbox_key = source.get("key") or keys.inbox_key(manifest["rel"])
        owner = placement(self._head, inbox_key).owner
        if owner is None:
            return False
        if owner.job_id == job_id:
            return True
        if owner.uploaded <= upload_order_of(source.get("sequencer"), source.get("event_time")):
            return False  # an older job's record: this one has not published yet
        results = self._count(keys.results_prefix(job_id))
        return results >= len(manifest.get("chunks", []))

    def delete_job(self, job_id: str) -> int:
        """Every version under ``jobs/<job_id>/``.

        ListObjectVersions would name them at once, but moto answers it by deep-copying every
        version in the bucket, inputs included; so the current version of each key is found
        with HEAD and deleted by its id, until the prefix lists empty (an older version of a key
        becomes current when the newer one goes). Nothing here deletes without a version id,
        so no delete marker hides a version from the listing.
        """
        prefix = keys.job_prefix(job_id)
        assert prefix.startswith(keys.JOBS) and job_id and "/" not in job_id
        deleted = 0
        for _ in range(MAX_ROUNDS):
            listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix)
            names = [item["Key"] for item in listed.get("Contents", [])]
            if not names:
                return deleted
            versions = [self._version(name) for name in names[:DELETE_BATCH]]
            doomed = [{"Key": n, "VersionId": v} for n, v in versions if v is not None]
            reply = self.s3.delete_objects(
                Bucket=self.bucket, Delete={"Objects": doomed, "Quiet": True}
            )
            if reply.get("Errors"):
                raise RuntimeError(f"delete_objects: {reply['Errors'][:3]}")
            deleted += len(doomed)
        raise RuntimeError(f"{prefix} still lists objects after {MAX_ROUNDS} rounds")

    def _version(self, key: str) -> tuple[str, str | None]:
        head = self._head(key)
        return key, None if head is None else head.get("VersionId", "null")

    def _get(self, key: str) -> bytes:
        try:
            body: bytes = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"NoSuchKey", "404"}:
                raise KeyError(key) from None
            raise
        return body

    def _head(self, key: str) -> dict[str, Any] | None:
        try:
            head: dict[str, Any] = self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in {"NoSuchKey", "404"}:
                return None
            raise
        return head

    def _count(self, prefix: str) -> int:
        reply = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return int(reply.get("KeyCount", 0))
