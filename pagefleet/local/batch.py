"""A folder of PDFs through a running stack: upload to inbox/, watch, download outbox/."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium

from pagefleet import keys
from pagefleet.models import JobManifest, JobRecord
from pagefleet.storage import Bucket


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
    def upload(cls, bucket: Bucket, root: Path) -> Submission:
        files: dict[str, Path] = {}
        for path in find_pdfs(root):
            rel_path = path.relative_to(root) if root.is_dir() else Path(path.name)
            rel = rel_path.with_suffix("").as_posix()
            files[rel] = path
        pages = {rel: count_pages(path) for rel, path in files.items()}
        submission = cls(bucket=bucket, files=files, pages=pages)
        for rel, path in files.items():
            bucket.put(
                f"{keys.INBOX}{rel}{path.suffix}", path.read_bytes(), content_type="application/pdf"
            )
        return submission

    def poll(self, progress: Progress) -> bool:
        """Refresh ``progress`` from the bucket; True once every document has a record."""
        for rel in self.files:
            if rel not in self.records and self.bucket.head(keys.outbox_record(rel)):
                self.records[rel] = JobRecord.model_validate_json(
                    self.bucket.get(keys.outbox_record(rel))
                )
        progress.documents_done = len(self.records)
        progress.pages_done = self._pages_converted()
        if len(self.records) == len(self.files):
            progress.finished = progress.finished or time.perf_counter()
            return True
        return False

    def _pages_converted(self) -> int:
        done = 0
        for key in self.bucket.list_keys(keys.JOBS):
            parsed = keys.job_of_result(key)
            if parsed is None:
                continue
            job_id, index = parsed
            if job_id not in self._manifests:
                self._manifests[job_id] = JobManifest.model_validate_json(
                    self.bucket.get(keys.manifest(job_id))
                )
            done += self._manifests[job_id].chunks[index].pages
        return done

    def wait(
        self,
        progress: Progress,
        tick: Callable[[], None],
        interval_s: float = 0.25,
        timeout_s: float | None = None,
    ) -> None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not self.poll(progress):
            tick()
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.files) - len(self.records)} documents unfinished")
            time.sleep(interval_s)  # watching S3 from outside: nothing to await but the next look
        tick()

    def download(self, out: Path) -> None:
        for rel, record in self.records.items():
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            Path(f"{target}.json").write_bytes(self.bucket.get(keys.outbox_record(rel)))
            if record.markdown:
                Path(f"{target}.md").write_bytes(self.bucket.get(record.markdown))
            prefix = keys.outbox_assets(rel)
            for key in self.bucket.list_keys(prefix):
                asset = Path(f"{target}.assets") / key[len(prefix) :]
                asset.parent.mkdir(parents=True, exist_ok=True)
                asset.write_bytes(self.bucket.get(key))
