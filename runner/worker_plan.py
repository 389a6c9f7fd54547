"""How many workers the runner starts, where, and with what environment.

:class:`RunnerSettings` holds the runner's own knobs; :func:`plan_workers` turns them, the shared
:class:`~pagefleet.settings.Settings` and the GPU inventory into one :class:`WorkerSpec` per
worker process. Everything here is a pure decision: starting and watching the processes is
``runner/supervisor.py``'s job.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from pagefleet.settings import Settings
from runner.gpu import GpuInfo, Inventory

# Stragglers are killed this long before ECS's own SIGKILL, so the kill is ours and is logged.
KILL_MARGIN_S = 2.0


class RunnerSettings(BaseSettings):
    """The runner's own knobs (``PAGEFLEET_*``), next to the shared :class:`Settings`."""

    model_config = SettingsConfigDict(env_prefix="PAGEFLEET_", extra="ignore")

    gpus: str = Field(
        "", description="Comma-separated GPU indices or UUIDs to run workers on; empty = all."
    )
    workers_per_gpu: int = Field(
        0, ge=0, description="Worker processes per GPU; 0 decides from free GPU memory."
    )
    # marker 1.x loaded its models into every worker (about 7 GiB each); 2.x workers are thin
    # clients of shared model servers, so a worker needs little more than a CUDA context.
    worker_gpu_memory_mb: int = Field(
        1024, ge=1, description="GPU memory one worker needs, for the automatic workers_per_gpu."
    )
    max_workers_per_gpu: int = Field(8, ge=1, description="Cap on the automatic workers_per_gpu.")
    mps: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Use the MPS daemon of each GPU: on (required), off, or auto (if it runs).",
    )
    mps_dir: str = Field(
        "/tmp/nvidia-mps",
        description="Holds <gpu-uuid>/pipe and <gpu-uuid>/log (mps/start_mps.sh).",
    )
    mps_active_thread_percentage: int = Field(
        0, ge=0, le=100, description="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE per worker; 0 = automatic."
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


def load_runner_settings(**overrides: object) -> RunnerSettings:
    """Runner settings from the environment, with explicit overrides winning."""
    return RunnerSettings(**overrides)  # type: ignore[arg-type]


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


def workers_for_gpu(gpu: GpuInfo, runner_settings: RunnerSettings) -> int:
    """W for one GPU: the setting, or as many footprints as fit in its free memory."""
    if runner_settings.workers_per_gpu:
        return runner_settings.workers_per_gpu
    return min(
        runner_settings.max_workers_per_gpu,
        gpu.memory_free_mb // runner_settings.worker_gpu_memory_mb,
    )


def thread_percentage(workers: int, runner_settings: RunnerSettings) -> int:
    """CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for each of ``workers`` sharing a GPU.

    Each worker may use up to twice its fair share of the SMs: one worker's large kernels cannot
    starve the others, yet SMs left idle while another worker renders or post-processes on the
    CPU are still used.
    """
    if runner_settings.mps_active_thread_percentage:
        return runner_settings.mps_active_thread_percentage
    return min(100, math.ceil(200 / workers))


def mps_pipe_dir(gpu: GpuInfo, runner_settings: RunnerSettings) -> Path | None:
    """The pipe directory of the GPU's MPS daemon, or None to run without MPS."""
    if runner_settings.mps == "off":
        return None
    pipe = Path(runner_settings.mps_dir) / gpu.uuid / "pipe"
    # The control daemon creates the `control` pipe once it listens (see mps/start_mps.sh).
    if (pipe / "control").exists():
        return pipe
    if runner_settings.mps == "on":
        raise SupervisorError(
            f"PAGEFLEET_MPS=on but no MPS daemon listens in {pipe} for GPU {gpu.index} "
            f"({gpu.uuid}); run mps/start_mps.sh on the host and share {runner_settings.mps_dir}"
        )
    return None


def plan_workers(
    settings: Settings,
    runner_settings: RunnerSettings,
    inventory: Inventory | None,
    state_dir: Path,
) -> tuple[list[WorkerSpec], list[str]]:
    """The workers to run and a line per decision worth logging once."""
    notes: list[str] = []
    specs: list[WorkerSpec] = []

    def add(gpu: GpuInfo | None, env: dict[str, str]) -> None:
        index = len(specs)
        env = {
            "PAGEFLEET_WORKER_STATE_FILE": str(state_dir / f"worker-{index}.json"),
            "PAGEFLEET_WORKER_INDEX": str(index),
            **env,
        }
        specs.append(WorkerSpec(index=index, gpu=gpu, env=env))

    gpus = _selected(inventory.gpus(), runner_settings.gpus) if inventory is not None else []
    if not gpus:
        cores = os.cpu_count() or 1
        count = settings.workers or cores
        # Each worker's thread pools (OCR) get a share of the cores, not all of them each.
        threads = settings.convert_threads or max(1, cores // count)
        notes.append(f"no GPU: running {count} CPU workers, {threads} threads each")
        for _ in range(count):
            # An empty list hides any GPU the driver might still expose: CPU mode means CPU.
            add(None, {"CUDA_VISIBLE_DEVICES": "", "PAGEFLEET_CONVERT_THREADS": str(threads)})
        return specs, notes

    for gpu in gpus:
        count = workers_for_gpu(gpu, runner_settings)
        if count == 0:
            notes.append(
                f"GPU {gpu.index} ({gpu.name}): {gpu.memory_free_mb} MiB free is less than "
                f"one worker's {runner_settings.worker_gpu_memory_mb} MiB; no workers on it"
            )
            continue
        pipe = mps_pipe_dir(gpu, runner_settings)
        env = {"CUDA_VISIBLE_DEVICES": gpu.uuid}
        if pipe is not None:
            env["CUDA_MPS_PIPE_DIRECTORY"] = str(pipe)
            env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(
                thread_percentage(count, runner_settings)
            )
        notes.append(
            f"GPU {gpu.index} ({gpu.name}, {gpu.memory_free_mb}/{gpu.memory_total_mb} MiB free): "
            f"{count} workers, MPS {'on, ' + str(pipe) if pipe else 'off'}"
        )
        for _ in range(count):
            add(gpu, env)
    if not specs:
        raise SupervisorError("no GPU has room for a worker; lower PAGEFLEET_WORKER_GPU_MEMORY_MB")
    return specs, notes


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
