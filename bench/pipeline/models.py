"""The typed results of one benchmark run: what ``results.json`` holds and the report renders.

The JSON keeps the shape of earlier runs: every ``bench/results/*/results.json`` committed
before these models existed loads with :meth:`BenchResults.model_validate_json` and writes back
unchanged (``tests/test_bench_report.py``); each re-rendered its ``results.md`` byte for byte
when these models replaced the dicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from pagefleet.models import JobStatus, StageTimings


class _Model(BaseModel):
    # A key the models do not know is a bug or a file they cannot render, not something to drop.
    model_config = ConfigDict(extra="forbid")


class Document(_Model):
    """One input as measured: its name in the report, file, pages and bytes."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    pages: int
    bytes: int


class HostInfo(_Model):
    cpus: int | None
    load_average: list[float]  # 1, 5 and 15 minutes
    platform: str
    python: str


class Host(_Model):
    before: HostInfo
    after: HostInfo


class RunSettings(_Model):
    converter: str
    chunk_pages: int
    repeat: int
    workers: list[int]
    warm_workers: str  # what "warm" meant when the clock started


class BaselineDocument(_Model):
    seconds: list[float]  # one per round
    median_s: float
    cpu_s: float  # median CPU seconds: what the conversion costs whatever else loads the machine
    pages_per_s: float


class Baseline(_Model):
    """The plain converter over each whole document in one fresh process."""

    what: str
    per_document: dict[str, BaselineDocument]
    pages: int
    total_s: float
    pages_per_s: float
    import_s: float
    peak_rss_mb: float


class XargsDocument(_Model):
    seconds: float  # its process's wall seconds, imports included (median of the rounds)
    cpu_s: float  # its process's CPU seconds: the conversion's own cost at this thread share


class XargsRun(_Model):
    """What a user gets first: ``xargs -P W`` over the files, one plain process per file."""

    workers: int
    command: str
    ocr_threads: int
    makespan_s: list[float]
    makespan_median_s: float
    pages_per_s: float
    per_document: dict[str, XargsDocument]


class PlanCheck(_Model):
    """The splitter's plan against what the chunks took (the job record, median round)."""

    estimated_s: float  # the document's estimated conversion seconds
    converted_s: float  # the chunks' conversion seconds, summed
    chunk_estimates_s: list[float]
    chunk_seconds: list[float]
    ocr_pages: int  # pages the plan took to need OCR


class SplitCost(_Model):
    """The splitter's own time and peak RSS on one document, in a fresh process."""

    name: str
    pages: int
    bytes: int
    chunks: int
    seconds: float
    peak_rss_mb: float
    rss_before_mb: float  # after the imports, before the document
    rss_budget_mb: float
    time_target_met: bool
    rss_target_met: bool


class StageSeconds(_Model):
    """A job's latency cut into consecutive stages that add up to it (see bench.pipeline.stages)."""

    ingest_s: float = 0.0
    split_s: float = 0.0
    queue_wait_s: float = 0.0
    convert_s: float = 0.0
    result_upload_s: float = 0.0
    chunk_overhead_s: float = 0.0
    completion_wait_s: float = 0.0
    assemble_s: float = 0.0

    def of(self, stage: str) -> float:
        value: float = getattr(self, stage)
        return value


# The stages in the order they happen.
STAGES = tuple(StageSeconds.model_fields)


class RoleCpu(_Model):
    cpu_s: float
    cores: float  # CPU seconds over wall seconds


class PassCpu(_Model):
    """CPU by process role over one pass (every document alone, or all at once).

    In the JSON the roles sit beside ``wall_s`` in one object, as earlier runs wrote them.
    """

    wall_s: float
    roles: dict[str, RoleCpu]

    @model_validator(mode="before")
    @classmethod
    def _from_flat(cls, data: Any) -> Any:
        if isinstance(data, dict) and "roles" not in data:
            roles = {k: v for k, v in data.items() if k != "wall_s"}
            return {"wall_s": data.get("wall_s"), "roles": roles}
        return data

    @model_serializer(mode="wrap")
    def _to_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        nested = handler(self)
        return {**nested["roles"], "wall_s": nested["wall_s"]}


class DocumentRun(_Model):
    """One document at one W, run alone; medians over the rounds."""

    pages: int
    chunks: int
    status: list[JobStatus]
    latency_s: list[float]
    latency_p50_s: float
    latency_p95_s: float
    pages_per_s: float
    efficiency: float
    efficiency_bound: float  # min(W, chunks) / W: a document of fewer chunks cannot use every W
    overhead_s: float  # latency p50 above the baseline seconds spread over min(W, chunks)
    stages: StageSeconds
    cpu: dict[str, RoleCpu]  # by role while it ran alone
    record_timings: StageTimings  # the job record's own timings, of the median round
    # Runs before cost-based plans have none; left out of the JSON when absent.
    plan: PlanCheck | None = Field(None, exclude_if=lambda v: v is None)


class Overall(_Model):
    """Every document uploaded at once, at one W; medians over the rounds."""

    what: str
    pages: int
    documents: int
    makespan_s: list[float]
    makespan_median_s: float
    pages_per_s: float
    baseline_pages_per_s: float
    efficiency: float
    latency_p50_s: float
    latency_p95_s: float
    failed_jobs: int
    stages_total: StageSeconds  # summed over the jobs of a round: where the set's seconds went


class ProcessPeak(_Model):
    pid: int
    role: str
    peak_rss_mb: float
    mean_cpu_pct: float


class GpuPeak(_Model):
    max_util_pct: float
    max_memory_used_mb: float


class GpuSummary(_Model):
    note: str  # what was sampled, or why nothing was
    devices: dict[int, GpuPeak]


class ResourceSummary(_Model):
    """What the sampler saw over one W (bench.pipeline.sampling): peaks per process and role,
    GPUs."""

    interval_s: float
    processes: list[ProcessPeak]
    peak_rss_mb_by_role: dict[str, float]
    gpu: GpuSummary
    samples: int


class PairedRound(_Model):
    """One round of the pipeline beside the baselines measured just before it: the host's
    speed drifts over minutes, so each ratio is taken within its round."""

    document: str  # the document E is reported on
    baseline_s: float  # the plain process on it, this round
    latency_s: float  # the pipeline on it, alone, this round
    efficiency: float  # baseline_s / (W x latency_s)
    xargs_makespan_s: float | None = Field(None, exclude_if=lambda v: v is None)
    makespan_s: float  # the pipeline, every document at once, this round
    speedup: float | None = Field(None, exclude_if=lambda v: v is None)  # xargs / makespan


class PipelineSummary(_Model):
    """The pipeline at one W."""

    workers: int
    per_document: dict[str, DocumentRun]
    overall: Overall
    cpu: dict[str, PassCpu]  # by pass: "single", "batch"
    harness_cpu_s: dict[str, dict[str, float]]  # by pass, then thread group
    resources: ResourceSummary | None  # None: a deployed stack, not sampled
    # Runs before the baselines were measured round by round have none.
    rounds: list[PairedRound] | None = Field(None, exclude_if=lambda v: v is None)


class ColdRun(_Model):
    """One command from a fresh start to its exit: its wall time, and the CPU of every process
    of its tree (:mod:`bench.pipeline.cold`)."""

    command: str
    wall_s: float  # until the command itself exited
    reaped_s: float  # until its last descendant did
    user_s: float
    sys_s: float
    load: float  # the 1-minute load average when it started
    summary: dict[str, float] | None = None  # pagefleet run's own figures, from its last line

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


class ColdPair(_Model):
    """A cold ``pagefleet run --workers W`` and, just after it, ``xargs -P W`` on the same PDFs."""

    workers: int
    run: ColdRun
    xargs: ColdRun

    @property
    def speedup(self) -> float:
        """The run's speed over xargs's, start-up counted: xargs's wall over the run's."""
        return self.xargs.wall_s / self.run.wall_s

    @property
    def cpu_ratio(self) -> float:
        return self.run.cpu_s / self.xargs.cpu_s


class Target(_Model):
    """One of the issue's targets, reported, never enforced."""

    name: str
    target: str
    value: float
    met: bool


class BenchResults(_Model):
    command: str
    started_at: str
    duration_s: float
    host: Host
    mode: Literal["embedded", "deployed"]
    settings: RunSettings
    documents: list[Document]
    baseline: Baseline
    splitter: list[SplitCost]
    pipeline: list[PipelineSummary]
    targets: list[Target]
    xargs: list[XargsRun] | None = Field(None, exclude_if=lambda v: v is None)
    # --cold N: cold `pagefleet run` against xargs, the start-up a user waits for counted.
    cold: list[ColdPair] | None = Field(None, exclude_if=lambda v: v is None)

    def largest(self, count: int) -> list[str]:
        """Names of the ``count`` documents with the most pages, most first."""
        docs = sorted(self.documents, key=lambda d: -d.pages)
        return [d.name for d in docs[:count]]

    def one_page(self, besides: list[str]) -> list[str]:
        """Names of the 1-page documents not in ``besides``."""
        return [d.name for d in self.documents if d.pages == 1 and d.name not in besides]

    def cpu_roles(self) -> list[str]:
        """Every process role that any pass at any W measured."""
        return sorted({r for run in self.pipeline for c in run.cpu.values() for r in c.roles})
