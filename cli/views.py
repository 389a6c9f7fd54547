"""How the command shows things: a progress bar while records are awaited, and tables."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from pagefleet.models import JobRecord
from pagefleet.status import JobView, QueueView
from pagefleet.submission import Progress as Counts
from pagefleet.submission import Submission

console = Console(stderr=True)
STATUS_STYLE = {"done": "green", "partial": "yellow", "failed": "red", "converting": "cyan"}


def await_with_progress(
    submission: Submission, *, interval_s: float = 0.25, timeout_s: float | None = None
) -> Counts:
    """Await the submission's records behind a documents and a pages bar; the final counts."""
    counts = Counts(documents=len(submission.files), pages=sum(submission.pages.values()))
    bar = Progress(
        TextColumn("{task.description:>9}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
    )
    with bar:
        docs = bar.add_task("documents", total=counts.documents, rate="")
        pages = bar.add_task("pages", total=counts.pages or None, rate="")

        def tick() -> None:
            bar.update(docs, completed=counts.documents_done)
            rate = f"{counts.pages_per_s:.1f} pages/s"
            bar.update(pages, completed=counts.pages_done, rate=rate)

        submission.wait(counts, tick, interval_s=interval_s, timeout_s=timeout_s)
    return counts


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
