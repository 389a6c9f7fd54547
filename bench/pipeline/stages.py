"""Where a job's seconds go: its latency cut into consecutive stages that add up to it."""

from __future__ import annotations

from bench.pipeline.jobs import Job
from bench.pipeline.models import StageSeconds
from pagefleet import keys
from pagefleet.models import ChunkResult, JobManifest
from pagefleet.storage import Bucket, NotFound

# Stages that are orchestration, not conversion: the "overhead" of the report.
OVERHEAD_STAGES = ("ingest_s", "queue_wait_s", "chunk_overhead_s", "completion_wait_s")


def job_stages(
    job: Job, manifest: JobManifest | None, results: list[ChunkResult], workers: int
) -> StageSeconds:
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
        return StageSeconds(ingest_s=latency - split, split_s=split)
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
    return StageSeconds(**{name: round(value, 4) for name, value in stages.items()})


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


def stage_label(stage: str) -> str:
    """``queue_wait_s`` -> "queue wait (overhead)", as the report and charts name it."""
    label = stage.removesuffix("_s").replace("_", " ")
    return f"{label} (overhead)" if stage in OVERHEAD_STAGES else label
