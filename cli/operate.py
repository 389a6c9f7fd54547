"""``submit``, ``status``, ``redrive``, ``get``: the operator's verbs against a running stack,
embedded (``pagefleet up``) or deployed (``--stack`` with Terraform's outputs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cli.views import (
    await_with_progress,
    chunks_table,
    console,
    jobs_table,
    queues_table,
    records_table,
)
from pagefleet import aws, keys
from pagefleet.redrive import redrive as redrive_queues
from pagefleet.settings import Settings, load_settings, settings_from_terraform_outputs
from pagefleet.status import find_record, job_status, jobs_finished, jobs_in_flight, queue_status
from pagefleet.storage import Bucket
from pagefleet.submission import Submission, download

# A deployed bucket is looked at less often than the embedded one: each look is a LIST.
DEPLOYED_LOOK_S = 2.0


def stack_settings(args: argparse.Namespace) -> Settings:
    given = {
        name: value
        for name in ("endpoint_url", "bucket", "region", "queue_prefix")
        if (value := getattr(args, name)) is not None
    }
    if args.stack:
        return settings_from_terraform_outputs(Path(args.stack).read_text(), **given)
    return load_settings(**given)


def _clients(settings: Settings) -> tuple[Bucket, Any]:
    if settings.endpoint_url:
        aws.use_fake_credentials()  # moto takes any; real credentials in the environment win
    return Bucket(aws.client("s3", settings), settings.bucket), aws.client("sqs", settings)


def document_rel(key: str) -> str:
    """``inbox/a/b.pdf``, ``outbox/a/b.md`` (or ``.json``) or ``a/b`` -> ``a/b``; a refused
    name's record stays as it is given."""
    return keys.document_named(key).rel or key


def submit(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    bucket, _ = _clients(settings)
    paths = [Path(p).expanduser() for p in args.files]
    if missing := [str(p) for p in paths if not p.exists()]:
        console.print(f"[red]no such file or folder: {', '.join(missing)}")
        return 2
    prefix = f"{args.prefix.strip('/')}/" if args.prefix else ""
    submission = Submission.upload(bucket, *paths, prefix=prefix)
    console.print(
        f"{len(submission.files)} PDFs uploaded to s3://{bucket.name}/{keys.INBOX}{prefix}"
    )
    if not args.wait or not submission.files:
        return 0
    interval_s = 0.25 if settings.endpoint_url else DEPLOYED_LOOK_S
    await_with_progress(submission, interval_s=interval_s, timeout_s=args.timeout)
    console.print(records_table("pagefleet submit", sorted(submission.records.items())))
    return 0 if all(r.status == "done" for r in submission.records.values()) else 1


def status(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    bucket, sqs = _clients(settings)
    if args.key:
        job = job_status(bucket, keys.document_named(args.key))
        if job is None:
            console.print(f"[red]no job for {args.key} in s3://{bucket.name}")
            return 1
        console.print(chunks_table(job))
        if job.record is not None and job.record.error is not None:
            console.print(f"[red]{job.record.error.code}: {job.record.error.message}")
        return 0
    console.print(queues_table(queue_status(sqs, settings)))
    console.print(jobs_table("in flight", jobs_in_flight(bucket)))
    finished = jobs_finished(bucket)
    counts = {s: sum(1 for r in finished if r.status == s) for s in ("done", "partial", "failed")}
    latest = [(keys.rel_of(r.source.key), r) for r in finished[: args.limit]]
    title = "finished: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    console.print(records_table(title, latest))
    return 0


def redrive(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    _, sqs = _clients(settings)
    moved = redrive_queues(sqs, settings, args.roles)
    for role, count in moved.items():
        console.print(f"{role}: {count} dead-lettered messages sent back")
    return 0


def get(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    bucket, _ = _clients(settings)
    rel = document_rel(args.key)
    found = find_record(bucket, keys.document_named(args.key))
    if found is None:
        console.print(f"[red]{rel} has no record yet: `pagefleet status {rel}` shows its chunks")
        return 1
    record_key, record = found
    try:
        path = download(bucket, record_key, record, Path(args.out).expanduser())
    except ValueError as exc:  # a user's object under the document's name climbs out of --out
        console.print(f"[red]{exc}")
        return 1
    console.print(f"{rel}: {record.status}, {record.pages} pages -> {path.with_suffix('')}.*")
    return 0 if record.status != "failed" else 1
