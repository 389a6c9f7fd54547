"""``pagefleet run`` and ``pagefleet up``: the embedded stack on this machine."""

from __future__ import annotations

import argparse
import errno
import os
import signal
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType

from cli.failures import Exit, usage
from cli.views import JsonRecords, await_with_progress, err, out, records_table
from embedded.pipeline import DrainReport, LocalPipeline, RunnerFailed, terminal_logs
from embedded.server import MotoServer, record_writes
from pagefleet import keys
from pagefleet.models import JobRecord, parsed
from pagefleet.settings import load_settings
from pagefleet.storage import Bucket
from pagefleet.submission import Progress, Submission, download, find_pdfs

# Where `pagefleet up` listens unless told otherwise: one endpoint across restarts, and a
# second `up` beside the first is refused rather than started on another port unnoticed.
UP_PORT = 5151


def run(args: argparse.Namespace) -> int:
    # The wait a user times runs from the command's start: its imports (moto's) count too.
    started = time.time() - _running_s()
    demo = args.input is None
    source = (
        Path(tempfile.mkdtemp(prefix="pagefleet-demo-")) if demo else Path(args.input).expanduser()
    )
    if not source.exists():
        raise usage(f"no such file or folder: {source}")
    if not demo and not find_pdfs(source):
        raise usage(f"no PDFs under {source} (files named .pdf, in any letter case)")
    where = Path(args.out).expanduser()
    settings = load_settings()
    where.mkdir(parents=True, exist_ok=True)
    log_file = where / "pagefleet.log"
    log_file.unlink(missing_ok=True)  # this run's log, not every run's
    logs = terminal_logs(verbose=False, log_file=str(log_file), terminal=True)
    with LocalPipeline(settings, workers=args.workers, logs=logs, keep_jobs_s=10) as pipeline:
        assert pipeline.stack is not None
        bucket = Bucket(pipeline.stack.s3, pipeline.settings.bucket)
        if demo:  # while the stack's processes start
            # Imported here: fpdf costs every other run ~0.25 CPU s of imports.
            from embedded.demo import write_demo_set

            write_demo_set(source)
            err.print(f"[bold]demo set[/] written to {source}")
        try:
            pipeline.wait_ready()  # the conversion's pages/s leaves Python start-up out
            ready = time.time()
            # Unless PAGEFLEET_ENDPOINT_URL is set, the server is this run's own, in this
            # process: its outbox holds no earlier records, and it counts the writes of records.
            own = not pipeline.external
            submission = Submission.upload(bucket, source, new_bucket=own)
            if own:
                submission.record_writes = record_writes
            stream = JsonRecords(submission) if args.json else None
            fetched: set[str] = set()

            def look(records: dict[str, JobRecord]) -> None:
                if (failure := pipeline.runner_failure()) is not None:
                    raise failure  # nothing would convert what is left
                if len(records) == len(submission.uploads):
                    pipeline.begin_stop()  # the stack winds down while the last outputs come
                # Each document's outputs as its record lands, while the others convert (only
                # the last one's are left to fetch once every record is in), and before its
                # JSON line, which may be read as "its files are there".
                for rel in records.keys() - fetched:
                    submission.download_document(rel, where)
                    fetched.add(rel)
                if stream is not None:
                    stream(records)

            progress = await_with_progress(submission, on_records=look)
        except RunnerFailed as exc:
            raise usage(f"the runner stopped: {exc}") from None
    logs.close()
    if not args.json:
        out.print(records_table("pagefleet run", sorted(submission.records.items())))
    err.print(run_summary(progress, time.time() - started, ready - started, where))
    failed = [r for r in submission.records.values() if r.status != "done"]
    return Exit.FAILED if failed else Exit.DONE


def _running_s() -> float:
    """Seconds since this process started. Linux gives its start in clock ticks since boot
    (/proc/self/stat, field 22), read here against CLOCK_BOOTTIME; psutil's create_time adds
    the boot time, which /proc/stat holds in whole seconds, so it may fall up to a second early
    (and a run's total exceed the wait its user timed). Elsewhere, psutil's."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22; the split leaves field 3 first
        return time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, AttributeError):
        import psutil  # here: nothing else in this process imports it (~0.014 CPU s)

        return time.time() - psutil.Process().create_time()


def run_summary(progress: Progress, total_s: float, starting_s: float, where: Path) -> str:
    """The last line of ``pagefleet run``: the pages over the whole wait, start to exit, as a
    user times the command (starting the stack's processes, stopping them and writing the
    outputs included), then the conversion alone, from the first upload to the last record."""
    overall = progress.pages_done / total_s if total_s > 0 else 0.0
    return (
        f"{progress.pages_done} pages in {progress.documents} documents in {total_s:.1f} s, "
        f"{overall:.1f} pages/s: {starting_s:.1f} s starting the stack, "
        f"{progress.seconds:.1f} s converting ({progress.pages_per_s:.1f} pages/s); "
        f"outputs in {where}"
    )


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


def _server(args: argparse.Namespace, external: bool) -> MotoServer | None:
    """The embedded server on ``--port``; None against PAGEFLEET_ENDPOINT_URL."""
    if external:
        if args.port is not None:
            raise usage("--port is for the embedded server: PAGEFLEET_ENDPOINT_URL is set")
        return None
    port = UP_PORT if args.port is None else args.port
    server = MotoServer(port=port)
    try:
        server.start()
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise usage(
            f"port {port} is in use: is another `pagefleet up` running? (--port N picks another, "
            "--port 0 any free one)"
        ) from None
    return server


def up(args: argparse.Namespace) -> int:
    settings = load_settings()
    server = _server(args, external=settings.endpoint_url is not None)
    signals = _Signals()
    signals.install()
    logs = terminal_logs(verbose=args.verbose, log_file=args.log_file, terminal=True)
    pipeline = LocalPipeline(
        settings, workers=args.workers, logs=logs, keep_jobs_s=args.keep_jobs, server=server
    )
    mirror = None
    try:
        pipeline.start()
        assert pipeline.stack is not None
        if args.out is not None:
            mirror = _Mirror(Bucket(pipeline.stack.s3, settings.bucket), Path(args.out))
        print(_banner(pipeline, args), flush=True)
        try:
            pipeline.wait(signals.stop)
        except RunnerFailed as exc:
            raise usage(f"the runner stopped: {exc}") from None
        print("stopping: no new uploads are split; draining the jobs in flight", flush=True)
        report = pipeline.drain(args.drain_timeout, hurry=signals.hurry)
        if mirror is not None:
            mirror.stop()
        print(_drain_summary(report, embedded=server is not None, mirror=args.out), flush=True)
    finally:
        pipeline.stop()
        if server is not None:
            server.stop()
        logs.close()
    return Exit.DONE


def _banner(pipeline: LocalPipeline, args: argparse.Namespace) -> str:
    """What to copy: every line works as printed in a shell of its own."""
    settings = pipeline.settings
    url, bucket, region = settings.endpoint_url, settings.bucket, settings.region
    lines = [f"pagefleet is up: endpoint {url}, bucket {bucket}"]
    if pipeline.external and pipeline.stack is not None:
        found = ", ".join(pipeline.stack.found) or "nothing"
        made = ", ".join(pipeline.stack.created) or "nothing"
        lines.append(f"PAGEFLEET_ENDPOINT_URL: found {found}; created {made}")
    lines += [
        "in another shell, for the aws CLI, boto3 and `pagefleet status`, `submit`, `get`:",
        "  export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing "
        f"AWS_DEFAULT_REGION={region}",
        f"  export PAGEFLEET_ENDPOINT_URL={url} PAGEFLEET_BUCKET={bucket}"
        + (f" PAGEFLEET_QUEUE_PREFIX={settings.queue_prefix}" if settings.queue_prefix else ""),
        f"  aws --endpoint-url {url} s3 cp my.pdf s3://{bucket}/inbox/my.pdf",
        f"  aws --endpoint-url {url} s3 ls --recursive s3://{bucket}/outbox/",
        "  pagefleet wait my && pagefleet get my --out .",
    ]
    if args.out is not None:
        lines.append(f"every finished document is copied to {args.out}/ as it lands")
    lines += [
        f"runner and handler logs: {_where_logs_go(args)}",
        f"Ctrl-C stops it: jobs in flight get up to {args.drain_timeout:.0f} s to finish "
        "(Ctrl-C again: at once).",
    ]
    return "\n".join(lines)


def _where_logs_go(args: argparse.Namespace) -> str:
    terminal = "everything here (--verbose)" if args.verbose else "warnings and errors here"
    return f"{terminal}; all of it in {args.log_file}" if args.log_file else terminal


def _drain_summary(report: DrainReport, *, embedded: bool, mirror: str | None) -> str:
    if report.drained:
        head = f"drained in {report.seconds:.1f} s: every job in flight has its record"
    else:
        head = (
            f"stopped after {report.seconds:.1f} s with {report.chunks_left} chunk and "
            f"{report.completions_left} completion messages still in flight"
        )
    if report.uploads_waiting:
        where = "lost with the embedded server" if embedded else "left on the ingest queue"
        head += f"; {report.uploads_waiting} uploads not yet split, {where}"
    if embedded:  # the server keeps everything in memory
        kept = f"; what finished is in {mirror}/" if mirror else ""
        head += f". The embedded server's bucket and queues go with it now{kept}"
    return head


class _Mirror:
    """``up --out DIR``: each record that lands in the outbox, with its Markdown and assets,
    copied below DIR, so what the embedded server holds outlives it."""

    LOOK_S = 0.5

    def __init__(self, bucket: Bucket, where: Path) -> None:
        self.bucket = bucket
        self.where = where
        self._copied: dict[str, str] = {}  # record key -> ETag copied
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox-mirror", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self.LOOK_S):  # S3 has nothing to await: look again
            self.copy_new()

    def copy_new(self) -> None:
        for key, etag in self.bucket.list_etags(keys.OUTBOX).items():
            if not keys.is_outbox_record(key) or self._copied.get(key) == etag:
                continue
            record = parsed(JobRecord, key, self.bucket.get(key))
            if record is None:
                continue
            try:
                download(self.bucket, key, record, self.where)
            except ValueError as exc:  # a name that would climb out of DIR
                err.print(f"[red]not copied: {exc}")
            self._copied[key] = etag

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        self.copy_new()  # what the drain finished
