"""What the fleet simulator assumes: GPUs, prices, cold starts, the pipeline's own timings.

Every default says where it comes from. Numbers that are estimates rather than measurements
say so; each is a parameter (``FleetConfig`` field, or ``scripts/fleet-sim --set name=value``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bench.fleet.prices import Prices
from bench.paths import ROOT
from pagefleet import stack
from pagefleet.scaling import ScalingPolicy, default_policy
from pagefleet.settings import Settings
from runner.worker_plan import MARKER_SERVER_CORES, OCR_OVERSUBSCRIBE

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
    vcpus: int = Field(description="vCPUs of the instance type (EC2 instance specifications).")
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
# discount for these families; pass --set spot_per_h=... for a quoted price). vCPUs: the EC2
# accelerated computing instance specifications, two hardware threads a core on every size.
# Terraform's defaults are the .2xlarge sizes (8 vCPUs), the smallest whose cores keep their GPU
# fed (mps/README.md); the .xlarge (4 vCPUs) stay for comparison.
THREADS_PER_CORE = 2
GPUS: dict[str, GpuProfile] = {
    "g6.xlarge": GpuProfile(
        instance_type="g6.xlarge",
        vcpus=4,
        gpu="L4",
        bandwidth_gbs=300,
        on_demand_per_h=0.8048,
        spot_per_h=0.32,
    ),
    "g5.xlarge": GpuProfile(
        instance_type="g5.xlarge",
        vcpus=4,
        gpu="A10G",
        bandwidth_gbs=600,
        on_demand_per_h=1.006,
        spot_per_h=0.40,
    ),
    "g6e.xlarge": GpuProfile(
        instance_type="g6e.xlarge",
        vcpus=4,
        gpu="L40S",
        bandwidth_gbs=864,
        on_demand_per_h=1.861,
        spot_per_h=0.74,
    ),
    "g6.2xlarge": GpuProfile(
        instance_type="g6.2xlarge",
        vcpus=8,
        gpu="L4",
        bandwidth_gbs=300,
        on_demand_per_h=0.9776,
        spot_per_h=0.39,
    ),
    "g5.2xlarge": GpuProfile(
        instance_type="g5.2xlarge",
        vcpus=8,
        gpu="A10G",
        bandwidth_gbs=600,
        on_demand_per_h=1.212,
        spot_per_h=0.48,
    ),
    "g6e.2xlarge": GpuProfile(
        instance_type="g6e.2xlarge",
        vcpus=8,
        gpu="L40S",
        bandwidth_gbs=864,
        on_demand_per_h=2.24208,
        spot_per_h=0.90,
    ),
}


# The marker workers Terraform pins a GPU task to, by instance type (terraform/stack.json's
# marker_workers, sized by runner/worker_plan.py as the runner sizes itself).
TERRAFORM_WORKERS: dict[str, int] = json.loads((ROOT / "terraform" / "stack.json").read_text())[
    "marker_workers"
]


class FargateTask(BaseModel):
    """The CPU runner task (runner_kind = "cpu"): the text-layer converter on Fargate, sized by
    terraform/modules/runners/cpu_task.json, its page costs the splitter's own estimates."""

    model_config = ConfigDict(frozen=True)

    vcpus: int
    memory_gib: float
    ephemeral_storage_gib: int
    workers: int
    chunk_cpu_s: float = Field(description="CPU seconds one chunk costs one worker.")
    chars_per_page: int = Field(
        2000, description="estimate: characters of a text page (the corpus's hold 0-6,000)"
    )

    @classmethod
    def deployed(cls) -> FargateTask:
        task = json.loads(CPU_TASK_FILE.read_text())
        return cls(
            vcpus=task["cpu"] // 1024,
            memory_gib=task["memory_mib"] / 1024,
            ephemeral_storage_gib=task["ephemeral_storage_gib"],
            workers=task["workers"],
            chunk_cpu_s=task["chunk_cpu_s"],
        )

    def page_s(self, settings: Settings) -> tuple[float, float]:
        """(text, OCR) CPU seconds of a page on one core: pagefleet/settings.py's fits on the
        shared corpus, as the splitter prices them."""
        text = settings.cost_text_page_s + settings.cost_text_char_s * self.chars_per_page
        return text, settings.cost_ocr_page_s

    def per_h(self, prices: Prices) -> float:
        """$ per task-hour: vCPUs, memory and the storage past what Fargate includes."""
        storage = max(0, self.ephemeral_storage_gib - prices.fargate_included_storage_gb)
        return (
            self.vcpus * prices.fargate_per_vcpu_h
            + self.memory_gib * prices.fargate_per_gb_h
            + storage * prices.fargate_storage_per_gb_h
        )


CPU_TASK_FILE = ROOT / "terraform" / "modules" / "runners" / "cpu_task.json"
# pagefleet/settings.py's defaults, the environment left out: what a page really costs.
_DEFAULTS = Settings.model_construct()


class FleetConfig(BaseModel):
    """Everything one simulation run assumes, besides the workload."""

    model_config = ConfigDict(frozen=True)

    policy: ScalingPolicy = Field(default_factory=default_policy)
    gpu: GpuProfile = GPUS["g6.2xlarge"]  # terraform's gpu_instance_types, first choice
    spot: bool = True  # terraform: on_demand_percentage_above_base_capacity = 0
    workers_per_task: int = Field(
        0, ge=0, description="Workers a task runs; 0: as Terraform pins them for ``gpu``."
    )
    chunk_pages: int = Settings.model_fields["chunk_pages"].default
    # The lanes the splitter spreads a small document over; None: the policy's, as Terraform
    # sets them (spread_tasks x workers_per_task). Before issue 25: max_runners x workers.
    splitter_lanes: int | None = Field(None, ge=1)
    # Other splitter settings (pagefleet/settings.py names), e.g. for replaying a bench run.
    splitter_overrides: dict[str, Any] = Field(default_factory=dict)

    # Per-page conversion time: None derives it from ``gpu`` (seconds of the whole GPU).
    text_page_s: float | None = None
    ocr_page_s: float | None = None
    chunk_overhead_s: float = Field(
        0.5, description="Per chunk outside conversion: receive, chunk PDF, result upload."
    )
    # marker 2.x's workers are CPU clients of the GPU's model servers (runner/worker_plan.py):
    # per page they open the PDF, extract the text layer, render page images and post-process.
    # Measured by the marker CPU bench (bench/results/2026-12-05-marker-cpu): 0.16-0.20 CPU s a
    # text-layer page in balanced mode (the 0.2 here: the real 16-page chunk), 0.55-0.75 a scan,
    # whose GPU time (seconds a page) dwarfs it.
    worker_cpu_s_per_page: float = Field(
        0.2, ge=0, description="CPU seconds of a worker's own work per page, on one core."
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

    # What the rest of the deployment costs (bench/fleet/prices.py).
    prices: Prices = Field(default_factory=Prices)

    # The CPU runners on Fargate (cpu_fleet()); None: GPU instances.
    fargate: FargateTask | None = None

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
    capacity_refusal_share: float = Field(
        0.0, ge=0, le=1, description="Instance launches refused (no capacity, a quota)."
    )
    capacity_retry_s: float = Field(
        120.0,
        gt=0,
        description="Seconds before the Auto Scaling group tries a refused launch again.",
    )
    registration_failure_share: float = Field(
        0.0, ge=0, le=1, description="Instances that boot (billed) and never join the cluster."
    )
    sidecar_failure_share: float = Field(
        0.0, ge=0, le=1, description="Task starts whose vLLM sidecar never turns healthy."
    )
    sidecar_timeout_s: float = Field(
        600.0, gt=0, description="Seconds a task waits on its sidecar before ECS stops it."
    )
    metric_gaps_at_zero: bool = Field(
        False, description="A service with no task publishes no Container Insights task counts."
    )

    @model_validator(mode="before")
    @classmethod
    def _terraform_workers(cls, data: Any) -> Any:
        """workers_per_gpu left null: the marker workers Terraform pins a task on ``gpu`` to."""
        if isinstance(data, dict) and not data.get("workers_per_task"):
            gpu = data.get("gpu", cls.model_fields["gpu"].default)
            name = gpu.instance_type if isinstance(gpu, GpuProfile) else gpu["instance_type"]
            data = {**data, "workers_per_task": TERRAFORM_WORKERS[name]}
        return data

    def splitter_settings(self) -> Settings:
        """The splitter's settings as Terraform sets them for this fleet's policy."""
        env = self.policy.splitter_environment(self.workers_per_task, self.chunk_pages)
        if self.fargate is not None:
            # terraform/main.tf handler_env for runner_kind = "cpu": the text-layer
            # converter's page costs, a chunk at least seconds_per_chunk x W CPU seconds.
            env = {
                "PAGEFLEET_CONVERTER": "text-layer",
                "PAGEFLEET_CHUNK_PAGES": str(self.chunk_pages),
                "PAGEFLEET_CHUNK_MIN_COST_S": repr(
                    self.policy.seconds_per_chunk * self.workers_per_task
                ),
                "PAGEFLEET_FLEET_LANES": env["PAGEFLEET_FLEET_LANES"],
            }
        settings: dict[str, Any] = {k.removeprefix("PAGEFLEET_").lower(): v for k, v in env.items()}
        if self.splitter_lanes is not None:
            settings["fleet_lanes"] = self.splitter_lanes
        return Settings.model_validate(settings | self.splitter_overrides)

    @property
    def cold_start_s(self) -> float:
        """From a task the service wants to its converter ready, on a new instance."""
        return (
            self.capacity_provider_lag_s
            + self.instance_boot_s
            + self.image_pull_s
            + self.container_start_s
            + self.model_start_s
        )

    @property
    def price_per_h(self) -> float:
        if self.fargate is not None:
            return self.fargate.per_h(self.prices)
        return self.gpu.spot_per_h if self.spot else self.gpu.on_demand_per_h

    def splitter_page_s(self, settings: Settings) -> tuple[float, float]:
        """(text, OCR) seconds the splitter prices a page at: the deployed converter's."""
        if self.fargate is not None:
            return self.fargate.page_s(settings)
        return settings.cost_marker_page_s, settings.cost_marker_ocr_page_s

    @property
    def page_s(self) -> tuple[float, float]:
        """(text, OCR) seconds of the whole GPU per page."""
        text = self.text_page_s if self.text_page_s is not None else 1 / self.gpu.text_pages_per_s
        ocr = self.ocr_page_s if self.ocr_page_s is not None else 1 / self.gpu.ocr_pages_per_s
        return text, ocr

    @property
    def worker_cores(self) -> int:
        """The cores the workers share: the instance's physical cores (two vCPUs each, the second
        thread not counted) less those runner/worker_plan.py leaves to the model servers; a CPU
        task's every vCPU, one per worker."""
        if self.fargate is not None:
            return self.fargate.vcpus
        return max(1, self.gpu.vcpus // THREADS_PER_CORE - MARKER_SERVER_CORES)

    def page_rates(self) -> dict[str, float]:
        """Pages per second of one task with every worker busy: the GPU's (text, OCR) and the
        workers' CPU's, each worker on at most one core."""
        text, ocr = self.page_s
        cores = min(self.workers_per_task, self.worker_cores)
        cpu = cores / self.worker_cpu_s_per_page if self.worker_cpu_s_per_page else math.inf
        return {"gpu_text": 1 / text, "gpu_ocr": 1 / ocr, "cpu": cpu}

    @property
    def share(self) -> float:
        """The GPU share one conversion can use alone: marker's published single stream's, or
        more where the runner lets each worker keep more of the OCR server's capacity in flight
        (runner/worker_plan.py: W workers keep OCR_OVERSUBSCRIBE x its capacity in flight
        together, so each alone fills OCR_OVERSUBSCRIBE / W of it)."""
        if self.stream_share is not None:
            return self.stream_share
        return min(
            1.0, max(self.gpu.single_stream_share, OCR_OVERSUBSCRIBE / self.workers_per_task)
        )

    def chunk_work_s(self, pages: int, scanned_share: float, page_s: float | None = None) -> float:
        """Seconds of the whole GPU to convert ``pages`` pages; ``page_s`` is a measured time
        per page for one conversion alone (which uses ``share`` of the GPU)."""
        if self.fargate is not None:
            return 0.0  # no GPU: the whole conversion is chunk_cpu_s
        if page_s is not None:
            return pages * page_s * self.share
        text, ocr = self.page_s
        return pages * ((1 - scanned_share) * text + scanned_share * ocr)

    def chunk_cpu_s(
        self, pages: int, page_s: float | None = None, scanned_share: float = 0.0
    ) -> float:
        """Seconds of all the workers' cores to convert ``pages`` pages; none beside a measured
        ``page_s``, which already holds the worker's CPU time. A CPU task's conversion is all
        CPU: its text and OCR pages at the text-layer converter's costs."""
        if self.fargate is not None:
            text, ocr = self.fargate.page_s(_DEFAULTS)
            work = pages * ((1 - scanned_share) * text + scanned_share * ocr)
            return work / self.worker_cores
        if page_s is not None:
            return 0.0
        return pages * self.worker_cpu_s_per_page / self.worker_cores


def cpu_fleet(policy: ScalingPolicy | None = None, **overrides: Any) -> FleetConfig:
    """The CPU runners as runner_kind = "cpu" deploys them: Fargate tasks of cpu_task.json, on
    demand, W workers each, under ``policy`` (the deployed one by default) with a chunk of
    chunk_cpu_s / W task seconds (terraform/main.tf). Fargate starts a task on capacity of its
    own: no capacity provider, no instance kept warm or reused, the image pulled at every
    start."""
    task = FargateTask.deployed()
    policy = (policy or default_policy()).model_copy(
        update={"seconds_per_chunk": task.chunk_cpu_s / task.workers}
    )
    return FleetConfig.model_validate(
        {
            "policy": policy,
            "fargate": task,
            "spot": False,
            "workers_per_task": task.workers,
            "capacity_provider_lag_s": 0.0,
            "instance_boot_s": 40.0,
            "image_pull_s": 120.0,
            "container_start_s": 5.0,
            "model_start_s": 0.0,
            "instance_idle_s": 0.0,
            **overrides,
        }
    )


# The CPU runners' own estimates (cpu_fleet), listed in the report's CPU section.
CPU_ESTIMATES: dict[str, str] = {
    "instance_boot_s": "estimate: Fargate finds capacity and attaches the task's network "
    "interface (no instance to boot, no agent to register)",
    "image_pull_s": "estimate: the runner image (prices.runner_image_gb) pulled at every task "
    "start, Fargate caching none, through the S3 gateway endpoint or NAT",
    "container_start_s": "estimate: the supervisor and its W workers start; the text-layer "
    "converter loads in about 0.28 s (docs/DESIGN.md), no model server",
    "chars_per_page": "estimate: a text page's characters, priced at pagefleet/settings.py's "
    "cost_text_page_s + cost_text_char_s each (fitted on the shared corpus)",
}


# Every input the simulator estimates rather than reads from the deployed code, with where the
# number comes from; the report lists them beside their values.
ESTIMATES: dict[str, str] = {
    "gpu": "marker's published B200 benchmark scaled by memory bandwidth (NVIDIA datasheets); "
    "AWS us-east-1 on-demand list prices; Spot assumed 40% of on-demand; vCPUs from the EC2 "
    "instance specifications",
    "text_page_s": "None: from the GPU profile, TEXT_OVER_OCR from Datalab's inference-mirror",
    "workers_per_task": "0: the marker workers Terraform pins a task on the instance type to "
    "(terraform/stack.json's marker_workers, runner/worker_plan.py's sizing)",
    "stream_share": "None: marker's published single stream (30%), or OCR_OVERSUBSCRIBE / W where "
    "the runner's OCR requests in flight fill more (runner/worker_plan.py)",
    "chunk_overhead_s": "estimate: receive, chunk PDF download, result upload",
    "worker_cpu_s_per_page": "measured (bench/results/2026-12-05-marker-cpu): marker's client "
    "work per text-layer page in balanced mode (PDF open, pdftext, page images, post-processing) "
    "on one core, against instant stub model servers; the workers share the physical cores "
    "(vCPUs / 2) less runner/worker_plan.py's MARKER_SERVER_CORES (2)",
    "notification_delay_s": "estimate of S3 event -> SQS delivery",
    "split_per_page_s": "embedded stack bench: 0.2 s for 400 pages",
    "assemble_per_page_s": "embedded stack bench: 0.53 s for 400 pages",
    "capacity_provider_lag_s": "estimate: managed scaling's reaction to a PROVISIONING task",
    "instance_boot_s": "estimate: GPU AMI boot and ECS agent registration",
    "image_pull_s": "estimate: the multi-GB runner image through NAT",
    "model_start_s": "estimate: the vLLM sidecar loading surya-ocr-2 (its timeout is 600 s)",
    "instance_idle_s": "estimate: managed scaling's scale-in after 15 minutes below target",
    "metric_delay_s": "estimate: CloudWatch one-minute datapoints published about a minute late",
    "spot_interruptions_per_h": "estimate (the Spot Instance Advisor's lowest band is <5% a month)",
    "capacity_refusal_share": "scenario rate, seeded: not measured",
    "capacity_retry_s": "estimate of the Auto Scaling group's retry after a refused launch",
    "registration_failure_share": "scenario rate, seeded: not measured",
    "sidecar_failure_share": "scenario rate, seeded: not measured",
    "sidecar_timeout_s": "the sidecar's own 600 s start timeout (terraform/modules/runners)",
    "metric_gaps_at_zero": "scenario: the pessimistic reading of Container Insights at zero tasks",
    "seconds_per_chunk": "pagefleet/settings.py cost_marker_page_s x chunk_pages: an estimate "
    "for an L4 with 3 workers, not measured on a GPU",
}
