"""How many workers the runner starts, where, and with what environment.

:class:`RunnerSettings` holds the runner's own knobs; :func:`size_workers` decides W and the OCR
request concurrency from the host (cores, memory), the converter and the GPU; :func:`plan_workers`
turns that into one :class:`WorkerSpec` per worker process. Everything here is a pure decision
(:func:`detect_host` only reads the machine): starting and watching the processes is
``runner/supervisor.py``'s job.

Who touches the GPU (mps/README.md): with marker 2.x no worker does. The GPU is used by the model
servers: the vLLM sidecar that serves surya's OCR VLM, and the layout and OCR-error servers that
the first worker's conversion process spawns (the others attach to them). A worker is a thin
client that renders pages, runs pdftext and post-processes on the CPU, so W follows the CPU
cores and memory, and the OCR requests all workers keep in flight follow the VLM server's
capacity. The numbers behind that sizing (a worker's CPU per page, its memory) are measured by
the marker CPU bench (bench/marker/, its results under bench/results/); mps/README.md turns them
into the instance each GPU needs. With the CPU converter's OCR on onnxruntime-gpu each worker
does hold models on the GPU, and W follows free GPU memory as before.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import psutil
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from pagefleet.settings import Settings, refusal
from runner.gpu import GpuInfo, Inventory

# Stragglers are killed this long before ECS's own SIGKILL, so the kill is ours and is logged.
KILL_MARGIN_S = 2.0

# surya's VLLM_GPU_TYPE table and the 24 GB baseline of 32 sequences that sizes the OCR server's
# --max-num-seqs (surya/inference/backends/vllm.py, GPU_VRAM_GB and _gpu_settings; the runners
# module sizes the sidecar the same way). tests/test_marker_contract.py checks both against surya.
SURYA_GPU_VRAM_GB = {
    "b300": 270,
    "b200": 180,
    "h200": 141,
    "h100": 80,
    "a100-80": 80,
    "a100": 40,
    "a100-40": 40,
    "l40s": 48,
    "a10": 24,
    "l4": 24,
    "5090": 32,
    "4090": 24,
    "3090": 24,
    "t4": 16,
}
SURYA_DEFAULT_GPU_TYPE = "4090"
# What surya assumes of a server whose GPU type it does not know (VllmBackend._max_num_seqs).
SURYA_UNKNOWN_CAPACITY = 8
# marker's own CLI keeps about 1.5 x the server's capacity in flight across all its workers
# (marker/scripts/convert.py): enough queued that the server never idles between requests.
OCR_OVERSUBSCRIBE = 1.5
# Physical cores left to the model servers' CPU side (the vLLM sidecar's API server and engine
# loop, the layout and OCR-error servers' request decoding and image pre-processing), as marker's
# own CLI sizes its pool: "physical cores - 2" (marker/utils/batch.py:15-17, get_worker_count).
MARKER_SERVER_CORES = 2
# A worker process (event loop, boto) beside its conversion process's memory budget.
WORKER_OVERHEAD_MB = 256
# A marker conversion process's memory, its model servers elsewhere: a peak RSS of at most
# 1533 MB (PSS about 730 MB after a chunk) over 16-page chunks of text, scans and real PDFs in
# both modes, one process or two side by side, in the marker CPU bench
# (bench/results/2026-12-05-marker-cpu/); rounded up to leave room for pages larger than the
# bench's. The CPU converter's budget (PAGEFLEET_CONVERT_MEMORY_MB, 4096 MB) was measured for
# its own OCR, not for marker, and stays the limit a conversion is stopped at.
MARKER_CONVERSION_MB = 2048
# Torch/OpenMP threads of a marker conversion process: marker's CLI gives each of W workers
# max(2, physical cores // W) (marker/scripts/convert.py:220-222).
MARKER_MIN_THREADS = 2


class RunnerSettings(BaseSettings):
    """The runner's own knobs (``PAGEFLEET_*``), next to the shared :class:`Settings`."""

    model_config = SettingsConfigDict(env_prefix="PAGEFLEET_", extra="ignore")

    gpus: str = Field(
        "", description="Comma-separated GPU indices or UUIDs to run workers on; empty = all."
    )
    workers_per_gpu: int = Field(
        0,
        ge=0,
        description="Worker processes per GPU; 0 decides: with marker from CPU cores and memory "
        "(workers hold no model), with the CPU converter's GPU OCR from free GPU memory.",
    )
    worker_gpu_memory_mb: int = Field(
        1024,
        ge=1,
        description="GPU memory one CPU-converter worker needs (its OCR models on "
        "onnxruntime-gpu), for the automatic workers_per_gpu; marker workers need none.",
    )
    max_workers_per_gpu: int = Field(8, ge=1, description="Cap on the automatic workers_per_gpu.")
    marker_worker_memory_mb: int = Field(
        MARKER_CONVERSION_MB,
        ge=64,
        description="Host memory one marker conversion process needs, for the automatic W "
        "(PAGEFLEET_CONVERT_MEMORY_MB stays its limit): the marker CPU bench's highest peak "
        "RSS, rounded up.",
    )
    server_memory_mb: int = Field(
        2048,
        ge=0,
        description="Host memory kept for the layout and OCR-error model servers that marker's "
        "first worker spawns, before W is sized from memory (marker only).",
    )
    mps: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Join the MPS daemon at PAGEFLEET_MPS_DIR: on (required, checked at start), "
        "off, or auto (if one answers there and a client connects).",
    )
    mps_dir: str = Field(
        "/run/pagefleet-mps",
        description="Pipe directory of the instance's one MPS control daemon "
        "(CUDA_MPS_PIPE_DIRECTORY): the AMI's nvidia-mps.service's, or mps/start_mps.sh's. "
        "Never CUDA's default /tmp/nvidia-mps, where a client that was told nothing (MPS off) "
        "would join it anyway. "
        "Through it the GPU's kernels run side by side: with marker those of the vLLM sidecar "
        "and of the layout and OCR-error servers the first worker spawns; workers run none.",
    )
    mps_active_thread_percentage: int = Field(
        0,
        ge=0,
        le=100,
        description="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per worker; 0 = automatic (CPU-converter "
        "workers ceil(200 / W); marker workers none, so the servers they spawn may use every SM).",
    )
    stop_timeout_s: float = Field(
        30.0, gt=KILL_MARGIN_S, description="ECS stopTimeout: time from SIGTERM to SIGKILL."
    )
    restart_backoff_s: float = Field(1.0, gt=0, description="First delay before a restart.")
    restart_backoff_max_s: float = Field(60.0, gt=0, description="Longest delay before a restart.")
    telemetry_interval_s: float = Field(60.0, gt=0, description="GPU and worker metrics period.")
    protection_minutes: int = Field(
        30, ge=1, le=2880, description="ECS scale-in protection lease, renewed while busy."
    )
    protection_idle_s: float = Field(
        30.0, ge=0, description="Idle time before scale-in protection is dropped."
    )
    health_file: str = Field(
        "/tmp/pagefleet-runner-health.json", description="Read by `python -m runner --check`."
    )
    parent_fd: int | None = Field(
        None,
        ge=0,
        description="A pipe's read end whose other end the process that started the runner "
        "holds (`pagefleet up` passes the runner's standard input, 0): at its end of file that "
        "process is gone, and the runner drains and stops (at once, workers killed, when the "
        "endpoint went with it). Unset (ECS): nothing is watched.",
    )


def load_runner_settings(**overrides: object) -> RunnerSettings:
    """Runner settings from the environment, with explicit overrides winning; raises
    :class:`~pagefleet.settings.SettingsRefused` for settings that cannot work."""
    try:
        return RunnerSettings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise refusal(exc) from None


class SupervisorError(RuntimeError):
    """A configuration the supervisor cannot run with."""


@dataclass(frozen=True)
class WorkerSpec:
    """One worker process to keep running: its GPU (None on CPU) and its extra environment."""

    index: int
    gpu: GpuInfo | None
    env: dict[str, str]

    @property
    def state_file(self) -> Path:
        return Path(self.env["PAGEFLEET_WORKER_STATE_FILE"])


@dataclass(frozen=True)
class Host:
    """What this runner may use of the machine: logical CPUs (vCPUs) and memory (its cgroup's,
    when limited), and the hardware threads per physical core (2 on every EC2 GPU type)."""

    cpu_count: int
    memory_mb: int
    threads_per_core: int = 1

    @property
    def physical_cores(self) -> int:
        """Cores, not hardware threads: what marker's CLI sizes its workers by. Two busy threads
        of one core do not convert twice as fast as one."""
        return max(1, self.cpu_count // self.threads_per_core)


def detect_host() -> Host:
    """Cores this process may run on and memory available now (the vLLM sidecar, started first,
    already holds its share), each capped by the container's cgroup v2 limits when set."""
    cores = len(os.sched_getaffinity(0))
    memory_mb = psutil.virtual_memory().available // (1024 * 1024)
    cgroup = Path("/sys/fs/cgroup")
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    try:
        limit = (cgroup / "memory.max").read_text().strip()
        if limit != "max":
            used = int((cgroup / "memory.current").read_text())
            memory_mb = min(memory_mb, (int(limit) - used) // (1024 * 1024))
    except (OSError, ValueError):
        pass
    logical, physical = psutil.cpu_count(), psutil.cpu_count(logical=False)
    threads_per_core = max(1, round(logical / physical)) if logical and physical else 1
    return Host(
        cpu_count=max(1, cores), memory_mb=max(0, memory_mb), threads_per_core=threads_per_core
    )


def ocr_server_capacity(gpu_type: str | None) -> int:
    """The OCR VLM server's concurrent sequences (--max-num-seqs), computed as surya does."""
    vram = SURYA_GPU_VRAM_GB.get(gpu_type or SURYA_DEFAULT_GPU_TYPE)
    if vram is None:
        return SURYA_UNKNOWN_CAPACITY
    return max(8, int(32 * vram / 24) // 8 * 8)


@dataclass(frozen=True)
class Sizing:
    """W and the OCR concurrency for one GPU (or for the host without GPU), and why.

    ``limited_by`` names what decided W: ``setting``, ``cpu``, ``memory`` or ``gpu memory``.
    The OCR fields are None where no OCR server is used (CPU converter, marker without OCR).
    """

    converter: str
    workers: int
    limited_by: str
    cpu_workers: int
    memory_workers: int
    threads: int
    ocr_capacity: int | None = None
    ocr_in_flight: int | None = None
    inference_parallel: int | None = None

    def fields(self) -> dict[str, Any]:
        return asdict(self)


def size_workers(
    settings: Settings, runner_settings: RunnerSettings, host: Host, gpu: GpuInfo | None
) -> Sizing:
    """W for one GPU (``gpu``) or for the whole host (``gpu`` None), and the OCR concurrency.

    - marker: W = min(physical cores - 2, memory // (``marker_worker_memory_mb`` + worker), cap),
      as marker's CLI sizes its pool by physical cores; the two cores and ``server_memory_mb``
      are the model servers'. Each worker's threads: max(2, physical cores // W), as marker's
      CLI pins them. Every worker sends at most
      ``inference_parallel`` OCR requests at once, so all W together keep about 1.5 x the VLM
      server's capacity in flight, as marker's own CLI does; an explicit
      PAGEFLEET_MARKER_INFERENCE_PARALLEL wins.
    - CPU converter on a GPU (OCR on onnxruntime-gpu): W from free GPU memory, as many
      ``worker_gpu_memory_mb`` footprints as fit, capped.
    - CPU converter without GPU: W = min(cores, memory // (budget + worker)); each worker's OCR
      pool gets cores // W threads.
    """
    marker = settings.converter == "marker"
    if marker:
        conversion_mb = runner_settings.marker_worker_memory_mb
        reserve_mb = runner_settings.server_memory_mb
        cpu_workers = max(1, host.physical_cores - MARKER_SERVER_CORES)
    else:
        conversion_mb, reserve_mb, cpu_workers = settings.convert_memory_mb, 0, host.cpu_count
    memory_workers = max(1, (host.memory_mb - reserve_mb) // (conversion_mb + WORKER_OVERHEAD_MB))
    explicit = runner_settings.workers_per_gpu if gpu is not None else settings.workers
    if explicit:
        workers, limited_by = explicit, "setting"
    elif gpu is not None and not marker:
        workers = min(
            runner_settings.max_workers_per_gpu,
            gpu.memory_free_mb // runner_settings.worker_gpu_memory_mb,
        )
        limited_by = "gpu memory"
    else:
        cap = runner_settings.max_workers_per_gpu if gpu is not None else cpu_workers
        workers = min(cpu_workers, memory_workers, cap)
        limited_by = (
            "cpu" if workers == cpu_workers else "memory" if workers == memory_workers else "cap"
        )
    if settings.convert_threads:
        threads = settings.convert_threads
    elif marker:
        threads = max(MARKER_MIN_THREADS, host.physical_cores // max(1, workers))
    else:
        threads = max(1, host.cpu_count // max(1, workers))
    if not marker or settings.marker_disable_ocr or workers == 0:
        return Sizing(settings.converter, workers, limited_by, cpu_workers, memory_workers, threads)
    capacity = ocr_server_capacity(settings.marker_vllm_gpu_type)
    if settings.marker_inference_parallel:
        parallel = settings.marker_inference_parallel
    else:
        parallel = max(1, math.ceil(capacity * OCR_OVERSUBSCRIBE / workers))
    return Sizing(
        settings.converter,
        workers,
        limited_by,
        cpu_workers,
        memory_workers,
        threads,
        ocr_capacity=capacity,
        ocr_in_flight=parallel * workers,
        inference_parallel=parallel,
    )


# EC2 GPU instances run two hardware threads a core, and give at least 4 GiB a vCPU (g4dn, g5,
# g6; g6e, gr6 and p5 more).
EC2_THREADS_PER_CORE = 2
EC2_MIN_MB_PER_VCPU = 4096


def marker_workers_on(vcpus: int, sidecar_mb: int) -> int:
    """W that :func:`size_workers` gives a marker runner on one GPU of an EC2 instance with
    ``vcpus`` and the least memory a vCPU of the listed types, less the vLLM sidecar's
    ``sidecar_mb``, the defaults left as they are: what Terraform pins the runners to
    (terraform/stack.json), so the splitter's lanes count the workers that run."""
    host = Host(
        cpu_count=vcpus,
        memory_mb=vcpus * EC2_MIN_MB_PER_VCPU - sidecar_mb,
        threads_per_core=EC2_THREADS_PER_CORE,
    )
    gpu = GpuInfo(index=0, uuid="GPU-0", name="any", memory_total_mb=0, memory_free_mb=0)
    settings = Settings.model_construct(converter="marker")
    return size_workers(settings, RunnerSettings.model_construct(), host, gpu).workers


def thread_percentage(workers: int, runner_settings: RunnerSettings) -> int:
    """CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for each of ``workers`` sharing a GPU.

    Each worker may use up to twice its fair share of the SMs: one worker's large kernels cannot
    starve the others, yet SMs left idle while another worker renders or post-processes on the
    CPU are still used.
    """
    if runner_settings.mps_active_thread_percentage:
        return runner_settings.mps_active_thread_percentage
    return min(100, math.ceil(200 / workers))


def mps_pipe_dir(runner_settings: RunnerSettings) -> Path | None:
    """The pipe directory of the instance's MPS daemon, or None to run without MPS."""
    if runner_settings.mps == "off":
        return None
    pipe = Path(runner_settings.mps_dir)
    # The control daemon creates the `control` pipe once it listens (see mps/start_mps.sh).
    if (pipe / "control").exists():
        return pipe
    if runner_settings.mps == "on":
        raise SupervisorError(
            f"PAGEFLEET_MPS=on but no MPS control daemon listens in {pipe}: on the ECS GPU AMI "
            "nvidia-mps.service runs one, elsewhere run mps/start_mps.sh; mount that directory "
            "at the same path with ipc=host"
        )
    return None


@dataclass(frozen=True)
class Plan:
    """The workers to run, the sizing of each GPU (or of the host), and lines worth logging."""

    specs: list[WorkerSpec]
    sizings: list[tuple[GpuInfo | None, Sizing]]
    notes: list[str]
    mps_pipe: Path | None


def plan_workers(
    settings: Settings,
    runner_settings: RunnerSettings,
    inventory: Inventory | None,
    state_dir: Path,
    host: Host | None = None,
) -> Plan:
    """The workers to run, sized by :func:`size_workers`, and a line per decision."""
    host = host or detect_host()
    notes: list[str] = []
    specs: list[WorkerSpec] = []
    sizings: list[tuple[GpuInfo | None, Sizing]] = []

    def add(gpu: GpuInfo | None, env: dict[str, str]) -> None:
        index = len(specs)
        env = {
            "PAGEFLEET_WORKER_STATE_FILE": str(state_dir / f"worker-{index}.json"),
            "PAGEFLEET_WORKER_INDEX": str(index),
            **env,
        }
        specs.append(WorkerSpec(index=index, gpu=gpu, env=env))

    def sized_env(sizing: Sizing) -> dict[str, str]:
        env = {"PAGEFLEET_CONVERT_THREADS": str(sizing.threads)}
        if sizing.inference_parallel is not None:
            env["PAGEFLEET_MARKER_INFERENCE_PARALLEL"] = str(sizing.inference_parallel)
        return env

    gpus = _selected(inventory.gpus(), runner_settings.gpus) if inventory is not None else []
    marker = settings.converter == "marker"
    if not gpus:
        sizing = size_workers(settings, runner_settings, host, None)
        sizings.append((None, sizing))
        notes.append(f"no GPU: running {sizing.workers} CPU workers, {sizing.threads} threads each")
        for _ in range(sizing.workers):
            # An empty list hides any GPU the driver might still expose: CPU mode means CPU.
            add(None, {"CUDA_VISIBLE_DEVICES": "", **sized_env(sizing)})
        return Plan(specs, sizings, notes, None)

    if marker and len(gpus) > 1:
        # surya's layout and OCR-error servers are one per host (workers find them through a
        # file in their home directory) and the task has one OCR sidecar: the workers of every
        # GPU would share the servers of the first, which sit on one GPU.
        raise SupervisorError(
            f"PAGEFLEET_CONVERTER=marker with {len(gpus)} GPUs: marker 2.x's model servers are "
            "shared by every worker of the host, so all would run on one GPU while the others "
            "idle. Run one runner per GPU: a one-GPU instance type, or PAGEFLEET_GPUS=<index> "
            "with the OCR server on that GPU too"
        )
    pipe = mps_pipe_dir(runner_settings)
    for gpu in gpus:
        sizing = size_workers(settings, runner_settings, host, gpu)
        sizings.append((gpu, sizing))
        if sizing.workers == 0:
            notes.append(
                f"GPU {gpu.index} ({gpu.name}): {gpu.memory_free_mb} MiB free is less than "
                f"one worker's {runner_settings.worker_gpu_memory_mb} MiB; no workers on it"
            )
            continue
        # CUDA_VISIBLE_DEVICES pins the worker and whatever it spawns (marker's layout and
        # OCR-error servers) to this GPU.
        env = {"CUDA_VISIBLE_DEVICES": gpu.uuid, **sized_env(sizing)}
        if pipe is not None:
            env["CUDA_MPS_PIPE_DIRECTORY"] = str(pipe)
            # A marker worker runs no kernel; a limit would only cap the servers it spawns.
            if not marker or runner_settings.mps_active_thread_percentage:
                env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(
                    thread_percentage(sizing.workers, runner_settings)
                )
        notes.append(
            f"GPU {gpu.index} ({gpu.name}, {gpu.memory_free_mb}/{gpu.memory_total_mb} MiB free): "
            f"{sizing.workers} workers (by {sizing.limited_by}), MPS "
            f"{'on, ' + str(pipe) if pipe else 'off'}"
        )
        for _ in range(sizing.workers):
            add(gpu, env)
    if not specs:
        raise SupervisorError("no GPU has room for a worker; lower PAGEFLEET_WORKER_GPU_MEMORY_MB")
    return Plan(specs, sizings, notes, pipe)


def _selected(gpus: list[GpuInfo], wanted: str) -> list[GpuInfo]:
    """The GPUs named in ``wanted`` (indices or UUIDs), or all of them."""
    names = {name.strip() for name in wanted.split(",") if name.strip()}
    if not names:
        return gpus
    chosen = [gpu for gpu in gpus if str(gpu.index) in names or gpu.uuid in names]
    unknown = names - {str(gpu.index) for gpu in chosen} - {gpu.uuid for gpu in chosen}
    if unknown:
        raise SupervisorError(f"PAGEFLEET_GPUS names GPUs this machine lacks: {sorted(unknown)}")
    return chosen


def restart_delay(failures: int, runner_settings: RunnerSettings) -> float:
    """Exponential backoff: base, 2 x base, 4 x base ... up to the maximum."""
    return min(
        runner_settings.restart_backoff_max_s,
        runner_settings.restart_backoff_s * 2 ** (failures - 1),
    )
