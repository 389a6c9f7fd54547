"""PDFs through a running stack, from outside it: upload to inbox/, await the records, download.

The one "submit and await records" path, used by ``pagefleet run``, the benchmark and the tests.
S3 offers nothing to await, so :func:`await_records` looks at the bucket: a HEAD per pending
record while there are few (moto answers a HEAD from a dict), one LIST of their common prefix
when there are many (a LIST scans the bucket, but one LIST beats hundreds of HEADs).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium

from pagefleet import keys
from pagefleet.models import JobManifest, JobRecord, chunk_of
from pagefleet.storage import Bucket

HEAD_AT_MOST = 4  # pending records looked up one HEAD each; more: one LIST
LOOK_INTERVAL_S = 0.1


def upload(bucket: Bucket, rel: str, data: bytes, suffix: str = ".pdf") -> str:
    """Put ``data`` at ``inbox/<rel><suffix>``; returns the key."""
    key = keys.inbox_key(rel, suffix)
    bucket.put(key, data, content_type="application/pdf")
    return key


def await_records(
    bucket: Bucket,
    rels: Iterable[str],
    *,
    timeout_s: float | None = None,
    on_look: Callable[[dict[str, JobRecord]], None] | None = None,
    interval_s: float = LOOK_INTERVAL_S,
) -> dict[str, JobRecord]:
    """The job record of every ``rel``, once each has one.

    ``on_look`` gets the records found so far after every look (progress bars); a
    :class:`TimeoutError` names the documents still without a record after ``timeout_s``.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    pending = {keys.outbox_record(rel): rel for rel in rels}
    # S3 prefixes are strings, not paths: the character-wise common prefix is the one to list.
    prefix = os.path.commonprefix([*pending]) if pending else ""  # noqa: RUF071
    records: dict[str, JobRecord] = {}
    while True:
        if len(pending) <= HEAD_AT_MOST:
            present = {key for key in pending if bucket.head(key) is not None}
        else:
            present = set(bucket.list_keys(prefix)) & pending.keys()
        for key in present:
            records[pending.pop(key)] = JobRecord.model_validate_json(bucket.get(key))
        if on_look is not None:
            on_look(records)
        if not pending:
            return records
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(
                f"no job record after {timeout_s:.0f} s for {sorted(pending.values())}"
            )
        time.sleep(interval_s)  # watching S3 from outside: nothing to await but the next look


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
    """The documents of one ``pagefleet run``, keyed by their relative name."""

    bucket: Bucket
    files: dict[str, Path]  # rel -> local path
    pages: dict[str, int]
    records: dict[str, JobRecord] = field(default_factory=dict)
    _manifests: dict[str, JobManifest] = field(default_factory=dict)

    @classmethod
    def upload(cls, bucket: Bucket, *roots: Path, prefix: str = "") -> Submission:
        """Upload every PDF under ``roots`` (files or folders) as ``inbox/<prefix><rel>``,
        ``rel`` being a file's path below its folder, or a lone file's name."""
        files: dict[str, Path] = {}
        for root in roots:
            for path in find_pdfs(root):
                rel_path = path.relative_to(root) if root.is_dir() else Path(path.name)
                files[prefix + rel_path.with_suffix("").as_posix()] = path
        pages = {rel: count_pages(path) for rel, path in files.items()}
        for rel, path in files.items():
            upload(bucket, rel, path.read_bytes(), path.suffix)
        return cls(bucket=bucket, files=files, pages=pages)

    def wait(
        self,
        progress: Progress,
        tick: Callable[[], None],
        interval_s: float = 0.25,
        timeout_s: float | None = None,
    ) -> None:
        """Await every record, refreshing ``progress`` (and calling ``tick``) after each look."""

        def on_look(records: dict[str, JobRecord]) -> None:
            self.records = records
            progress.documents_done = len(records)
            progress.pages_done = self._pages_converted()
            if len(records) == len(self.files):
                progress.finished = progress.finished or time.perf_counter()
            tick()

        await_records(
            self.bucket, self.files, timeout_s=timeout_s, on_look=on_look, interval_s=interval_s
        )

    def _pages_converted(self) -> int:
        results: dict[str, set[int]] = {}
        for key in self.bucket.list_keys(keys.JOBS):
            if (parsed := keys.job_of_result(key)) is not None:
                results.setdefault(parsed[0], set()).add(parsed[1])
        done = 0
        for job_id, indices in results.items():
            if job_id not in self._manifests:
                self._manifests[job_id] = JobManifest.model_validate_json(
                    self.bucket.get(keys.manifest(job_id))
                )
            manifest = self._manifests[job_id]
            if manifest.rel not in self.files:  # a shared bucket holds other users' jobs too
                continue
            for index in indices:
                if (chunk := chunk_of(manifest.chunks, index)) is None:
                    continue
                # A chunk whose halves have results was split: its pages count through them.
                halves = chunk.halves(len(manifest.chunks)) if chunk.pages > 1 else ()
                if not any(half.index in indices for half in halves):
                    done += chunk.pages
        return done

    def download(self, out: Path) -> None:
        for rel, record in self.records.items():
            download(self.bucket, rel, record, out)


def download(bucket: Bucket, rel: str, record: JobRecord, out: Path) -> Path:
    """``<out>/<rel>.json``, ``.md`` and ``.assets/`` from the outbox; returns the record's
    path. The assets keep their relative links working."""
    target = out / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    record_path = Path(f"{target}.json")
    record_path.write_bytes(bucket.get(keys.outbox_record(rel)))
    if record.markdown:
        Path(f"{target}.md").write_bytes(bucket.get(record.markdown))
    prefix = keys.outbox_assets(rel)
    for key in bucket.list_keys(prefix):
        asset = Path(f"{target}.assets") / key[len(prefix) :]
        asset.parent.mkdir(parents=True, exist_ok=True)
        asset.write_bytes(bucket.get(key))
    return record_path
