"""One benchmark run: the plain converter, the splitter, and the pipeline at each W.

The pipeline runs on the embedded stack (moto, the handlers in this process, ``python -m
runner`` with W workers) or against a deployed stack. Workers are warm before anything is
timed (:meth:`LocalPipeline.wait_ready` plus one untimed warm-up job). Each round has two
passes: every document alone, one after the other (its latency and pages/s), then all of them
at once (throughput of the whole set).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.sampling import ResourceSampler, Window
from bench.synthetic import cached_synthetic
from pagefleet import keys
from pagefleet.aws import client
from pagefleet.local import MotoServer
from pagefleet.local.pipeline import LocalPipeline
from pagefleet.models import ChunkResult, JobManifest, JobRecord
from pagefleet.planning import plan_chunks
from pagefleet.settings import Settings, load_settings
from pagefleet.storage import Bucket, NotFound
from pagefleet.submission import await_records, count_pages, find_pdfs, upload

# Job records are objects in S3: nothing to await, so they are looked for at this interval.
# Latency does not depend on it: it is taken from the time stamped in the record.
RECORD_POLL_S = 0.2
# The stages of one job's latency, in order; they add up to it (see job_stages).
STAGES = (
    "ingest_s",
    "split_s",
    "queue_wait_s",
    "convert_s",
    "result_upload_s",
    "chunk_overhead_s",
    "completion_wait_s",
    "assemble_s",
)
# Stages that are orchestration, not conversion: the "overhead" of the report.
OVERHEAD_STAGES = ("ingest_s", "queue_wait_s", "chunk_overhead_s", "completion_wait_s")


@dataclass(frozen=True)
class Document:
    name: str
    path: Path
    pages: int
    bytes: int


@dataclass
class BenchConfig:
    inputs: list[Path] = field(default_factory=list)
    synthetic: list[int] = field(default_factory=list)
    workers: list[int] = field(default_factory=lambda: [1, 2])
    repeat: int = 3
    converter: str = "text-layer"
    chunk_pages: int = 16
    splitter_pages: int = 2000  # the synthetic document the splitter is measured on; 0: none
    endpoint_url: str | None = None
    stack_outputs: Path | None = None
    bucket: str | None = None
    cache_dir: Path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pagefleet"
    timeout_s: float = 900.0
    sample_interval_s: float = 0.5


def collect_documents(config: BenchConfig) -> list[Document]:
    docs: list[Document] = []
    for root in config.inputs:
        for path in find_pdfs(root):
            rel = path.relative_to(root) if root.is_dir() else Path(path.name)
            docs.append(_document(rel.with_suffix("").as_posix(), path))
    for pages in config.synthetic:
        path = cached_synthetic(pages, config.cache_dir / "synthetic")
        docs.append(_document(path.stem, path))
    names = [d.name for d in docs]
    if len(set(names)) != len(names):
        raise ValueError(f"two inputs share a name: {names}")
    return docs


def _document(name: str, path: Path) -> Document:
    return Document(name=name, path=path, pages=count_pages(path), bytes=path.stat().st_size)


def _run_json(args: list[str]) -> dict[str, Any]:
    """A bench module in a fresh interpreter; its stdout is one JSON object."""
    done = subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        check=False,
        cwd=Path(__file__).resolve().parents[1],
    )
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {done.stderr.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure_baseline(docs: list[Document], config: BenchConfig) -> dict[str, Any]:
    raw = _run_json(
        [
            "bench.baseline",
            "--converter",
            config.converter,
            "--repeat",
            str(config.repeat),
            *(str(d.path) for d in docs),
        ]
    )
    per_document = {}
    for doc in docs:
        seconds = raw["seconds"][str(doc.path)]
        median = statistics.median(seconds)
        per_document[doc.name] = {
            "seconds": [round(s, 4) for s in seconds],
            "median_s": round(median, 4),
            # CPU seconds: what the conversion costs whatever else loads the machine.
            "cpu_s": round(statistics.median(raw["cpu_seconds"][str(doc.path)]), 4),
            "pages_per_s": round(doc.pages / median, 3) if median else 0.0,
        }
    total_s = sum(v["median_s"] for v in per_document.values())
    pages = sum(d.pages for d in docs)
    return {
        "what": "the converter on each whole document in one fresh process (plain invocation); "
        "median of the rounds",
        "per_document": per_document,
        "pages": pages,
        "total_s": round(total_s, 4),
        "pages_per_s": round(pages / total_s, 3) if total_s else 0.0,
        "import_s": round(raw["import_s"], 3),
        "peak_rss_mb": round(raw["peak_rss_mb"], 1),
    }


def measure_splitter(docs: list[Document], config: BenchConfig) -> list[dict[str, Any]]:
    """Time and peak RSS of the splitter on the largest input and the big synthetic one."""
    targets = sorted(docs, key=lambda d: d.pages)[-1:]
    if config.splitter_pages:
        path = cached_synthetic(config.splitter_pages, config.cache_dir / "synthetic")
        if all(d.path != path for d in targets):
            targets.append(_document(path.stem, path))
    rows = []
    for doc in targets:
        raw = _run_json(
            [
                "bench.split_cost",
                str(doc.path),
                "--chunk-pages",
                str(config.chunk_pages),
                "--repeat",
                str(config.repeat),
            ]
        )
        seconds = statistics.median(raw["seconds"])
        budget_mb = 3 * doc.bytes / 2**20 + 150
        rows.append(
            {
                "name": doc.name,
                "pages": doc.pages,
                "bytes": doc.bytes,
                "chunks": raw["chunks"],
                "seconds": round(seconds, 4),
                "peak_rss_mb": round(raw["peak_rss_mb"], 1),
                "rss_before_mb": round(raw["rss_before_mb"], 1),
                "rss_budget_mb": round(budget_mb, 1),
                "time_target_met": seconds <= 1.0,
                "rss_target_met": raw["peak_rss_mb"] <= budget_mb,
            }
        )
    return rows


# --- the pipeline --------------------------------------------------------------------------


@dataclass
class Job:
    doc: Document
    rel: str
    uploaded_at: float  # time.time() just before the PUT to inbox/
    record: JobRecord | None = None
    stages: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)  # by role, while it ran alone

    @property
    def latency_s(self) -> float:
        assert self.record is not None
        return self.record.finished_at - self.uploaded_at


def submit(bucket: Bucket, prefix: str, docs: Iterable[Document]) -> list[Job]:
    jobs = []
    for doc in docs:
        rel = f"{prefix}/{doc.name}"
        data = doc.path.read_bytes()  # read before the clock starts
        jobs.append(Job(doc=doc, rel=rel, uploaded_at=time.time()))
        upload(bucket, rel, data)
    return jobs


def await_jobs(bucket: Bucket, jobs: list[Job], timeout_s: float) -> None:
    """Fill every job's record, waiting at most ``timeout_s`` for the last."""
    records = await_records(
        bucket, [job.rel for job in jobs], timeout_s=timeout_s, interval_s=RECORD_POLL_S
    )
    for job in jobs:
        job.record = records[job.rel]


def job_stages(
    job: Job, manifest: JobManifest | None, results: list[ChunkResult], workers: int
) -> dict[str, float]:
    """The job's latency cut into consecutive wall-clock stages that add up to it.

    ingest: upload to the splitter starting (S3 event, ingest queue, Lambda poll);
    split; queue wait: chunks sent to the first chunk picked up; then the chunk phase (first
    pickup to last result), cut into convert and result upload (summed over chunks, divided by
    the lanes min(W, chunks) that ran them) and the rest, chunk overhead (chunk download,
    IPC, result write, polls, uneven lanes); completion wait: last result to the completion
    step starting (S3 event, completion queue, Lambda poll); assembly (read results, render).
    """
    record = job.record
    assert record is not None
    latency = job.latency_s
    if manifest is None or not results:  # failed before any chunk existed
        split = record.timings.split_s
        return {**dict.fromkeys(STAGES, 0.0), "ingest_s": latency - split, "split_s": split}
    sent = manifest.created_at + manifest.split_s
    starts = [sent + r.queue_wait_s for r in results if r.finished_at]
    finished = [r.finished_at for r in results if r.finished_at]
    lanes = min(workers, len(results))
    convert = sum(r.convert_s for r in results) / lanes
    upload = sum(r.upload_s for r in results) / lanes
    first_start, last_done = min(starts), max(finished)
    assemble_start = record.finished_at - record.timings.assemble_s
    stages = {
        "ingest_s": manifest.created_at - job.uploaded_at,
        "split_s": manifest.split_s,
        "queue_wait_s": first_start - sent,
        "convert_s": convert,
        "result_upload_s": upload,
        "chunk_overhead_s": (last_done - first_start) - convert - upload,
        "completion_wait_s": assemble_start - last_done,
        "assemble_s": record.timings.assemble_s,
    }
    return {name: round(value, 4) for name, value in stages.items()}


def load_stages(bucket: Bucket, job: Job, workers: int) -> None:
    """Fill ``job.stages`` from its manifest and chunk results (read after the clock stops)."""
    assert job.record is not None
    try:
        manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(job.record.job_id)))
    except NotFound:
        manifest = None
    results = []
    for chunk in manifest.chunks if manifest else []:
        try:
            body = bucket.get(keys.chunk_result(job.record.job_id, chunk.index))
        except NotFound:  # expired by a lifecycle rule on a deployed stack
            continue
        results.append(ChunkResult.model_validate_json(body))
    job.stages = job_stages(job, manifest, results, workers)


@dataclass
class PipelineRun:
    """What one W produced: jobs of the per-document and batch passes, and resources."""

    workers: int
    single: list[Job] = field(default_factory=list)
    batches: list[tuple[float, list[Job]]] = field(default_factory=list)  # (makespan_s, jobs)
    windows: dict[str, Window] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)


def run_pipeline(
    bucket: Bucket,
    docs: list[Document],
    workers: int,
    config: BenchConfig,
    sampler: ResourceSampler | None,
    tag: str,
) -> PipelineRun:
    run = PipelineRun(workers=workers)
    warmup = cached_synthetic(config.chunk_pages * 2 * workers, config.cache_dir / "synthetic")
    warm_jobs = submit(bucket, f"{tag}/warmup", [_document("warmup", warmup)])
    await_jobs(bucket, warm_jobs, config.timeout_s)

    def measured() -> Any:
        return sampler.window() if sampler is not None else contextlib.nullcontext([])

    for round_ in range(config.repeat):
        for doc in docs:
            # One window per job: its own CPU by role, and what the rest of the machine took.
            with measured() as window:
                jobs = submit(bucket, f"{tag}/r{round_}/single", [doc])
                await_jobs(bucket, jobs, config.timeout_s)
            if window:
                jobs[0].cpu = window[0].by_role()
            run.single.extend(jobs)
            _keep(run, "single", window)
        with measured() as window:
            jobs = submit(bucket, f"{tag}/r{round_}/batch", docs)
            await_jobs(bucket, jobs, config.timeout_s)
        _keep(run, "batch", window)
        start = min(j.uploaded_at for j in jobs)
        end = max(j.record.finished_at for j in jobs if j.record is not None)
        run.batches.append((end - start, jobs))
    for job in [*run.single, *(j for _, batch in run.batches for j in batch)]:
        load_stages(bucket, job, workers)
    return run


def _keep(run: PipelineRun, kind: str, window: list[Window]) -> None:
    if window:
        run.windows[kind] = run.windows[kind].merge(window[0]) if kind in run.windows else window[0]


def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _median_stages(jobs: list[Job]) -> dict[str, float]:
    return {s: round(statistics.median(j.stages[s] for j in jobs), 4) for s in STAGES}


def _median_cpu(jobs: list[Job]) -> dict[str, dict[str, float]]:
    roles = sorted({role for j in jobs for role in j.cpu})
    return {
        role: {
            key: round(statistics.median(j.cpu.get(role, {}).get(key, 0.0) for j in jobs), 3)
            for key in ("cpu_s", "cores")
        }
        for role in roles
    }


def summarize_pipeline(
    run: PipelineRun, docs: list[Document], baseline: dict[str, Any], chunk_pages: int
) -> dict[str, Any]:
    workers = run.workers
    per_document = {}
    for doc in docs:
        jobs = [j for j in run.single if j.doc == doc]
        latencies = [j.latency_s for j in jobs]
        p50 = statistics.median(latencies)
        base = baseline["per_document"][doc.name]
        pages_per_s = doc.pages / p50 if p50 > 0 else 0.0
        chunks = len(plan_chunks(doc.pages, chunk_pages)) if doc.pages else 0
        lanes = max(1, min(workers, chunks))
        per_document[doc.name] = {
            "pages": doc.pages,
            "chunks": chunks,
            "status": sorted({j.record.status for j in jobs if j.record is not None}),
            "latency_s": [round(x, 4) for x in latencies],
            "latency_p50_s": round(p50, 4),
            "latency_p95_s": round(_percentile(latencies, 0.95), 4),
            "pages_per_s": round(pages_per_s, 3),
            "efficiency": round(pages_per_s / (workers * base["pages_per_s"]), 4)
            if base["pages_per_s"]
            else 0.0,
            # A document of fewer chunks than workers cannot use them all.
            "efficiency_bound": round(lanes / workers, 4),
            # Seconds above the plain converter's time spread over the lanes it could use.
            "overhead_s": round(p50 - base["median_s"] / lanes, 4),
            "stages": _median_stages(jobs),
            # Median over rounds: CPU seconds by role while the document ran alone; "rest of
            # the machine" in cores says how much other work competed with it.
            "cpu": _median_cpu(jobs),
            "record_timings": jobs[len(jobs) // 2].record.timings.model_dump()  # type: ignore[union-attr]
            if jobs
            else {},
        }
    makespans = [m for m, _ in run.batches]
    makespan = statistics.median(makespans)
    pages = sum(d.pages for d in docs)
    batch_jobs = [j for _, batch in run.batches for j in batch]
    batch_latencies = [j.latency_s for j in batch_jobs]
    pages_per_s = pages / makespan if makespan > 0 else 0.0
    overall = {
        "what": "every document uploaded at once; pages over the time from the first upload to "
        "the last job record; median of the rounds",
        "pages": pages,
        "documents": len(docs),
        "makespan_s": [round(m, 4) for m in makespans],
        "makespan_median_s": round(makespan, 4),
        "pages_per_s": round(pages_per_s, 3),
        "baseline_pages_per_s": baseline["pages_per_s"],
        "efficiency": round(pages_per_s / (workers * baseline["pages_per_s"]), 4)
        if baseline["pages_per_s"]
        else 0.0,
        "latency_p50_s": round(_percentile(batch_latencies, 0.5), 4),
        "latency_p95_s": round(_percentile(batch_latencies, 0.95), 4),
        "failed_jobs": sum(1 for j in batch_jobs if j.record and j.record.status != "done"),
        # Stage seconds summed over every job of a round (median round): where the set's
        # seconds went.
        "stages_total": {
            s: round(statistics.median(sum(j.stages[s] for j in b) for _, b in run.batches), 4)
            for s in STAGES
        },
    }
    cpu = {kind: w.by_role() | {"wall_s": round(w.wall_s, 3)} for kind, w in run.windows.items()}
    harness_cpu = {kind: w.harness_split() for kind, w in run.windows.items()}
    return {
        "workers": workers,
        "per_document": per_document,
        "overall": overall,
        "cpu": cpu,
        "harness_cpu_s": harness_cpu,
        "resources": run.resources,
    }


# --- where the pipeline runs ----------------------------------------------------------------


def deployed_settings(config: BenchConfig) -> Settings:
    """Settings for a stack that already runs: an endpoint (``pagefleet up``) or Terraform."""
    overrides: dict[str, Any] = {}
    if config.endpoint_url:
        overrides["endpoint_url"] = config.endpoint_url
    if config.stack_outputs:
        outputs = json.loads(config.stack_outputs.read_text())
        overrides["bucket"] = outputs["bucket_name"]["value"]
    if config.bucket:
        overrides["bucket"] = config.bucket
    return load_settings(**overrides)


def host_info() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def run_bench(config: BenchConfig, command: str) -> dict[str, Any]:
    docs = collect_documents(config)
    if not docs:
        raise ValueError("nothing to measure: give PDFs, a folder or --synthetic PAGES")
    started = time.time()
    host_before = host_info()
    baseline = measure_baseline(docs, config)
    splitter = measure_splitter(docs, config)
    deployed = bool(config.endpoint_url or config.stack_outputs)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    pipelines = []
    if deployed:
        settings = deployed_settings(config)
        bucket = Bucket(client("s3", settings), settings.bucket)
        for workers in config.workers:
            run = run_pipeline(bucket, docs, workers, config, None, f"bench/{stamp}-w{workers}")
            pipelines.append(summarize_pipeline(run, docs, baseline, config.chunk_pages))
    else:
        server = MotoServer()  # one server for every W; each W gets its own bucket and queues
        server.start()
        try:
            for workers in config.workers:
                pipelines.append(_run_embedded(server, docs, workers, config, baseline, stamp))
        finally:
            server.stop()
    report = {
        "command": command,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "duration_s": round(time.time() - started, 1),
        "host": {"before": host_before, "after": host_info()},
        "mode": "deployed" if deployed else "embedded",
        "settings": {
            "converter": config.converter,
            "chunk_pages": config.chunk_pages,
            "repeat": config.repeat,
            "workers": config.workers,
            "warm_workers": "timed after every worker loaded its converter and one untimed "
            "warm-up job ran",
        },
        "documents": [
            {"name": d.name, "path": str(d.path), "pages": d.pages, "bytes": d.bytes} for d in docs
        ],
        "baseline": baseline,
        "splitter": splitter,
        "pipeline": pipelines,
    }
    report["targets"] = targets(report)
    return report


def _run_embedded(
    server: MotoServer,
    docs: list[Document],
    workers: int,
    config: BenchConfig,
    baseline: dict[str, Any],
    stamp: str,
) -> dict[str, Any]:
    name = f"bench-w{workers}-{stamp}".lower()
    settings = load_settings(
        endpoint_url=server.url,
        bucket=name,
        queue_prefix=name,
        chunk_pages=config.chunk_pages,
        converter=config.converter,
        workers=workers,
    )
    pipeline = LocalPipeline(settings, workers=workers, server=server)
    pipeline.start()
    try:
        pipeline.wait_ready(workers)
        assert pipeline.stack is not None
        runner = pipeline.runner
        sampler = ResourceSampler(
            roots=lambda: [runner.pid] if runner is not None else [],
            interval_s=config.sample_interval_s,
        )
        sampler.start()
        try:
            bucket = Bucket(pipeline.stack.s3, pipeline.settings.bucket)
            run = run_pipeline(bucket, docs, workers, config, sampler, "bench")
        finally:
            sampler.stop()
        run.resources = sampler.summary()
    finally:
        pipeline.stop()
    return summarize_pipeline(run, docs, baseline, config.chunk_pages)


# --- targets ---------------------------------------------------------------------------------


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, reported (never enforced): value, target, met."""
    rows: list[dict[str, Any]] = []
    docs = report["documents"]
    largest = max(docs, key=lambda d: d["pages"])["name"]
    one_page = [d["name"] for d in docs if d["pages"] == 1]
    for run in report["pipeline"]:
        w = run["workers"]
        if w == 2:
            e = run["per_document"][largest]["efficiency"]
            rows.append(_row(f"E at W=2 on {largest}", ">= 0.95", e, e >= 0.95))
        if one_page:
            overhead = statistics.median(run["per_document"][n]["overhead_s"] for n in one_page)
            rows.append(
                _row(
                    f"overhead of a 1-page PDF at W={w} (median of {len(one_page)})",
                    "<= 0.3 s",
                    overhead,
                    overhead <= 0.3,
                )
            )
    for split in report["splitter"]:
        rows.append(
            _row(
                f"splitter time, {split['name']}", "<= 1 s", split["seconds"], split["seconds"] <= 1
            )
        )
        rows.append(
            _row(
                f"splitter peak RSS (MB), {split['name']}",
                f"<= {split['rss_budget_mb']} (3 x file + 150)",
                split["peak_rss_mb"],
                split["rss_target_met"],
            )
        )
    return rows


def _row(name: str, target: str, value: float, met: bool) -> dict[str, Any]:
    return {"name": name, "target": target, "value": round(value, 4), "met": bool(met)}
