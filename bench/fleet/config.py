"""What the fleet simulator assumes: GPUs, prices, cold starts, the pipeline's own timings.

Every default says where it comes from. Numbers that are estimates rather than measurements
say so; each is a parameter (``FleetConfig`` field, or ``scripts/fleet-sim --set name=value``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pagefleet import stack
from pagefleet.scaling import ScalingPolicy, default_policy
from pagefleet.settings import Settings

# marker-pdf 2.0.0, balanced mode: 2.9 pages/s on one B200 with a single stream using about
# 30% of the GPU (marker's published benchmark), so about 9.7 pages/s saturated. Its benchmark
# pages (olmOCR-bench) are OCR pages. The VLM's decoding is bound by memory bandwidth, so
# other GPUs are scaled by HBM/GDDR bandwidth from NVIDIA's datasheets: B200 8 TB/s, L40S
# 864 GB/s, A10G 600 GB/s, L4 300 GB/s. An estimate, not a measurement: no GPU here.
B200_OCR_PAGES_PER_S = 2.9 / 0.3
B200_BANDWIDTH_GBS = 8000.0
# Text pages (a usable text layer) against forced OCR: 28.5 vs 7.7 pages/s on one H100 in
# Datalab's inference-mirror (datalab-to/oss_container's README: 840 pages in 29.4 s).
TEXT_OVER_OCR = 28.5 / 7.7


class GpuProfile(BaseModel):
    """One instance type with one GPU: saturated conversion rates and list prices."""

    model_config = ConfigDict(frozen=True)

    instance_type: str
    gpu: str
    bandwidth_gbs: float
    on_demand_per_h: float = Field(description="us-east-1 Linux on-demand list price, $/h.")
    spot_per_h: float = Field(description="Spot price, $/h (varies by zone and hour).")
    single_stream_share: float = Field(
        0.3, gt=0, le=1, description="Share of the GPU one conversion stream can use alone."
    )

    @property
    def ocr_pages_per_s(self) -> float:
        """OCR pages per second with the GPU saturated."""
        return B200_OCR_PAGES_PER_S * self.bandwidth_gbs / B200_BANDWIDTH_GBS

    @property
    def text_pages_per_s(self) -> float:
        return self.ocr_pages_per_s * TEXT_OVER_OCR


# On-demand: AWS list prices (us-east-1, Linux). Spot: assumed 40% of on-demand (a typical
# discount for these families; pass --set spot_per_h=... for a quoted price).
GPUS: dict[str, GpuProfile] = {
    "g6.xlarge": GpuProfile(
        instance_type="g6.xlarge",
        gpu="L4",
        bandwidth_gbs=300,
        on_demand_per_h=0.8048,
        spot_per_h=0.32,
    ),
    "g5.xlarge": GpuProfile(
        instance_type="g5.xlarge",
        gpu="A10G",
        bandwidth_gbs=600,
        on_demand_per_h=1.006,
        spot_per_h=0.40,
    ),
    "g6e.xlarge": GpuProfile(
        instance_type="g6e.xlarge",
        gpu="L40S",
        bandwidth_gbs=864,
        on_demand_per_h=1.861,
        spot_per_h=0.74,
    ),
}


class FleetConfig(BaseModel):
    """Everything one simulation run assumes, besides the workload."""

    model_config = ConfigDict(frozen=True)

    policy: ScalingPolicy = Field(default_factory=default_policy)
    gpu: GpuProfile = GPUS["g6.xlarge"]  # terraform's gpu_instance_types, first choice
    spot: bool = True  # terraform: on_demand_percentage_above_base_capacity = 0
    workers_per_task: int = 3  # terraform's workers_per_gpu
    chunk_pages: int = Settings.model_fields["chunk_pages"].default

    # Per-page conversion time: None derives it from ``gpu`` (seconds of the whole GPU).
    text_page_s: float | None = None
    ocr_page_s: float | None = None
    chunk_overhead_s: float = Field(
        0.5, description="Per chunk outside conversion: receive, chunk PDF, result upload."
    )

    # Queues (pagefleet/stack.py, pagefleet/settings.py).
    visibility_timeout_s: float = Settings.model_fields["visibility_timeout_s"].default
    heartbeat_s: float = Settings.model_fields["heartbeat_s"].default
    max_receive_count: int = stack.QueueSpec(
        role="chunks", visibility_timeout_s=1
    ).max_receive_count
    max_attempts: int = Settings.model_fields["max_attempts"].default
    drain_timeout_s: float = Settings.model_fields["drain_timeout_s"].default

    # S3 notification and the two Lambdas.
    notification_delay_s: float = 1.0
    splitter_concurrency: int = 10  # terraform's lambda_reserved_concurrency for the splitter
    split_base_s: float = 0.3
    split_per_page_s: float = 0.0005  # 0.2 s for 400 pages in the embedded stack (bench)
    completion_concurrency: int = 5
    completion_check_s: float = 0.05
    assemble_base_s: float = 0.1
    assemble_per_page_s: float = 0.0013  # 0.53 s for 400 pages (bench)

    # ECS on EC2 with a capacity provider. Estimates: GPU AMI boot and agent registration,
    # pulling the multi-GB runner image, the vLLM sidecar loading surya-ocr-2 (its own
    # timeout is 600 s).
    capacity_provider_lag_s: float = 60.0
    instance_boot_s: float = 120.0
    image_pull_s: float = 180.0
    container_start_s: float = 10.0
    model_start_s: float = 180.0
    instance_idle_s: float = 900.0  # managed scaling's scale-in: 15 minutes below target
    protection_idle_s: float = 30.0  # runner/worker_plan.py RunnerSettings.protection_idle_s

    # CloudWatch: one-minute periods, published about a minute late.
    metric_delay_s: float = 60.0

    # A static, warm fleet (the embedded stack): this many tasks from the start, no scaling.
    fixed_tasks: int = Field(0, ge=0)
    # The task's share of the GPU one conversion can use alone; None: the GPU profile's.
    stream_share: float | None = Field(None, gt=0, le=1)

    # Failures.
    spot_interruptions_per_h: float = Field(
        0.005, ge=0, description="Per Spot instance-hour; 2 minutes' notice, then drained."
    )
    task_crashes_per_h: float = Field(
        0.0, ge=0, description="Per task-hour; no notice: held chunks return after visibility."
    )
    poison_chunk_share: float = Field(0.0, ge=0, le=1, description="Chunks that always fail.")

    @property
    def price_per_h(self) -> float:
        return self.gpu.spot_per_h if self.spot else self.gpu.on_demand_per_h

    @property
    def page_s(self) -> tuple[float, float]:
        """(text, OCR) seconds of the whole GPU per page."""
        text = self.text_page_s if self.text_page_s is not None else 1 / self.gpu.text_pages_per_s
        ocr = self.ocr_page_s if self.ocr_page_s is not None else 1 / self.gpu.ocr_pages_per_s
        return text, ocr

    @property
    def share(self) -> float:
        return self.stream_share if self.stream_share is not None else self.gpu.single_stream_share

    def chunk_work_s(self, pages: int, scanned_share: float, page_s: float | None = None) -> float:
        """Seconds of the whole GPU to convert ``pages`` pages; ``page_s`` is a measured time
        per page for one conversion alone (which uses ``share`` of the GPU)."""
        if page_s is not None:
            return pages * page_s * self.share
        text, ocr = self.page_s
        return pages * ((1 - scanned_share) * text + scanned_share * ocr)
