"""``pagefleet run`` and ``pagefleet up``: the embedded stack on this machine."""

from __future__ import annotations

import argparse
import contextlib
import signal
import tempfile
import threading
from pathlib import Path

from pagefleet.cli.views import await_with_progress, console, records_table
from pagefleet.local.demo import write_demo_set
from pagefleet.local.pipeline import LocalPipeline
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import Submission


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
        progress = await_with_progress(submission)
        submission.download(out)
    console.print(records_table("pagefleet run", sorted(submission.records.items())))
    console.print(
        f"{progress.pages_done} pages in {progress.documents} documents in "
        f"{progress.seconds:.1f} s, {progress.pages_per_s:.1f} pages/s; outputs in {out}"
    )
    failed = [r for r in submission.records.values() if r.status != "done"]
    return 1 if failed else 0


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
