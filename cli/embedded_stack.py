"""``pagefleet run`` and ``pagefleet up``: the embedded stack on this machine."""

from __future__ import annotations

import argparse
import signal
import tempfile
import threading
from pathlib import Path
from types import FrameType

from cli.views import await_with_progress, console, records_table
from embedded.demo import write_demo_set
from embedded.pipeline import DrainReport, LocalPipeline, terminal_logs
from pagefleet.settings import load_settings
from pagefleet.storage import Bucket
from pagefleet.submission import Submission


def run(args: argparse.Namespace) -> int:
    demo = args.input is None
    source = (
        Path(tempfile.mkdtemp(prefix="pagefleet-demo-")) if demo else Path(args.input).expanduser()
    )
    if not source.exists():
        console.print(f"[red]no such file or folder: {source}")
        return 2
    out = Path(args.out).expanduser()
    settings = load_settings()
    out.mkdir(parents=True, exist_ok=True)
    logs = terminal_logs(verbose=False, log_file=str(out / "pagefleet.log"), terminal=True)
    with LocalPipeline(settings, workers=args.workers, logs=logs, keep_jobs_s=10) as pipeline:
        assert pipeline.stack is not None
        bucket = Bucket(pipeline.stack.s3, pipeline.settings.bucket)
        if demo:  # while the stack's processes start
            write_demo_set(source)
            console.print(f"[bold]demo set[/] written to {source}")
        pipeline.wait_ready()  # pages/s counts conversion, not Python start-up
        submission = Submission.upload(bucket, source)
        if not submission.files:
            console.print(f"[yellow]no PDFs under {source}")
            return 0
        progress = await_with_progress(submission)
        submission.download(out)
    logs.close()
    console.print(records_table("pagefleet run", sorted(submission.records.items())))
    console.print(
        f"{progress.pages_done} pages in {progress.documents} documents in "
        f"{progress.seconds:.1f} s, {progress.pages_per_s:.1f} pages/s; outputs in {out}"
    )
    failed = [r for r in submission.records.values() if r.status != "done"]
    return 1 if failed else 0


class _Signals:
    """The first SIGINT/SIGTERM asks for a drained stop, a second one for a stop now."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.hurry = threading.Event()

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        (self.hurry if self.stop.is_set() else self.stop).set()

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self)


def up(args: argparse.Namespace) -> int:
    settings = load_settings()
    signals = _Signals()
    signals.install()
    logs = terminal_logs(verbose=args.verbose, log_file=args.log_file, terminal=True)
    pipeline = LocalPipeline(settings, workers=args.workers, logs=logs, keep_jobs_s=args.keep_jobs)
    try:
        pipeline.start()
        assert pipeline.stack is not None
        url, bucket = pipeline.settings.endpoint_url, pipeline.settings.bucket
        print(f"pagefleet is up: endpoint {url}, bucket {bucket}", flush=True)
        if pipeline.external:
            found = ", ".join(pipeline.stack.found) or "nothing"
            made = ", ".join(pipeline.stack.created) or "nothing"
            print(f"PAGEFLEET_ENDPOINT_URL: found {found}; created {made}", flush=True)
        print(
            "drop PDFs into inbox/ and watch outbox/, e.g.:\n"
            f"  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \\\n"
            f"  aws --endpoint-url {url} s3 cp my.pdf s3://{bucket}/inbox/my.pdf\n"
            f"  aws --endpoint-url {url} s3 ls --recursive s3://{bucket}/outbox/\n"
            f"runner and handler logs: {_where_logs_go(args)}\n"
            f"Ctrl-C stops it: jobs in flight get up to {args.drain_timeout:.0f} s to finish "
            "(Ctrl-C again: at once).",
            flush=True,
        )
        signals.stop.wait()
        print("stopping: no new uploads are split; draining the jobs in flight", flush=True)
        report = pipeline.drain(args.drain_timeout, hurry=signals.hurry)
        print(_drain_summary(report, lost=not pipeline.external), flush=True)
    finally:
        pipeline.stop()
        logs.close()
    return 0


def _where_logs_go(args: argparse.Namespace) -> str:
    terminal = "everything here (--verbose)" if args.verbose else "warnings and errors here"
    return f"{terminal}; all of it in {args.log_file}" if args.log_file else terminal


def _drain_summary(report: DrainReport, *, lost: bool) -> str:
    if report.drained:
        head = f"drained in {report.seconds:.1f} s: every job in flight has its record"
    else:
        head = (
            f"stopped after {report.seconds:.1f} s with {report.chunks_left} chunk and "
            f"{report.completions_left} completion messages still in flight"
        )
    if report.uploads_waiting:
        where = "lost with the embedded server" if lost else "left on the ingest queue"
        head += f"; {report.uploads_waiting} uploads not yet split, {where}"
    return head
