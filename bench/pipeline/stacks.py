"""Where the pipeline runs: the embedded stack started here, or a stack that already runs.

The embedded stack is moto, the handlers in this process and ``python -m runner`` with W
workers, sampled for CPU and memory; a deployed stack is only reached through its bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.pipeline.config import BenchConfig
from bench.pipeline.models import Document
from bench.pipeline.pipeline_run import PipelineRun, run_pipeline
from bench.pipeline.sampling import ResourceSampler
from embedded import MotoServer
from embedded.pipeline import LocalPipeline
from embedded.server import record_writes
from pagefleet.aws import client
from pagefleet.settings import Settings, load_settings, settings_from_terraform_outputs
from pagefleet.storage import Bucket


def deployed_settings(config: BenchConfig) -> Settings:
    """Settings for a stack that already runs: an endpoint (``pagefleet up``) or Terraform."""
    overrides: dict[str, Any] = {}
    if config.endpoint_url:
        overrides["endpoint_url"] = config.endpoint_url
    if config.bucket:
        overrides["bucket"] = config.bucket
    if config.stack_outputs:
        return settings_from_terraform_outputs(config.stack_outputs.read_text(), **overrides)
    return load_settings(**overrides)


BeforeRound = Callable[[int], None]


def run_deployed(
    docs: list[Document], config: BenchConfig, stamp: str, before_round: BeforeRound
) -> list[PipelineRun]:
    """Each W on the deployed stack; W only labels the run, the stack has its own workers."""
    settings = deployed_settings(config)
    bucket = Bucket(client("s3", settings), settings.bucket)
    return [
        run_pipeline(bucket, docs, workers, config, None, f"bench/{stamp}-w{workers}", before_round)
        for workers in config.workers
    ]


def run_embedded(
    docs: list[Document], config: BenchConfig, stamp: str, before_round: BeforeRound
) -> list[PipelineRun]:
    """Each W on the embedded stack: one moto server, and per W its own bucket and queues."""
    server = MotoServer()
    server.start()
    try:
        return [_embedded(server, docs, w, config, stamp, before_round) for w in config.workers]
    finally:
        server.stop()


def _embedded(
    server: MotoServer,
    docs: list[Document],
    workers: int,
    config: BenchConfig,
    stamp: str,
    before_round: BeforeRound,
) -> PipelineRun:
    name = f"bench-w{workers}-{stamp}".lower()
    planning: dict[str, Any] = {}
    if config.chunk_min_cost_s is not None:
        planning["chunk_min_cost_s"] = config.chunk_min_cost_s
    settings = load_settings(
        endpoint_url=server.url,
        bucket=name,
        queue_prefix=name,
        chunk_pages=config.chunk_pages,
        converter=config.converter,
        workers=workers,
        **planning,
    )
    pipeline = LocalPipeline(settings, workers=workers, server=server)
    stack = pipeline.start()
    try:
        pipeline.wait_ready(workers)
        runner = pipeline.runner
        sampler = ResourceSampler(
            roots=lambda: [runner.pid] if runner is not None else [],
            interval_s=config.sample_interval_s,
        )
        sampler.start()
        try:
            bucket = Bucket(stack.s3, pipeline.settings.bucket)
            run = run_pipeline(
                bucket, docs, workers, config, sampler, "bench", before_round, record_writes
            )
        finally:
            sampler.stop()
        run.resources = sampler.summary()
    finally:
        pipeline.stop()
    return run
