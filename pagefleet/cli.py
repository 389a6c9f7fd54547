"""The ``pagefleet`` command: ``run`` a folder through the embedded stack, or keep it ``up``."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path

try:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from pagefleet.local.demo import write_demo_set
    from pagefleet.local.pipeline import LocalPipeline
except ModuleNotFoundError as missing:  # a Lambda or runner install: the core only
    raise SystemExit(
        f"the pagefleet command needs the embedded stack's extra ({missing.name} is missing): "
        "pip install 'pagefleet[local]'"
    ) from None
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import Progress as RunProgress
from pagefleet.submission import Submission

console = Console(stderr=True)


def run(args: argparse.Namespace) -> int:
    if args.input is None:
        source = Path(tempfile.mkdtemp(prefix="pagefleet-demo-"))
        write_demo_set(source)
        console.print(f"[bold]demo set[/] written to {source}")
    else:
        source = Path(args.input).expanduser()
    if not source.exists():
        console.print(f"[red]no such file or folder: {source}")
        return 2
    out = Path(args.out).expanduser()
    settings = Settings()
    log_file = out / "runner.log"
    out.mkdir(parents=True, exist_ok=True)
    with LocalPipeline(settings, workers=args.workers, log_file=str(log_file)) as pipeline:
        assert pipeline.stack is not None
        bucket = Bucket(pipeline.stack.s3, pipeline.settings.bucket)
        pipeline.wait_ready()  # pages/s counts conversion, not Python start-up
        submission = Submission.upload(bucket, source)
        if not submission.files:
            console.print(f"[yellow]no PDFs under {source}")
            return 0
        progress = RunProgress(
            documents=len(submission.files), pages=sum(submission.pages.values())
        )
        with _progress_bar() as bar:
            docs = bar.add_task("documents", total=progress.documents, rate="")
            pages = bar.add_task("pages", total=progress.pages or None, rate="")

            def tick() -> None:
                bar.update(docs, completed=progress.documents_done)
                bar.update(
                    pages, completed=progress.pages_done, rate=f"{progress.pages_per_s:.1f} pages/s"
                )

            submission.wait(progress, tick)
        submission.download(out)
    console.print(_summary(submission, out))
    console.print(
        f"{progress.pages_done} pages in {progress.documents} documents in "
        f"{progress.seconds:.1f} s, {progress.pages_per_s:.1f} pages/s; outputs in {out}"
    )
    failed = [r for r in submission.records.values() if r.status != "done"]
    return 1 if failed else 0


def _progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description:>9}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
    )


def _summary(submission: Submission, out: Path) -> Table:
    table = Table(title="pagefleet run")
    for column in ("document", "pages", "status", "seconds", "error"):
        table.add_column(column, justify="right" if column in ("pages", "seconds") else "left")
    for rel in sorted(submission.records):
        record = submission.records[rel]
        style = {"done": "green", "partial": "yellow", "failed": "red"}[record.status]
        error = f"{record.error.code}: {record.error.message}" if record.error else ""
        table.add_row(
            rel,
            str(record.pages),
            f"[{style}]{record.status}",
            f"{record.timings.total_s:.2f}",
            error,
        )
    return table


def up(args: argparse.Namespace) -> int:
    settings = Settings()
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with LocalPipeline(settings, workers=args.workers) as pipeline:
        url, bucket = pipeline.settings.endpoint_url, pipeline.settings.bucket
        print(f"pagefleet is up: endpoint {url}, bucket {bucket}", flush=True)
        print(
            "drop PDFs into inbox/ and watch outbox/, e.g.:\n"
            f"  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing \\\n"
            f"  aws --endpoint-url {url} s3 cp my.pdf s3://{bucket}/inbox/my.pdf\n"
            f"  aws --endpoint-url {url} s3 ls --recursive s3://{bucket}/outbox/\n"
            "Ctrl-C stops it.",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            stopped.wait()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pagefleet", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run_cmd = commands.add_parser("run", help="convert every PDF under IN into OUT")
    run_cmd.add_argument("input", nargs="?", help="a PDF or a folder (default: a demo set)")
    run_cmd.add_argument("--out", default="out", help="where the outputs land (default: out)")
    run_cmd.add_argument(
        "--workers", type=int, default=None, help="runner worker processes (default: one per core)"
    )
    run_cmd.set_defaults(func=run)
    up_cmd = commands.add_parser("up", help="start the embedded stack and keep it running")
    up_cmd.add_argument("--workers", type=int, default=None)
    up_cmd.set_defaults(func=up)
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
