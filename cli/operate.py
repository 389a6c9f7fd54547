"""``submit``, ``wait``, ``status``, ``get``, ``reconvert``, ``redrive``: the operator's verbs
against a running stack, embedded (``pagefleet up``) or deployed (``--stack`` with Terraform's
outputs). Results go to stdout (tables, or JSON Lines with ``--json``); the exit code says how
the documents ended (cli/failures.py).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.live import Live

from cli.failures import CommandFailed, Exit, usage
from cli.views import (
    JsonRecords,
    Overview,
    await_with_progress,
    chunks_table,
    emit_json,
    err,
    job_json,
    out,
    record_line,
    records_table,
)
from pagefleet import aws, keys
from pagefleet.models import JobRecord, parsed
from pagefleet.outbox import published_job
from pagefleet.redrive import redrive as redrive_queues
from pagefleet.settings import Settings, load_settings, settings_from_terraform_outputs
from pagefleet.status import find_record, job_status, jobs_finished, jobs_in_flight, queue_status
from pagefleet.storage import Bucket
from pagefleet.submission import StillConverting, Submission, Upload, download, put_upload

# A deployed bucket is looked at less often than the embedded one: each look is a LIST.
DEPLOYED_LOOK_S = 2.0


def stack_settings(args: argparse.Namespace) -> Settings:
    given = {
        name: value
        for name in ("endpoint_url", "bucket", "region", "queue_prefix")
        if (value := getattr(args, name)) is not None
    }
    if not args.stack:
        settings = load_settings(**given)
        if settings.endpoint_url is None and "bucket" not in settings.model_fields_set:
            # The default bucket name is the embedded stack's; on AWS it is someone else's.
            raise usage(
                "which stack? --stack outputs.json (`terraform output -json` of a deployment), "
                "or --bucket and --queue-prefix, or PAGEFLEET_ENDPOINT_URL for `pagefleet up`"
            )
        return settings
    path = Path(args.stack).expanduser()
    try:
        return settings_from_terraform_outputs(path.read_text(), **given)
    except OSError as exc:
        raise usage(
            f"cannot read --stack {path}: {exc.strerror}; write it with "
            f"`terraform -chdir=terraform output -json > {path}`"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:  # not JSON, or not a pagefleet stack's
        missing = f" (it has no {exc})" if isinstance(exc, KeyError) else ""
        raise usage(
            f"--stack {path} is not `terraform output -json` of a pagefleet stack{missing}"
        ) from None


def _clients(settings: Settings) -> tuple[Bucket, Any]:
    if settings.endpoint_url:
        aws.use_fake_credentials()  # moto takes any; real credentials in the environment win
    return Bucket(aws.client("s3", settings), settings.bucket), aws.client("sqs", settings)


def _look_interval(settings: Settings) -> float:
    return 0.25 if settings.endpoint_url else DEPLOYED_LOOK_S


def document_rel(key: str) -> str:
    """``inbox/a/b.pdf``, ``outbox/a/b.md`` (or ``.json``) or ``a/b`` -> ``a/b``; a refused
    name's record stays as it is given."""
    return keys.document_named(key).rel or key


def _prefix(given: str) -> str:
    return f"{given.strip('/')}/" if given.strip("/") else ""


def _files_to_upload(given: list[str], *, as_pdf: bool) -> tuple[list[Path], list[Path]]:
    """The paths named, and the files in them that are not named .pdf (left out)."""
    paths = [Path(p).expanduser() for p in given]
    if missing := [str(p) for p in paths if not p.exists()]:
        raise usage(f"no such file or folder: {', '.join(missing)}")
    named_otherwise = [p for p in paths if p.is_file() and p.suffix.lower() != ".pdf"]
    if named_otherwise and not as_pdf:
        names = ", ".join(str(p) for p in named_otherwise)
        raise usage(
            f"not named .pdf: {names}; only PDFs are converted (--as-pdf uploads a file as "
            "<name>.pdf)"
        )
    skipped = sorted(
        f
        for p in paths
        if p.is_dir()
        for f in p.rglob("*")
        if f.is_file() and f.suffix.lower() != ".pdf"
    )
    return paths, skipped


def submit(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    bucket, _ = _clients(settings)
    paths, skipped = _files_to_upload(args.files, as_pdf=args.as_pdf)
    prefix = _prefix(args.prefix)
    named_pdf = [p for p in paths if p.is_dir() or p.suffix.lower() == ".pdf"]
    submission = Submission.upload(bucket, *named_pdf, prefix=prefix)
    for path in (p for p in paths if p not in named_pdf):  # --as-pdf
        rel = prefix + path.name
        submission.uploads[rel] = put_upload(bucket, rel, path.read_bytes())
        submission.pages[rel] = 0
    if skipped:
        err.print(f"[yellow]left out {len(skipped)} files not named .pdf, e.g. {skipped[0]}")
    err.print(f"{len(submission.uploads)} PDFs uploaded to s3://{bucket.name}/{keys.INBOX}{prefix}")
    if not args.wait:
        for rel, uploaded in sorted(submission.uploads.items()):
            if args.json:
                emit_json({"document": rel, "key": uploaded.key})
            else:
                out.print(f"s3://{bucket.name}/{uploaded.key}", highlight=False)
        return Exit.DONE
    return _await(args, settings, submission, f"pagefleet wait {prefix}".strip())


def wait(args: argparse.Namespace) -> int:
    """Await again what is uploaded: one document, or every upload under a folder."""
    settings = stack_settings(args)
    bucket, _ = _clients(settings)
    name = args.name.strip("/")
    upload = _upload_of(bucket, name) if name else None
    if upload is not None:
        rel = keys.rel_of(upload.key)
        submission = Submission(bucket, {rel: upload}, {rel: 0})
    else:
        submission = Submission.of_inbox(bucket, _prefix(name))
    if not submission.uploads:
        raise CommandFailed(
            Exit.FAILED, f"no uploads under s3://{bucket.name}/{keys.INBOX}{_prefix(name)}"
        )
    follow = f"pagefleet wait {name}".strip()
    return _await(
        args, settings, submission, follow, f"awaiting {len(submission.uploads)} documents"
    )


def _upload_of(bucket: Bucket, name: str) -> Upload | None:
    """The upload a document's name (any of its keys, or its rel) stands for, if there is one."""
    document = keys.document_named(name)
    if document.rel is None:
        return None
    uploads = Submission.of_inbox(bucket, document.rel).uploads
    if document.inbox is not None:
        found = uploads.get(document.rel)
        return found if found is not None and found.key == document.inbox else None
    return uploads.get(document.rel)


def _await(
    args: argparse.Namespace,
    settings: Settings,
    submission: Submission,
    follow: str,
    announce: str | None = None,
) -> int:
    """Await the submission's records behind progress bars; the records as a table or JSON.
    ``follow``: the command that awaits them again, for a user who stops waiting."""
    try:
        if announce:  # inside: from the moment it is read, Ctrl-C is answered as below
            err.print(announce)
        await_with_progress(
            submission,
            interval_s=_look_interval(settings),
            timeout_s=args.timeout,
            on_records=JsonRecords(submission) if args.json else None,
        )
    except StillConverting as exc:
        raise CommandFailed(
            Exit.NOT_YET,
            f"{len(exc.rels)} of {len(submission.uploads)} documents still converting after "
            f"{exc.waited_s:.0f} s (they go on): `{follow}` follows them",
        ) from None
    except KeyboardInterrupt:
        left = len(submission.uploads) - len(submission.records)
        raise CommandFailed(
            Exit.INTERRUPTED,
            f"interrupted: stopped waiting, the {left} documents in flight go on converting; "
            f"`{follow}` follows them, `pagefleet status` shows them",
        ) from None
    if not args.json:
        out.print(records_table("records", sorted(submission.records.items())))
    return _ended(submission.records.values())


def _ended(records: Iterable[JobRecord]) -> int:
    return Exit.DONE if all(r.status == "done" for r in records) else Exit.FAILED


def status(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    bucket, sqs = _clients(settings)
    if args.key:
        return _document_status(args, bucket)

    def look() -> Overview:
        return Overview(
            queue_status(sqs, settings), jobs_in_flight(bucket), jobs_finished(bucket), args.limit
        )

    if args.watch is None:
        if args.json:
            emit_json(look().as_json())
        else:
            out.print(look())
        return Exit.DONE
    if not out.is_terminal:  # a pipe or a file: each look after the last, as `watch` cannot
        while True:  # until Ctrl-C (exit 130)
            if args.json:
                emit_json(look().as_json())
            else:
                out.print(look())
            out.file.flush()
            time.sleep(args.watch)
    with Live(look(), console=out, auto_refresh=False) as live:
        while True:  # until Ctrl-C (exit 130): a look at the stack every --watch seconds
            time.sleep(args.watch)
            live.update(look(), refresh=True)


def _document_status(args: argparse.Namespace, bucket: Bucket) -> int:
    job = job_status(bucket, keys.document_named(args.key))
    if job is None:
        raise _absent(bucket, args.key)
    if args.json:
        emit_json(job_json(job))
    else:
        out.print(chunks_table(job))
        if job.record is not None and job.record.error is not None:
            out.print(f"[red]{job.record.error.code}: {job.record.error.message}")
    if job.record is None:
        return Exit.NOT_YET
    return _ended([job.record])


def _absent(bucket: Bucket, name: str) -> CommandFailed:
    """Why ``name`` has no record: no such upload, or one still converting."""
    rel = document_rel(name)
    if _upload_of(bucket, name) is not None:
        return CommandFailed(Exit.NOT_YET, f"{rel} is still converting: `pagefleet wait {rel}`")
    return CommandFailed(
        Exit.FAILED, f"no document {rel}: nothing at s3://{bucket.name}/{keys.inbox_key(rel)}"
    )


def redrive(args: argparse.Namespace) -> int:
    settings = stack_settings(args)
    _, sqs = _clients(settings)
    moved = redrive_queues(sqs, settings, args.roles)
    for role, count in moved.items():
        if args.json:
            emit_json({"queue": role, "sent_back": count})
        else:
            out.print(f"{role}: {count} dead-lettered messages sent back")
    return Exit.DONE


def get(args: argparse.Namespace) -> int:
    """One document's outputs, or those of every finished document under a prefix, each at its
    relative name below ``--out``, as ``run`` writes them."""
    settings = stack_settings(args)
    bucket, _ = _clients(settings)
    where = Path(args.out).expanduser()
    found = find_record(bucket, keys.document_named(args.key))
    if found is not None:
        got = [found]
    else:
        under = _prefix(document_rel(args.key))
        got = [(key, record) for key, record in _records_under(bucket, under) if record is not None]
        if not got:
            raise _absent(bucket, args.key)
    for record_key, record in got:
        try:
            path = download(bucket, record_key, record, where)
        except ValueError as exc:  # a user's object under the document's name climbs out of --out
            raise CommandFailed(Exit.FAILED, str(exc)) from None
        rel = keys.rel_of(record.source.key)
        if args.json:
            emit_json({**record_line(rel, record, record_key), "path": str(path)})
        else:
            out.print(f"{rel}: {record.status}, {record.pages} pages -> {path.with_suffix('')}.*")
    return _ended(record for _, record in got)


def _records_under(bucket: Bucket, prefix: str) -> list[tuple[str, JobRecord | None]]:
    record_keys = [k for k in bucket.list_keys(keys.OUTBOX + prefix) if keys.is_outbox_record(k)]
    return [(k, parsed(JobRecord, k, bucket.get(k))) for k in record_keys]


def reconvert(args: argparse.Namespace) -> int:
    """Convert an upload again, as a new upload of the same bytes would (the new job's outputs
    replace the old one's when it ends): S3 copies the object onto itself, a new version."""
    settings = stack_settings(args)
    bucket, _ = _clients(settings)
    upload = _upload_of(bucket, args.key)
    if upload is None:
        raise _absent(bucket, args.key)
    replaces = published_job(bucket, upload.key)
    copied = bucket.s3.copy_object(
        Bucket=bucket.name,
        Key=upload.key,
        CopySource={"Bucket": bucket.name, "Key": upload.key},
        MetadataDirective="REPLACE",  # S3 refuses a copy onto itself that changes nothing
        Metadata={"pagefleet-reconvert": f"{time.time():.3f}"},
        ContentType="application/pdf",
    )
    rel = keys.rel_of(upload.key)
    again = Upload(upload.key, copied.get("VersionId"), replaces)
    err.print(f"{rel}: converting again (s3://{bucket.name}/{upload.key})")
    if not args.wait:
        if args.json:
            emit_json({"document": rel, "key": upload.key})
        return Exit.DONE
    submission = Submission(bucket, {rel: again}, {rel: 0})
    return _await(args, settings, submission, f"pagefleet wait {rel}")
