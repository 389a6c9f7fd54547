"""How the command shows things: tables and results on stdout (or JSON Lines with ``--json``),
for a script to read; progress bars, messages and errors on stderr, for the person watching.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pagefleet import keys
from pagefleet.models import JobRecord
from pagefleet.status import ChunkView, JobView, QueueView
from pagefleet.submission import Progress as Counts
from pagefleet.submission import Submission

out = Console(soft_wrap=True)
err = Console(stderr=True)
FINISHED = ("done", "partial", "failed")
STATUS_STYLE = {"done": "green", "partial": "yellow", "failed": "red", "converting": "cyan"}


def await_with_progress(
    submission: Submission,
    *,
    interval_s: float = 0.25,
    timeout_s: float | None = None,
    on_records: Callable[[dict[str, JobRecord]], None] | None = None,
) -> Counts:
    """Await the submission's records behind a documents and a pages bar on stderr;
    ``on_records`` gets the records found after each look. The final counts."""
    counts = Counts(documents=len(submission.uploads), pages=sum(submission.pages.values()))
    # rich redraws 10 times a second only where it shows the bars as they go; elsewhere
    # (stderr a file or a pipe) it prints them once, when they stop (rich/live.py, refresh),
    # by when every document is done: a refresh thread, or the converted chunks' pages of the
    # documents still converting, would be kept up for nothing.
    live = err.is_terminal or err.is_jupyter
    bar = Progress(
        TextColumn("{task.description:>9}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=err,
        redirect_stdout=False,  # stdout is the results' (JSON Lines as records land)
        auto_refresh=live,
    )
    with bar:
        docs = bar.add_task("documents", total=counts.documents, rate="")
        pages = bar.add_task("pages", total=counts.pages or None, rate="")

        def tick() -> None:
            bar.update(docs, completed=counts.documents_done)
            rate = f"{counts.pages_per_s:.1f} pages/s"
            bar.update(pages, completed=counts.pages_done, rate=rate)
            if on_records is not None:
                on_records(submission.records)

        submission.wait(counts, tick, interval_s=interval_s, timeout_s=timeout_s, chunk_pages=live)
    return counts


def emit_json(line: dict[str, Any]) -> None:
    """One JSON Lines line on stdout, flushed: a stream a script reads as it comes."""
    print(json.dumps(line), flush=True)


def record_line(rel: str, record: JobRecord, record_key: str | None = None) -> dict[str, Any]:
    """A job record as a script reads it: what it is, how it ended, where its outputs are."""
    return {
        "document": rel,
        "key": record.source.key,
        "status": record.status,
        "pages": record.pages,
        "record": record_key,
        "markdown": record.markdown,
        "error": record.error.model_dump() if record.error else None,
        "seconds": record.timings.total_s,
        "job_id": record.job_id,
    }


def records_table(title: str, records: Iterable[tuple[str, JobRecord]]) -> Table:
    table = Table(title=title)
    for column in ("document", "pages", "status", "seconds", "error"):
        table.add_column(column, justify="right" if column in ("pages", "seconds") else "left")
    for rel, record in records:
        error = f"{record.error.code}: {record.error.message}" if record.error else ""
        table.add_row(
            rel,
            str(record.pages),
            f"[{STATUS_STYLE[record.status]}]{record.status}",
            f"{record.timings.total_s:.2f}",
            error,
        )
    return table


def queues_table(queues: list[QueueView]) -> Table:
    table = Table(title="queues")
    for column in ("queue", "waiting", "in flight", "dead letters"):
        table.add_column(column, justify="left" if column == "queue" else "right")
    for queue in queues:
        dead = queue.dead_letters.visible + queue.dead_letters.in_flight
        table.add_row(
            queue.role,
            str(queue.queue.visible),
            str(queue.queue.in_flight),
            f"[red]{dead}" if dead else "0",
        )
    return table


def jobs_table(title: str, jobs: list[JobView]) -> Table:
    table = Table(title=title)
    for column in ("document", "job", "pages", "chunks in", "status"):
        table.add_column(column, justify="right" if column in ("pages", "chunks in") else "left")
    for job in jobs:
        table.add_row(
            job.rel,
            job.job_id[:12],
            str(job.pages),
            f"{job.chunks_done}/{len(job.chunks)}",
            f"[{STATUS_STYLE[job.state]}]{job.state}",
        )
    return table


def chunks_table(job: JobView) -> Table:
    table = Table(title=f"{job.rel}: {job.state}, {job.pages} pages, job {job.job_id}")
    for column in ("chunk", "pages", "status", "attempts", "seconds", "error"):
        left = column in ("status", "error")
        table.add_column(column, justify="left" if left else "right")
    for chunk in job.chunks:
        style = {"done": "green", "failed": "red", "pending": "cyan"}[chunk.state]
        table.add_row(
            str(chunk.index),
            f"{chunk.first_page}-{chunk.last_page}",
            f"[{style}]{chunk.state}",
            str(chunk.attempts) if chunk.attempts else "",
            f"{chunk.seconds:.2f}" if chunk.seconds else "",
            chunk.error,
        )
    return table


class JsonRecords:
    """``--json`` while records are awaited: each record once, as a JSON line, when it lands."""

    def __init__(self, submission: Submission) -> None:
        self.submission = submission
        self._printed: set[str] = set()

    def __call__(self, records: dict[str, JobRecord]) -> None:
        for rel in sorted(records.keys() - self._printed):
            emit_json(record_line(rel, records[rel], self.submission.record_key(rel)))
            self._printed.add(rel)


def chunk_json(chunk: ChunkView) -> dict[str, Any]:
    return {
        "index": chunk.index,
        "pages": [chunk.first_page, chunk.last_page],
        "status": chunk.state,
        "attempts": chunk.attempts,
        "seconds": chunk.seconds,
        "error": chunk.error or None,
    }


def job_json(job: JobView) -> dict[str, Any]:
    return {
        "document": job.rel,
        "key": job.key,
        "job_id": job.job_id,
        "status": job.state,
        "pages": job.pages,
        "chunks": [chunk_json(c) for c in job.chunks],
        "error": job.record.error.model_dump() if job.record and job.record.error else None,
    }


@dataclass(frozen=True)
class Overview:
    """``pagefleet status``: the queues, the jobs in flight, the latest finished jobs."""

    queues: list[QueueView]
    in_flight: list[JobView]
    finished: list[JobRecord]
    limit: int

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for r in self.finished if r.status == s) for s in FINISHED}

    def __rich__(self) -> Group:
        latest = [(keys.rel_of(r.source.key), r) for r in self.finished[: self.limit]]
        title = "finished: " + ", ".join(f"{n} {s}" for s, n in self.counts.items())
        return Group(
            queues_table(self.queues),
            jobs_table("in flight", self.in_flight),
            records_table(title, latest),
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "queues": {
                q.role: {
                    "waiting": q.queue.visible,
                    "in_flight": q.queue.in_flight,
                    "dead_letters": q.dead_letters.visible + q.dead_letters.in_flight,
                }
                for q in self.queues
            },
            "in_flight": [job_json(job) for job in self.in_flight],
            "finished": self.counts,
            "latest": [
                record_line(keys.rel_of(r.source.key), r) for r in self.finished[: self.limit]
            ],
        }
