"""The runner's supervisor: W worker processes per GPU (or per CPU), restarted, drained, watched.

``python -m runner`` runs :func:`main`; ``pagefleet run`` can also build a :class:`Supervisor`
and await :meth:`Supervisor.run` in its own event loop.

Workers are ``python -m runner.worker`` processes. Each gets its GPU, MPS pipe directory and
thread share through its environment, and reports its state in a JSON file
(``PAGEFLEET_WORKER_STATE_FILE``) that the supervisor reads for scale-in protection, health and
telemetry.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from pagefleet.settings import Settings, load_settings
from runner.gpu import GpuInfo, Inventory, open_inventory
from runner.protection import TaskProtection
from runner.telemetry import Telemetry

# Stragglers are killed this long before ECS's own SIGKILL, so the kill is ours and is logged.
KILL_MARGIN_S = 2.0
# Worker state files are written by other processes; nothing to await, so they are polled.
STATE_POLL_S = 1.0
# `--check` fails when the supervisor has not rewritten its health file for this long.
HEALTH_MAX_AGE_S = 30.0


class SupervisorSettings(BaseSettings):
    """The supervisor's own knobs (``PAGEFLEET_*``), next to the shared :class:`Settings`."""

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


def load_supervisor_settings(**overrides: object) -> SupervisorSettings:
    """Supervisor settings from the environment, with explicit overrides winning."""
    return SupervisorSettings(**overrides)  # type: ignore[arg-type]


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
class WorkerState:
    """What a worker last wrote to its state file (the contract of runner/worker.py)."""

    pid: int
    held: int
    chunks_done: int
    pages_done: int
    convert_s: float
    updated_at: float

    @classmethod
    def read(cls, path: Path) -> WorkerState | None:
        """The state, or None before the worker first wrote it (it writes atomically)."""
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        return cls(
            pid=int(raw["pid"]),
            held=int(raw["held"]),
            chunks_done=int(raw["chunks_done"]),
            pages_done=int(raw["pages_done"]),
            convert_s=float(raw["convert_s"]),
            updated_at=float(raw["updated_at"]),
        )


def workers_for_gpu(gpu: GpuInfo, config: SupervisorSettings) -> int:
    """W for one GPU: the setting, or as many footprints as fit in its free memory."""
    if config.workers_per_gpu:
        return config.workers_per_gpu
    return min(config.max_workers_per_gpu, gpu.memory_free_mb // config.worker_gpu_memory_mb)


def thread_percentage(workers: int, config: SupervisorSettings) -> int:
    """CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for each of ``workers`` sharing a GPU.

    Each worker may use up to twice its fair share of the SMs: one worker's large kernels cannot
    starve the others, yet SMs left idle while another worker renders or post-processes on the
    CPU are still used.
    """
    if config.mps_active_thread_percentage:
        return config.mps_active_thread_percentage
    return min(100, math.ceil(200 / workers))


def mps_pipe_dir(gpu: GpuInfo, config: SupervisorSettings) -> Path | None:
    """The pipe directory of the GPU's MPS daemon, or None to run without MPS."""
    if config.mps == "off":
        return None
    pipe = Path(config.mps_dir) / gpu.uuid / "pipe"
    # The control daemon creates the `control` pipe once it listens (see mps/start_mps.sh).
    if (pipe / "control").exists():
        return pipe
    if config.mps == "on":
        raise SupervisorError(
            f"PAGEFLEET_MPS=on but no MPS daemon listens in {pipe} for GPU {gpu.index} "
            f"({gpu.uuid}); run mps/start_mps.sh on the host and share {config.mps_dir}"
        )
    return None


def plan_workers(
    settings: Settings,
    config: SupervisorSettings,
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

    gpus = _selected(inventory.gpus(), config.gpus) if inventory is not None else []
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
        count = workers_for_gpu(gpu, config)
        if count == 0:
            notes.append(
                f"GPU {gpu.index} ({gpu.name}): {gpu.memory_free_mb} MiB free is less than "
                f"one worker's {config.worker_gpu_memory_mb} MiB; no workers on it"
            )
            continue
        pipe = mps_pipe_dir(gpu, config)
        env = {"CUDA_VISIBLE_DEVICES": gpu.uuid}
        if pipe is not None:
            env["CUDA_MPS_PIPE_DIRECTORY"] = str(pipe)
            env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(thread_percentage(count, config))
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


def restart_delay(failures: int, config: SupervisorSettings) -> float:
    """Exponential backoff: base, 2 x base, 4 x base ... up to the maximum."""
    return min(config.restart_backoff_max_s, config.restart_backoff_s * 2 ** (failures - 1))


class WorkerSlot:
    """One worker's place: the process now in it, and how it has fared."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self.exit_codes: list[int] = []
        self.finished = False
        self._changed = asyncio.Condition()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def wait_running(self, not_pid: int | None = None) -> int:
        """The pid of the running worker, once there is one other than ``not_pid``."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: self.alive and self.proc is not None and self.proc.pid != not_pid
            )
            assert self.proc is not None
            return self.proc.pid

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def signal(self, signum: int) -> None:
        if self.alive:
            assert self.proc is not None
            # The worker may exit between the check and the kill.
            with contextlib.suppress(ProcessLookupError):
                if signum == signal.SIGKILL:
                    # The worker leads its own process group: its conversion process goes too.
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.send_signal(signum)


class Supervisor:
    """Runs the workers until stopped (or, in burst mode, until all have exited 0).

    Parameters
    ----------
    settings, config
        Shared settings and the supervisor's own; read from the environment when omitted.
    worker_argv
        The worker command; ``python -m runner.worker`` by default.
    extra_env
        Environment given to every worker on top of this process's (settings overrides).
    inventory
        Opens the GPU inventory: NVML by default; tests pass a fake.
    handle_signals
        Install SIGTERM/SIGINT handlers (first: drain, second: kill now). An application that
        owns the signals passes False and calls :meth:`stop`.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        config: SupervisorSettings | None = None,
        *,
        worker_argv: Sequence[str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        inventory: Callable[[], tuple[Inventory | None, str]] = open_inventory,
        telemetry: Telemetry | None = None,
        protection: TaskProtection | None = None,
        handle_signals: bool = True,
    ) -> None:
        self.settings = settings or load_settings()
        self.config = config or load_supervisor_settings()
        self.worker_argv = list(worker_argv or [sys.executable, "-m", "runner.worker"])
        self.extra_env = dict(extra_env or {})
        self.telemetry = telemetry or Telemetry()
        self.slots: list[WorkerSlot] = []
        self._open_inventory = inventory
        self._inventory: Inventory | None = None
        self._protection = protection
        self._handle_signals = handle_signals
        self._stopping = asyncio.Event()
        self._drain = True
        self._killed = 0
        self._fatal: str | None = None
        self._kill_timer: asyncio.TimerHandle | None = None
        self._rates = _Rates()

    # --- lifecycle ---

    async def run(self) -> int:
        """Run until stopped; 0 after a clean drain or a finished burst, 1 if workers were
        killed, 2 if the supervisor could not run its workers."""
        loop = asyncio.get_running_loop()
        state_dir = Path(tempfile.mkdtemp(prefix="pagefleet-runner-"))
        if self._protection is None:
            self._protection = TaskProtection.from_env(
                self.config.protection_minutes, self.config.protection_idle_s, self.telemetry
            )
        try:
            self._inventory, source = self._open_inventory()
            try:
                specs, notes = plan_workers(self.settings, self.config, self._inventory, state_dir)
            except SupervisorError as exc:
                self.telemetry.event("supervisor_failed", level="error", error=str(exc))
                return 2
            for note in notes:
                self.telemetry.event("plan", inventory=source, note=note)
            self._check_timeouts()
            self.slots = [WorkerSlot(spec) for spec in specs]
            if self._handle_signals:
                for signum in (signal.SIGTERM, signal.SIGINT):
                    loop.add_signal_handler(signum, self._on_signal, signum)
            self.telemetry.event(
                "supervisor_started", workers=len(specs), burst=self.settings.burst
            )
            watchers = [
                asyncio.create_task(self._watch_states()),
                asyncio.create_task(self._report()),
            ]
            try:
                await asyncio.gather(*(self._run_slot(slot) for slot in self.slots))
            except BaseException:
                # Cancelled by an embedding application, or a bug: leave no worker behind.
                self.stop(drain=False)
                await asyncio.gather(
                    *(slot.proc.wait() for slot in self.slots if slot.proc is not None)
                )
                raise
            finally:
                for task in watchers:
                    task.cancel()
                await asyncio.gather(*watchers, return_exceptions=True)
                # The last word: no worker runs, so `--check` fails from now on.
                self._write_health({})
        finally:
            if self._handle_signals:
                for signum in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(signum)
            if self._kill_timer is not None:
                self._kill_timer.cancel()
            if self._inventory is not None:
                self._inventory.close()
            if self._protection is not None:
                await self._protection.close()
            shutil.rmtree(state_dir, ignore_errors=True)
        code = 2 if self._fatal else 1 if self._killed or not self._drain else 0
        self.telemetry.event("supervisor_stopped", exit_code=code, killed=self._killed)
        return code

    def stop(self, drain: bool = True) -> None:
        """Stop the workers: drain (SIGTERM, SIGKILL at the ECS deadline) or kill them now.

        Call it from the event loop's thread. A second call with ``drain=False`` escalates.
        """
        if self._stopping.is_set() and (drain or not self._drain):
            return
        self._stopping.set()
        self._drain = drain
        if drain:
            deadline_s = self.config.stop_timeout_s - KILL_MARGIN_S
            self.telemetry.event("draining", deadline_s=deadline_s)
            self._kill_timer = asyncio.get_running_loop().call_later(
                deadline_s, self._kill_stragglers
            )
        else:
            self.telemetry.event("killing", level="warning")
        for slot in self.slots:
            slot.signal(signal.SIGTERM if drain else signal.SIGKILL)

    def _on_signal(self, signum: int) -> None:
        self.telemetry.event("signal", signal=signal.Signals(signum).name)
        self.stop(drain=not self._stopping.is_set())

    def _kill_stragglers(self) -> None:
        for slot in self.slots:
            if slot.alive:
                assert slot.proc is not None
                self._killed += 1
                self.telemetry.event(
                    "worker_killed", level="warning", worker=slot.spec.index, pid=slot.proc.pid
                )
                slot.signal(signal.SIGKILL)

    def _check_timeouts(self) -> None:
        # A draining worker needs its drain time plus a moment to release its chunk.
        if (
            self.settings.drain_timeout_s + KILL_MARGIN_S
            > self.config.stop_timeout_s - KILL_MARGIN_S
        ):
            self.telemetry.event(
                "config_warning",
                level="warning",
                note="PAGEFLEET_DRAIN_TIMEOUT_S leaves workers no time to release chunks before "
                "PAGEFLEET_STOP_TIMEOUT_S; held chunks wait out their visibility timeout",
                drain_timeout_s=self.settings.drain_timeout_s,
                stop_timeout_s=self.config.stop_timeout_s,
            )

    # --- one worker ---

    async def _run_slot(self, slot: WorkerSlot) -> None:
        loop = asyncio.get_running_loop()
        env = {**os.environ, **self.extra_env, **slot.spec.env}
        failures = 0
        while not self._stopping.is_set():
            # A state file left by a dead worker would claim a chunk nobody is converting.
            slot.spec.state_file.unlink(missing_ok=True)
            started = loop.time()
            try:
                # Own session: a terminal's Ctrl-C reaches the supervisor only, which drains.
                slot.proc = await asyncio.create_subprocess_exec(
                    *self.worker_argv, env=env, start_new_session=True
                )
            except OSError as exc:
                self._fatal = f"cannot start worker {self.worker_argv!r}: {exc}"
                self.telemetry.event("worker_failed", level="error", error=self._fatal)
                self.stop(drain=True)
                return
            self.telemetry.event(
                "worker_started", worker=slot.spec.index, pid=slot.proc.pid, restarts=slot.restarts
            )
            await slot._notify()
            if self._stopping.is_set():
                # stop() ran while this worker was starting, so it was not signalled.
                slot.signal(signal.SIGTERM if self._drain else signal.SIGKILL)
            code = await slot.proc.wait()
            ran_s = loop.time() - started
            slot.exit_codes.append(code)
            slot.spec.state_file.unlink(missing_ok=True)
            await slot._notify()
            self.telemetry.event(
                "worker_exited",
                level="info" if code == 0 or self._stopping.is_set() else "warning",
                worker=slot.spec.index,
                pid=slot.proc.pid,
                exit_code=code,
                ran_s=round(ran_s, 3),
            )
            if self._stopping.is_set():
                break
            if code == 0 and self.settings.burst:
                break
            # A worker that outlived the longest backoff failed afresh; one that keeps dying at
            # once backs off further each time.
            failures = 1 if ran_s >= self.config.restart_backoff_max_s else failures + 1
            delay = restart_delay(failures, self.config)
            self.telemetry.event("worker_restart", worker=slot.spec.index, delay_s=delay)
            try:
                await asyncio.wait_for(self._stopping.wait(), delay)
                break
            except TimeoutError:
                slot.restarts += 1
        slot.finished = True
        await slot._notify()

    # --- watching ---

    async def _watch_states(self) -> None:
        """Keep scale-in protection and the health file in step with the workers."""
        while True:
            states = self._states()
            busy = any(state is not None and state.held for state in states.values())
            if self._protection is not None:
                await self._protection.update(busy)
            self._write_health(states)
            await asyncio.sleep(STATE_POLL_S)

    def _states(self) -> dict[int, WorkerState | None]:
        states: dict[int, WorkerState | None] = {}
        for slot in self.slots:
            try:
                states[slot.spec.index] = WorkerState.read(slot.spec.state_file)
            except (ValueError, KeyError, TypeError) as exc:
                self.telemetry.event(
                    "state_unreadable", level="warning", worker=slot.spec.index, error=str(exc)
                )
                states[slot.spec.index] = None
        return states

    def _write_health(self, states: Mapping[int, WorkerState | None]) -> None:
        workers = []
        for slot in self.slots:
            state = states.get(slot.spec.index)
            workers.append(
                {
                    "index": slot.spec.index,
                    "pid": slot.proc.pid if slot.alive and slot.proc else None,
                    "restarts": slot.restarts,
                    "held": state.held if state else 0,
                }
            )
        health = {"pid": os.getpid(), "updated_at": time.time(), "workers": workers}
        path = Path(self.config.health_file)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(health))
        tmp.replace(path)

    async def _report(self) -> None:
        """GPU telemetry and per-worker pages/s, every ``telemetry_interval_s``."""
        while True:
            await asyncio.sleep(self.config.telemetry_interval_s)
            await self.report_once()

    async def report_once(self) -> None:
        if self._inventory is not None:
            for sample in await asyncio.to_thread(self._inventory.sample):
                self.telemetry.metrics(
                    "gpu",
                    {"Gpu": str(sample.index)},
                    {
                        "GpuUtilization": (sample.utilization_pct, "Percent"),
                        "GpuMemoryUsed": (sample.memory_used_mb, "Megabytes"),
                        "GpuMemoryTotal": (sample.memory_total_mb, "Megabytes"),
                        "GpuPower": (sample.power_w, "None"),
                    },
                    gpu_uuid=sample.uuid,
                )
        now = time.monotonic()
        for index, state in self._states().items():
            if state is None:
                continue
            pages, wall_s, convert_s = self._rates.delta(index, state, now)
            if wall_s <= 0:
                continue
            self.telemetry.metrics(
                "worker",
                {"Worker": str(index)},
                {
                    "PagesPerSecond": (pages / wall_s, "Count/Second"),
                    "ConvertPagesPerSecond": (
                        pages / convert_s if convert_s > 0 else 0.0,
                        "Count/Second",
                    ),
                    "ChunksDone": (state.chunks_done, "Count"),
                    "Held": (state.held, "Count"),
                },
                pid=state.pid,
                pages_done=state.pages_done,
            )


class _Rates:
    """Per-worker counters at the previous report, to turn totals into rates."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[WorkerState, float]] = {}

    def delta(self, index: int, state: WorkerState, now: float) -> tuple[int, float, float]:
        """Pages, wall seconds and conversion seconds since the last report of this worker."""
        last = self._last.get(index)
        self._last[index] = (state, now)
        if last is None or last[0].pid != state.pid:
            # First sight of this process: its counters start at zero, its clock at its start.
            return state.pages_done, 0.0, state.convert_s
        previous, then = last
        return (
            state.pages_done - previous.pages_done,
            now - then,
            state.convert_s - previous.convert_s,
        )


def check_health(path: Path, max_age_s: float = HEALTH_MAX_AGE_S) -> tuple[bool, str]:
    """Healthy when the supervisor rewrote its health file lately and a worker is running."""
    try:
        health: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return False, f"no health file {path}: {exc}"
    age_s = time.time() - float(health["updated_at"])
    if age_s > max_age_s:
        return False, f"health file {path} is {age_s:.0f} s old"
    alive = [worker for worker in health["workers"] if worker["pid"] is not None]
    if not alive:
        return False, f"no worker running of {len(health['workers'])}"
    return True, f"{len(alive)} of {len(health['workers'])} workers running"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner",
        description="Run W pagefleet workers per GPU (or per CPU core) until stopped.",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 0 if a running supervisor is healthy, else 1"
    )
    parser.add_argument(
        "worker",
        nargs=argparse.REMAINDER,
        help="worker command after `--` (default: runner.worker)",
    )
    args = parser.parse_args(argv)
    config = load_supervisor_settings()
    if args.check:
        healthy, reason = check_health(Path(config.health_file))
        print(reason)
        return 0 if healthy else 1
    worker = args.worker[1:] if args.worker[:1] == ["--"] else args.worker
    return asyncio.run(Supervisor(config=config, worker_argv=worker or None).run())
