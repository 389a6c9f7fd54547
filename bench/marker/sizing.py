"""From the bench's CPU seconds per page to the smallest instance of each GPU family whose CPUs
keep its GPU fed.

The GPU's own pages per second cannot be measured here (no GPU, no weights), so it is a
published figure scaled to each GPU by memory bandwidth (the VLM's decoding is bound by it),
from two sources, and the larger is sized for, since a faster GPU needs more CPU:

- marker-pdf 2.0.0's README, "Throughput" (https://github.com/datalab-to/marker#throughput):
  balanced mode sustains 2.9 pages/s on one B200 using about 30% of it, so about 9.7 saturated;
  the fleet simulator's GPU profiles (bench/fleet/config.py) scale it the same way.
- surya-ocr 0.22.1's README, "Throughput" (https://github.com/datalab-to/surya#throughput):
  full-page OCR at 5.35 pages/s on one RTX 5090 (1,792 GB/s, NVIDIA's specification) behind
  vLLM 0.20.1 at concurrency 128.

A text page in balanced mode costs the VLM only its layout: TEXT_OVER_OCR (3.7, Datalab's
inference-mirror, as the simulator uses) times the OCR rate. In fast mode a text page makes no
VLM call at all, so no GPU rate bounds it and the workers' CPU sets the pace at every size.

The cores: the bench measures one core of this machine per conversion process; an EC2 vCPU is a
hardware thread, two to a core, and the sizing counts a core (two vCPUs) as one measured core,
not crediting the second thread. marker's own rule keeps two cores for the model servers.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from bench.fleet.config import GPUS, TEXT_OVER_OCR, THREADS_PER_CORE
from bench.marker.models import MarkerBench
from runner.worker_plan import MARKER_SERVER_CORES, WORKER_OVERHEAD_MB, RunnerSettings

SURYA_5090_OCR_PAGES_PER_S = 5.35
RTX_5090_BANDWIDTH_GBS = 1792.0
# One-GPU sizes of each family: (name suffix, vCPUs, memory GiB), from the EC2 accelerated
# computing instance specifications (gpu_instance_types.json lists the GPU counts).
SIZES = {
    "g6": [("xlarge", 4, 16), ("2xlarge", 8, 32), ("4xlarge", 16, 64), ("8xlarge", 32, 128)],
    "g5": [("xlarge", 4, 16), ("2xlarge", 8, 32), ("4xlarge", 16, 64), ("8xlarge", 32, 128)],
    "g6e": [("xlarge", 4, 32), ("2xlarge", 8, 64), ("4xlarge", 16, 128), ("8xlarge", 32, 256)],
}


class FamilyFit(BaseModel):
    family: str
    gpu: str
    ocr_pages_per_s_marker: float  # marker's B200 figure scaled by bandwidth
    ocr_pages_per_s_surya: float  # surya's RTX 5090 figure scaled by bandwidth
    ocr_pages_per_s: float  # the larger, sized for
    worker_cores: float  # cores the workers need to keep up, balanced mode's worst page kind
    instance: str
    vcpus: int
    workers: int
    memory_gib_needed: float


def cpu_s_per_page(results: MarkerBench, mode: str, kind: str) -> float:
    """The larger of the W = 1 and side-by-side medians: contention counts against the runner."""
    return max(c.cpu_s_per_page(kind) for c in results.cases if c.mode == mode)


def worst(results: MarkerBench, mode: str, scans: bool) -> float:
    """CPU s/page of the costliest chunk of scans (every page OCRed) or of text-layer pages (the
    others), generated or real."""
    kinds = {
        chunk.kind
        for case in results.cases
        for process in case.processes
        for chunk in process.chunks
        if (chunk.ocr_pages == chunk.pages) == scans
    }
    return max(cpu_s_per_page(results, mode, kind) for kind in kinds)


def peak_rss_mb(results: MarkerBench) -> float:
    return max(p.peak_rss_mb for c in results.cases for p in c.processes)


def fits(results: MarkerBench) -> list[FamilyFit]:
    text = worst(results, "balanced", scans=False)
    scan = worst(results, "balanced", scans=True)
    memory = RunnerSettings.model_fields
    server_mb = memory["server_memory_mb"].default
    worker_mb = memory["marker_worker_memory_mb"].default + WORKER_OVERHEAD_MB
    rows = []
    for family, sizes in SIZES.items():
        profile = GPUS[f"{family}.xlarge"]
        by_marker = profile.ocr_pages_per_s
        by_surya = SURYA_5090_OCR_PAGES_PER_S * profile.bandwidth_gbs / RTX_5090_BANDWIDTH_GBS
        ocr = max(by_marker, by_surya)
        cores = max(ocr * TEXT_OVER_OCR * text, ocr * scan)
        size, vcpus, gib = next(
            (size for size in sizes if size[1] // THREADS_PER_CORE - MARKER_SERVER_CORES >= cores),
            sizes[-1],
        )
        workers = vcpus // THREADS_PER_CORE - MARKER_SERVER_CORES
        needed_gib = (server_mb + max(1, math.ceil(cores)) * worker_mb) / 1024
        rows.append(
            FamilyFit(
                family=family,
                gpu=profile.gpu,
                ocr_pages_per_s_marker=by_marker,
                ocr_pages_per_s_surya=by_surya,
                ocr_pages_per_s=ocr,
                worker_cores=cores,
                instance=f"{family}.{size}",
                vcpus=vcpus,
                workers=max(1, workers),
                memory_gib_needed=needed_gib,
            )
        )
        assert needed_gib < gib, f"{family}.{size}: {needed_gib:.1f} GiB needed of {gib}"
    return rows
