"""The pipeline at one W, measured: a warm-up job, then rounds of two passes.

Each round sends every document alone, one after the other (its latency and pages/s), then all
of them at once (the throughput of the whole set). Before each round, ``before_round`` runs the
baselines it is compared with, so that each pair is measured minutes apart at most. Stage times
are read after the clock stops.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import synthetic_document
from bench.pipeline.jobs import Job, await_jobs, submit
from bench.pipeline.models import Document, ResourceSummary
from bench.pipeline.sampling import ResourceSampler, Window
from bench.pipeline.stages import load_stages
from pagefleet.storage import Bucket
from pagefleet.submission import RecordWrites, largest_first


@dataclass
class PipelineRun:
    """What one W produced: jobs of the per-document and batch passes, and resources."""

    workers: int
    single: list[Job] = field(default_factory=list)
    batches: list[tuple[float, list[Job]]] = field(default_factory=list)  # (makespan_s, jobs)
    windows: dict[str, Window] = field(default_factory=dict)  # by pass, over every round
    resources: ResourceSummary | None = None  # None: not sampled (a deployed stack)

    def keep(self, kind: str, window: list[Window]) -> None:
        """Add one measured phase to its pass's CPU over every round (none: not sampled)."""
        if window:
            self.windows[kind] = (
                self.windows[kind].merge(window[0]) if kind in self.windows else window[0]
            )

    def jobs(self) -> list[Job]:
        return [*self.single, *(job for _, batch in self.batches for job in batch)]


def run_pipeline(
    bucket: Bucket,
    docs: list[Document],
    workers: int,
    config: BenchConfig,
    sampler: ResourceSampler | None,
    tag: str,
    before_round: Callable[[int], None] | None = None,
    record_writes: RecordWrites | None = None,
) -> PipelineRun:
    """``before_round(workers)``: called before each round is timed; ``record_writes``: see
    :func:`bench.pipeline.jobs.await_jobs`."""
    run = PipelineRun(workers=workers)
    warmup = synthetic_document(config.chunk_pages * 2 * workers, config)
    await_jobs(bucket, submit(bucket, f"{tag}/warmup", [warmup]), config.timeout_s, record_writes)

    def measured() -> AbstractContextManager[list[Window]]:
        return sampler.window() if sampler is not None else nullcontext([])

    for round_ in range(config.repeat):
        if before_round is not None:
            before_round(workers)
        for doc in docs:
            # One window per job: its own CPU by role, and what the rest of the machine took.
            with measured() as window:
                jobs = submit(bucket, f"{tag}/r{round_}/single", [doc])
                await_jobs(bucket, jobs, config.timeout_s, record_writes)
            if window:
                jobs[0].cpu = window[0].by_role()
            run.single.extend(jobs)
            run.keep("single", window)
        with measured() as window:
            # In the order `pagefleet run` uploads a folder.
            batch = largest_first(docs, lambda doc: doc.bytes)
            jobs = submit(bucket, f"{tag}/r{round_}/batch", batch)
            await_jobs(bucket, jobs, config.timeout_s, record_writes)
        run.keep("batch", window)
        start = min(j.uploaded_at for j in jobs)
        end = max(j.record.finished_at for j in jobs if j.record is not None)
        run.batches.append((end - start, jobs))
    for job in run.jobs():
        load_stages(bucket, job, workers)
    return run
