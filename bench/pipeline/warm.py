"""One embedded stack, warmed up, for the scripts under bench/results that measure a stack's
rounds or its idling: moto, the Lambda environments and ``python -m runner`` with W workers,
after one untimed round of the documents, as ``scripts/bench`` times its rounds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from bench.pipeline.jobs import await_jobs, submit
from bench.pipeline.models import Document
from embedded.pipeline import LocalPipeline
from embedded.server import MotoServer
from pagefleet.settings import load_settings
from pagefleet.storage import Bucket


@contextmanager
def warm_stack(
    docs: list[Document], name: str, workers: int = 2, timeout_s: float = 600.0
) -> Iterator[tuple[Bucket, LocalPipeline]]:
    """The stack's bucket and pipeline once ``docs`` went through it once; stopped after.
    ``name`` (with a time stamp) names its bucket and queues."""
    server = MotoServer()
    server.start()
    try:
        name = f"{name}-{int(time.time())}"
        settings = load_settings(
            endpoint_url=server.url, bucket=name, queue_prefix=name, workers=workers
        )
        pipeline = LocalPipeline(settings, workers=workers, server=server)
        stack = pipeline.start()
        try:
            pipeline.wait_ready(workers)
            bucket = Bucket(stack.s3, pipeline.settings.bucket)
            await_jobs(bucket, submit(bucket, "warmup", docs), timeout_s)
            yield bucket, pipeline
        finally:
            pipeline.stop()
    finally:
        server.stop()
