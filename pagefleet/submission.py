"""PDFs through a running stack, from outside it: upload to inbox/, await the records, download.

The one "submit and await records" path, used by ``pagefleet run``, the benchmark and the tests.
S3 offers nothing to await, so :func:`await_records` looks at the bucket: a HEAD per pending
record while there are few (moto answers a HEAD from a dict), one LIST of their folder when
there are many (one LIST beats hundreds of HEADs), one level deep, so that the documents'
assets folders do not come back key by key; and, where the server is in this process (``pagefleet
run``'s, the bench's), only when a write that may have made a record has been applied since the
last look, which that server also wakes the watcher for.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar

import pypdfium2 as pdfium

from pagefleet import keys
from pagefleet.models import JobManifest, JobRecord, chunk_of, parsed
from pagefleet.outbox import placement, published_job
from pagefleet.storage import Bucket, NotFound, Written

HEAD_AT_MOST = 4  # pending records looked up one HEAD each; more: a LIST per folder, this many
LOOK_INTERVAL_S = 0.1
_GETS_AT_ONCE = 8  # a download's assets read side by side
_File = TypeVar("_File")
# The converted chunks of unfinished documents (a progress bar's pages) are counted from a LIST
# of every key under jobs/, assets included (~90 keys a look on the shared corpus, ~16 ms of
# CPU, half the client's, half moto's): at most this often, not at every look for records.
CHUNKS_LOOK_S = 2.0


def largest_first(files: Iterable[_File], size: Callable[[_File], int]) -> list[_File]:
    """``files`` in the order a batch is uploaded, the largest (``size(file)`` bytes) first: a
    large file is most of a batch's work, and one split last converts alone at the end while
    the fleet's other lanes idle (and the batch then waits for its outputs, the most there are,
    to be published and fetched)."""
    return sorted(files, key=lambda file: -size(file))


class RecordWrites(Protocol):
    """A count of the writes that may have made a job record, kept by a server that can tell
    (the embedded one, in this process: embedded.server.record_writes), and a wait for the next."""

    def __call__(self) -> int: ...

    def wait(self, past: int, timeout_s: float) -> None:
        """Return once the count is no longer ``past``, or after ``timeout_s``."""


def upload(bucket: Bucket, rel: str, data: bytes, suffix: str = ".pdf") -> str:
    """Put ``data`` at ``inbox/<rel><suffix>``; returns the key. One PUT: what the key's record
    says before it is read only for an :class:`Upload` (:func:`put_upload`), which awaits
    this upload's record and not an earlier one's."""
    key = keys.inbox_key(rel, suffix)
    _put(bucket, key, data)
    return key


class Upload(NamedTuple):
    """One upload of an inbox key, whose record is awaited: not the record of an earlier upload
    of the key, told apart by the version S3 gave it (where its events carry one; moto's do
    not) or else by the job whose record was there when it was made (``replaces``)."""

    key: str
    version_id: str | None = None
    replaces: str | None = None

    def made(self, record: JobRecord) -> bool:
        if record.source.key != self.key or record.job_id == self.replaces:
            return False
        known = record.source.version_id is not None and self.version_id is not None
        return not known or record.source.version_id == self.version_id


def put_upload(
    bucket: Bucket, rel: str, data: bytes, suffix: str = ".pdf", *, new_bucket: bool = False
) -> Upload:
    """``new_bucket``: the bucket was made for these uploads (``pagefleet run``'s embedded
    server), so no earlier upload's record can be there, and none is looked for (the HEAD of
    each name a record of the key may have)."""
    key = keys.inbox_key(rel, suffix)
    replaces = None if new_bucket else published_job(bucket, key)
    return Upload(key, _put(bucket, key, data).version_id, replaces)


def _put(bucket: Bucket, key: str, data: bytes) -> Written:
    return bucket.put(key, data, content_type="application/pdf")


def await_records(
    bucket: Bucket,
    rels: Iterable[str],
    *,
    timeout_s: float | None = None,
    on_look: Callable[[dict[str, JobRecord]], None] | None = None,
    interval_s: float = LOOK_INTERVAL_S,
    uploads: Mapping[str, Upload] | None = None,
    read: dict[str, RecordRead] | None = None,
    record_writes: RecordWrites | None = None,
) -> dict[str, JobRecord]:
    """The job record of every ``rel``, once each has one.

    ``uploads``: the upload each ``rel`` is awaited for, where known; a record of another key of
    the same ``rel`` (``.pdf`` in another letter case) is not it: that one's record is awaited
    under its variant name (keys.py); nor is the record of an earlier upload of the key.
    ``on_look`` gets the records found so far after every look (progress bars); a
    :class:`TimeoutError` names the documents still without a record after ``timeout_s``.
    ``read``: where each record found was read, and what (its key and body), by ``rel``.
    ``record_writes``: where the server can tell, a look while its count stands where it stood
    before the previous look reads nothing, as it would find nothing new; and the next look
    comes as soon as a record may have landed, not ``interval_s`` after the last.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    awaited = uploads or {}
    pending = {keys.outbox_record(rel): rel for rel in rels}
    records: dict[str, JobRecord] = {}
    looked_at: int | None = None  # the count before the last look that read the bucket
    while True:
        # Read before the look: a write that lands during it is counted after it.
        writes = record_writes() if record_writes is not None else None
        folders = {key.rpartition("/")[0] + "/" for key in pending}
        if writes is not None and writes == looked_at:
            present: set[str] = set()  # nothing written since a look that found these pending
        elif len(pending) <= HEAD_AT_MOST:
            present = {key for key in pending if bucket.head(key) is not None}
        elif len(folders) <= HEAD_AT_MOST:
            # A record lies beside its Markdown and its assets folder: a LIST of the records'
            # folders alone, one level deep, reads a line per document, not one per image
            # (a LIST costs the server and the client a key's parsing per key it returns).
            listed = {k for f in folders for k in bucket.list_keys(f, one_level=True)}
            present = listed & pending.keys()
        else:
            # S3 prefixes are strings, not paths: the character-wise common prefix to list.
            prefix = os.path.commonprefix([*pending])  # noqa: RUF071
            present = set(bucket.list_keys(prefix)) & pending.keys()
        looked_at = writes
        for key in present:
            rel = pending[key]
            body = bucket.get(key)
            record = JobRecord.model_validate_json(body)
            upload = awaited.get(rel)
            if upload is None or upload.made(record):
                records[rel] = record
                del pending[key]
                if read is not None:
                    read[rel] = RecordRead(key, body)
            elif record.source.key != upload.key:
                del pending[key]
                pending[keys.outbox_record(rel, keys.suffix_of(upload.key))] = rel
                looked_at = None  # a key not looked at yet, which may be there already
            # else: an earlier upload's record, until this upload's replaces it
        if on_look is not None:
            on_look(records)
        if not pending:
            return records
        if deadline is not None and time.monotonic() > deadline:
            raise StillConverting(sorted(pending.values()), timeout_s or 0.0)
        if record_writes is not None and writes is not None:
            record_writes.wait(writes, interval_s)
        else:
            time.sleep(interval_s)  # watching S3 from outside: nothing to await but a look


class RecordRead(NamedTuple):
    """A job record as :func:`await_records` read it."""

    key: str
    body: bytes


class StillConverting(TimeoutError):
    """Records still missing when the wait ran out; ``rels`` names the documents."""

    def __init__(self, rels: list[str], waited_s: float) -> None:
        super().__init__(f"no job record after {waited_s:.0f} s for {rels}")
        self.rels = rels
        self.waited_s = waited_s


def find_pdfs(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")


def count_pages(path: Path) -> int:
    """Pages for the progress total; 0 for a file the splitter will reject anyway."""
    try:
        doc = pdfium.PdfDocument(path)
    except Exception:
        return 0
    try:
        return len(doc)
    finally:
        doc.close()


@dataclass
class Progress:
    documents: int
    documents_done: int = 0
    pages: int = 0
    pages_done: int = 0
    started: float = field(default_factory=time.perf_counter)
    finished: float | None = None  # set when the last record lands: the rate stops there

    @property
    def seconds(self) -> float:
        return (self.finished or time.perf_counter()) - self.started

    @property
    def pages_per_s(self) -> float:
        return self.pages_done / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Submission:
    """Documents awaited together (one ``pagefleet run`` or ``submit``), by relative name."""

    bucket: Bucket
    uploads: dict[str, Upload]  # rel -> the upload whose record is awaited
    pages: dict[str, int]  # rel -> pages, 0 where unknown
    records: dict[str, JobRecord] = field(default_factory=dict)
    _manifests: dict[str, JobManifest | None] = field(default_factory=dict)
    _chunk_pages: dict[str, int] = field(default_factory=dict)  # rel -> pages, last counted
    _read: dict[str, RecordRead] = field(default_factory=dict)  # rel -> its record, as read
    # Where the server can tell (await_records).
    record_writes: RecordWrites | None = None

    @classmethod
    def upload(
        cls, bucket: Bucket, *roots: Path, prefix: str = "", new_bucket: bool = False
    ) -> Submission:
        """Upload every PDF under ``roots`` (files or folders) as ``inbox/<prefix><rel>``,
        ``rel`` being a file's path below its folder, or a lone file's name; ``new_bucket``:
        see :func:`put_upload`."""
        files: dict[str, Path] = {}
        for root in roots:
            for path in find_pdfs(root):
                rel_path = path.relative_to(root) if root.is_dir() else Path(path.name)
                files[prefix + rel_path.with_suffix("").as_posix()] = path
        pages = {rel: count_pages(path) for rel, path in files.items()}
        uploads = {
            rel: put_upload(bucket, rel, path.read_bytes(), path.suffix, new_bucket=new_bucket)
            for rel, path in largest_first(files.items(), lambda item: item[1].stat().st_size)
        }
        return cls(bucket=bucket, uploads=uploads, pages=pages)

    @classmethod
    def of_inbox(cls, bucket: Bucket, prefix: str = "") -> Submission:
        """The uploads there are now under ``inbox/<prefix>`` (to await them again)."""
        uploads = {}
        for key in bucket.list_keys(keys.INBOX + prefix):
            head = bucket.head(key) if keys.is_upload(key) else None
            if head is not None:
                uploads[keys.rel_of(key)] = Upload(key, head.get("VersionId"))
        return cls(bucket=bucket, uploads=uploads, pages=dict.fromkeys(uploads, 0))

    def wait(
        self,
        progress: Progress,
        tick: Callable[[], None],
        interval_s: float = 0.25,
        timeout_s: float | None = None,
        *,
        chunk_pages: bool = True,
    ) -> None:
        """Await every record, refreshing ``progress`` (and calling ``tick``) after each look.
        ``chunk_pages``: count the pages of the unfinished documents' converted chunks too, for
        a bar drawn as it goes (a LIST of jobs/ every :data:`CHUNKS_LOOK_S`, and each job's
        manifest once); without it, ``progress`` counts the finished documents' pages alone.
        """
        next_count = 0.0 if chunk_pages else float("inf")

        def on_look(records: dict[str, JobRecord]) -> None:
            nonlocal next_count
            self.records = records
            progress.documents_done = len(records)
            count = time.monotonic() >= next_count
            progress.pages_done = self._pages_converted(count_chunks=count)
            if count:
                next_count = time.monotonic() + CHUNKS_LOOK_S
            if len(records) == len(self.uploads):
                progress.finished = progress.finished or time.perf_counter()
            tick()

        await_records(
            self.bucket,
            self.uploads,
            timeout_s=timeout_s,
            on_look=on_look,
            interval_s=interval_s,
            uploads=self.uploads,
            read=self._read,
            record_writes=self.record_writes,
        )

    def _pages_converted(self, *, count_chunks: bool = True) -> int:
        """Pages of the finished documents, from their records (their chunk results expire
        soon after), and of the converted chunks of the others (as last counted, unless
        ``count_chunks``)."""
        done = sum(record.pages for record in self.records.values())
        if len(self.records) == len(self.uploads):
            return done
        if count_chunks:
            self._chunk_pages = self._count_chunk_pages()
        return done + sum(n for rel, n in self._chunk_pages.items() if rel not in self.records)

    def _count_chunk_pages(self) -> dict[str, int]:
        """Pages of the converted chunks of each unfinished document, from its chunk results."""
        pages: dict[str, int] = {}
        results: dict[str, set[int]] = {}
        for key in self.bucket.list_keys(keys.JOBS):
            if (result := keys.job_of_result(key)) is not None:
                results.setdefault(result[0], set()).add(result[1])
        for job_id, indices in results.items():
            if job_id not in self._manifests:
                self._manifests[job_id] = self._manifest(job_id)
            manifest = self._manifests[job_id]
            # A shared bucket holds other users' jobs too, and whatever they wrote under jobs/.
            if manifest is None or manifest.rel not in self.uploads or manifest.rel in self.records:
                continue
            for index in indices:
                if (chunk := chunk_of(manifest.chunks, index)) is None:
                    continue
                # A chunk whose halves have results was split: its pages count through them.
                halves = chunk.halves(len(manifest.chunks)) if chunk.pages > 1 else ()
                if not any(half.index in indices for half in halves):
                    pages[manifest.rel] = pages.get(manifest.rel, 0) + chunk.pages
        return pages

    def _manifest(self, job_id: str) -> JobManifest | None:
        manifest_key = keys.manifest(job_id)
        try:
            return parsed(JobManifest, manifest_key, self.bucket.get(manifest_key))
        except NotFound:  # expired since its result was listed
            return None

    def record_key(self, rel: str) -> str:
        """Where ``rel``'s record is (its variant name, if another key holds the plain one):
        where :meth:`wait` found it, or else as the outbox places it."""
        if rel in self._read:
            return self._read[rel].key
        return keys.outbox_record(rel, placement(self.bucket.head, self.uploads[rel].key).variant)

    def download_document(self, rel: str, out: Path) -> Path:
        """:func:`download` of ``rel``'s outputs; its record as :meth:`wait` read it."""
        read = self._read.get(rel)
        body = read.body if read is not None else None
        return download(self.bucket, self.record_key(rel), self.records[rel], out, body=body)


def download(
    bucket: Bucket, record_key: str, record: JobRecord, out: Path, *, body: bytes | None = None
) -> Path:
    """The record ``record_key``, its Markdown and its assets from the outbox, each at its key
    below ``outbox/`` under ``out``; returns the record's path. The assets keep their relative
    links working. Nothing is written outside ``out``, whatever the keys hold. ``body``: the
    record's, where it was just read (:func:`await_records`), rather than read again."""
    markdown, assets = keys.outputs_of_record(record_key)
    record_body = bucket.get(record_key) if body is None else body
    record_path = _write_below(out, record_key, record_body)
    if record.markdown:
        _write_below(out, markdown, bucket.get(markdown))
    assets_keys = bucket.list_keys(assets)
    # A document's pictures are many small objects (117 for the shared corpus's 400-page manual):
    # against S3, one GET at a time waits out each one's round trip.
    with ThreadPoolExecutor(min(_GETS_AT_ONCE, len(assets_keys)) or 1) as pool:
        for key, body in zip(assets_keys, pool.map(bucket.get, assets_keys), strict=True):
            _write_below(out, key, body)
    return record_path


def _write_below(out: Path, key: str, body: bytes) -> Path:
    """Write ``body`` where ``key`` goes below ``out``; raises ValueError for a key that would
    land elsewhere (a ``..`` segment in a user's object under outbox/, a link out of ``out``)."""
    below = keys.download_path(key)
    path = out.joinpath(*below.split("/")) if below is not None else None
    if path is None or not path.resolve().is_relative_to(out.resolve()):
        raise ValueError(f"{key} would be written outside {out}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    return path
