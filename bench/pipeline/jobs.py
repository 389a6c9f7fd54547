"""One measured job: a document uploaded to the stack's inbox at a known time, and its record.

Uploading and awaiting go through :mod:`pagefleet.submission`, the path ``pagefleet run`` and
the tests take; the bench adds its own clock: ``uploaded_at`` is read just before the PUT, so a
job's latency runs from the upload to the time stamped in its record, whatever the interval at
which records are looked for.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.pipeline.models import Document, RoleCpu, StageSeconds
from pagefleet.models import JobRecord
from pagefleet.storage import Bucket
from pagefleet.submission import RecordWrites, await_records, upload

# Latency does not depend on it (see above); it only bounds how long after its record a job
# is noticed. Each look is a request the server answers, which the bench counts as the stack's
# CPU: at 0.2 s the bench's own watching was a quarter of a corpus round's requests. On the
# embedded stack the bench looks as soon as a record may have landed, and only then (await_jobs).
RECORD_POLL_S = 0.5


@dataclass
class Job:
    doc: Document
    rel: str
    uploaded_at: float  # time.time() just before the PUT to inbox/
    record: JobRecord | None = None
    stages: StageSeconds | None = None  # read after the clock stops (bench.pipeline.stages)
    cpu: dict[str, RoleCpu] = field(default_factory=dict)  # by role, while it ran alone

    @property
    def latency_s(self) -> float:
        assert self.record is not None, f"{self.rel}: no job record yet"
        return self.record.finished_at - self.uploaded_at


def submit(bucket: Bucket, prefix: str, docs: Iterable[Document]) -> list[Job]:
    jobs = []
    for doc in docs:
        rel = f"{prefix}/{doc.name}"
        data = doc.path.read_bytes()  # read before the clock starts
        jobs.append(Job(doc=doc, rel=rel, uploaded_at=time.time()))
        upload(bucket, rel, data)
    return jobs


def await_jobs(
    bucket: Bucket,
    jobs: list[Job],
    timeout_s: float,
    record_writes: RecordWrites | None = None,
) -> None:
    """Fill every job's record, waiting at most ``timeout_s`` for the last. ``record_writes``:
    the embedded server's count of writes that may have made a record
    (embedded.server.record_writes), where the stack is the bench's own: a look while it stands
    still finds nothing and is skipped, as ``pagefleet run``'s are, so the bench's watching
    costs the stack's server nothing, and a record is read as soon as it lands."""
    records = await_records(
        bucket,
        [job.rel for job in jobs],
        timeout_s=timeout_s,
        interval_s=RECORD_POLL_S,
        record_writes=record_writes,
    )
    for job in jobs:
        job.record = records[job.rel]
