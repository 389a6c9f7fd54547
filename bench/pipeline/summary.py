"""One W's jobs summed up: latency, pages/s and efficiency per document and overall, and CPU."""

from __future__ import annotations

import math
import statistics
from typing import Any

from bench.pipeline.jobs import Job
from bench.pipeline.models import (
    STAGES,
    Baseline,
    Document,
    DocumentRun,
    Overall,
    PairedRound,
    PassCpu,
    PipelineSummary,
    PlanCheck,
    RoleCpu,
    StageSeconds,
)
from bench.pipeline.pipeline_run import PipelineRun
from bench.pipeline.standalone import XargsRound
from bench.pipeline.targets import efficiency_document
from pagefleet.models import JobRecord
from pagefleet.planning import PlanPolicy, plan_by_cost


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _stages(job: Job) -> StageSeconds:
    assert job.stages is not None, f"{job.rel}: stages not loaded"
    return job.stages


def _median_stages(jobs: list[Job]) -> StageSeconds:
    return StageSeconds(
        **{s: round(statistics.median(_stages(j).of(s) for j in jobs), 4) for s in STAGES}
    )


def _median_cpu(jobs: list[Job]) -> dict[str, RoleCpu]:
    idle = RoleCpu(cpu_s=0.0, cores=0.0)  # a role absent from a job's window used nothing
    roles = sorted({role for j in jobs for role in j.cpu})
    return {
        role: RoleCpu(
            cpu_s=round(statistics.median(j.cpu.get(role, idle).cpu_s for j in jobs), 3),
            cores=round(statistics.median(j.cpu.get(role, idle).cores for j in jobs), 3),
        )
        for role in roles
    }


def _efficiency(pages_per_s: float, workers: int, baseline_pages_per_s: float) -> float:
    """Pipeline pages/s over the ideal W x baseline pages/s."""
    if not baseline_pages_per_s:
        return 0.0
    return round(pages_per_s / (workers * baseline_pages_per_s), 4)


def _document_run(
    doc: Document, jobs: list[Job], workers: int, baseline: Baseline, chunk_pages: int
) -> DocumentRun:
    base = baseline.per_document[doc.name]
    latencies = [j.latency_s for j in jobs]
    p50 = statistics.median(latencies)
    pages_per_s = doc.pages / p50 if p50 > 0 else 0.0
    records = [j.record for j in jobs if j.record is not None]
    median = records[len(records) // 2]
    # The plan the splitter made (cost-based plans differ with the document, not only pages);
    # without one, the splitter's planner on pages of equal cost.
    chunks = len(median.chunks) or (
        len(plan_by_cost([1.0] * doc.pages, PlanPolicy(float(chunk_pages), 0.0, math.inf)))
        if doc.pages
        else 0
    )
    lanes = max(1, min(workers, chunks))
    return DocumentRun(
        pages=doc.pages,
        chunks=chunks,
        status=sorted({r.status for r in records}),
        latency_s=[round(x, 4) for x in latencies],
        latency_p50_s=round(p50, 4),
        latency_p95_s=round(percentile(latencies, 0.95), 4),
        pages_per_s=round(pages_per_s, 3),
        efficiency=_efficiency(pages_per_s, workers, base.pages_per_s),
        # A document of fewer chunks than workers cannot use them all.
        efficiency_bound=round(lanes / workers, 4),
        # Seconds above the plain converter's time spread over the lanes it could use.
        overhead_s=round(p50 - base.median_s / lanes, 4),
        stages=_median_stages(jobs),
        # Median over rounds: CPU seconds by role while the document ran alone; "rest of the
        # machine" in cores says how much other work competed with it.
        cpu=_median_cpu(jobs),
        record_timings=median.timings,
        plan=_plan_check(median),
    )


def _plan_check(record: JobRecord) -> PlanCheck | None:
    # getattr: the bench also measures a checkout from before cost-based plans (no plan).
    plan = getattr(record, "plan", None)
    if plan is None:
        return None
    return PlanCheck(
        estimated_s=plan.estimated_s,
        converted_s=round(sum(c.seconds for c in record.chunks), 4),
        chunk_estimates_s=[getattr(c, "estimated_s", None) or 0.0 for c in record.chunks],
        chunk_seconds=[c.seconds for c in record.chunks],
        ocr_pages=len(plan.ocr_pages),
    )


def _overall(run: PipelineRun, docs: list[Document], baseline: Baseline) -> Overall:
    makespans = [m for m, _ in run.batches]
    makespan = statistics.median(makespans)
    pages = sum(d.pages for d in docs)
    batch_jobs = [j for _, batch in run.batches for j in batch]
    batch_latencies = [j.latency_s for j in batch_jobs]
    pages_per_s = pages / makespan if makespan > 0 else 0.0
    return Overall(
        what="every document uploaded at once; pages over the time from the first upload to "
        "the last job record; median of the rounds",
        pages=pages,
        documents=len(docs),
        makespan_s=[round(m, 4) for m in makespans],
        makespan_median_s=round(makespan, 4),
        pages_per_s=round(pages_per_s, 3),
        baseline_pages_per_s=baseline.pages_per_s,
        efficiency=_efficiency(pages_per_s, run.workers, baseline.pages_per_s),
        latency_p50_s=round(percentile(batch_latencies, 0.5), 4),
        latency_p95_s=round(percentile(batch_latencies, 0.95), 4),
        failed_jobs=sum(1 for j in batch_jobs if j.record and j.record.status != "done"),
        # Stage seconds summed over every job of a round (median round): where the set's
        # seconds went.
        stages_total=StageSeconds(
            **{
                s: round(
                    statistics.median(sum(_stages(j).of(s) for j in b) for _, b in run.batches),
                    4,
                )
                for s in STAGES
            }
        ),
    )


def _paired_rounds(
    run: PipelineRun,
    docs: list[Document],
    baselines: list[dict[str, Any]],
    xargs: list[XargsRound] | None,
) -> list[PairedRound]:
    """Each round's E on the E document and speedup over ``xargs``, against the baselines
    measured just before that round (``baselines``: bench.pipeline.baseline's rounds)."""
    name = efficiency_document(docs)
    doc = next(d for d in docs if d.name == name)
    jobs = [j for j in run.single if j.doc == doc]  # one a round, in order
    rows = []
    for index, (job, base, (makespan, _)) in enumerate(
        zip(jobs, baselines, run.batches, strict=True)
    ):
        seconds = base["seconds"][str(doc.path)]
        plain = xargs[index].makespan_s if xargs else None
        rows.append(
            PairedRound(
                document=name,
                baseline_s=round(seconds, 4),
                latency_s=round(job.latency_s, 4),
                efficiency=round(seconds / (run.workers * job.latency_s), 4),
                xargs_makespan_s=round(plain, 3) if plain else None,
                makespan_s=round(makespan, 4),
                speedup=round(plain / makespan, 4) if plain else None,
            )
        )
    return rows


def summarize_pipeline(
    run: PipelineRun,
    docs: list[Document],
    baseline: Baseline,
    chunk_pages: int,
    baselines: list[dict[str, Any]] | None = None,
    xargs: list[XargsRound] | None = None,
) -> PipelineSummary:
    """``baselines`` and ``xargs``: the rounds of each measured just before this W's rounds,
    paired with them in the summary's ``rounds``."""
    per_document = {
        doc.name: _document_run(
            doc, [j for j in run.single if j.doc == doc], run.workers, baseline, chunk_pages
        )
        for doc in docs
    }
    return PipelineSummary(
        workers=run.workers,
        per_document=per_document,
        overall=_overall(run, docs, baseline),
        cpu={
            kind: PassCpu(wall_s=round(w.wall_s, 3), roles=w.by_role())
            for kind, w in run.windows.items()
        },
        harness_cpu_s={kind: w.harness_split() for kind, w in run.windows.items()},
        resources=run.resources,
        rounds=_paired_rounds(run, docs, baselines, xargs) if baselines else None,
    )
