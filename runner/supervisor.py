"""The runner's supervisor: W worker processes per GPU (or per CPU), restarted, drained, watched.

``python -m runner`` (``runner/cli.py``) runs a :class:`Supervisor`; an application that owns its
event loop and signals can build one too and await :meth:`Supervisor.run`.

Workers are ``python -m runner.worker`` processes, planned by ``runner/worker_plan.py``. Each gets
its GPU, MPS pipe directory and thread share through its environment, and reports its state in a
file (``runner/worker_state.py``) that the supervisor reads for scale-in protection, its health
file (``runner/health.py``) and telemetry.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pagefleet.settings import Settings, load_settings
from runner.converters import ConverterUnavailable, check_converter
from runner.gpu import GpuError, GpuInfo, Inventory, open_inventory
from runner.health import RunnerHealth, WorkerHealth
from runner.mps import MpsProbe, probe_mps_client
from runner.protection import TaskProtection
from runner.telemetry import Telemetry
from runner.worker_plan import (
    KILL_MARGIN_S,
    Host,
    Plan,
    RunnerSettings,
    SupervisorError,
    WorkerSpec,
    load_runner_settings,
    plan_workers,
    restart_delay,
)
from runner.worker_state import CONFIG_ERROR_EXIT, WorkerState

# Worker state files are written by other processes; nothing to await, so they are polled.
STATE_POLL_S = 1.0
# While a worker is yet to start or still starting, poll faster: its first state file means it
# is warm, and whoever waits for warm workers (the embedded stack) should not wait a second more.
STARTING_POLL_S = 0.05
# Once the parent is gone, how long the endpoint may take to accept a connection before it is
# taken to be there still (slow, not gone).
ENDPOINT_PROBE_S = 1.0


class WorkerSlot:
    """One worker's place: the process now in it, and how it has fared."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self.exit_codes: list[int] = []
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
    settings, runner_settings
        Shared settings and the runner's own; read from the environment when omitted.
    worker_argv
        The worker command; ``python -m runner.worker`` by default.
    extra_env
        Environment given to every worker on top of this process's (settings overrides).
    inventory
        Opens the GPU inventory: NVML by default; tests pass a fake.
    mps_probe
        Checks that a CUDA client reaches the MPS daemon (:func:`runner.mps.probe_mps_client`).
    host
        Cores and memory to size W by; read from the machine when omitted.
    handle_signals
        Install SIGTERM/SIGINT handlers (first: drain, second: kill now). An application that
        owns the signals passes False and calls :meth:`stop`.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        runner_settings: RunnerSettings | None = None,
        *,
        worker_argv: Sequence[str] | None = None,
        extra_env: Mapping[str, str] | None = None,
        inventory: Callable[[], tuple[Inventory | None, str]] = open_inventory,
        mps_probe: Callable[[Path, GpuInfo], MpsProbe] = probe_mps_client,
        host: Host | None = None,
        telemetry: Telemetry | None = None,
        protection: TaskProtection | None = None,
        handle_signals: bool = True,
    ) -> None:
        self.settings = settings or load_settings()
        self.runner_settings = runner_settings or load_runner_settings()
        self.worker_argv = list(worker_argv or [sys.executable, "-m", "runner.worker"])
        self.extra_env = dict(extra_env or {})
        self.telemetry = telemetry or Telemetry()
        self.slots: list[WorkerSlot] = []
        self._open_inventory = inventory
        self._mps_probe = mps_probe
        self._host = host
        self._inventory: Inventory | None = None
        self.nvml_errors = 0
        self._protection = protection
        self._handle_signals = handle_signals
        self._stopping = asyncio.Event()
        self._drain = True
        self._killed = 0
        self._fatal: str | None = None
        self._kill_timer: asyncio.TimerHandle | None = None
        self._parent_gone: asyncio.Task[None] | None = None
        self._rates = _Rates()

    # --- lifecycle ---

    async def run(self) -> int:
        """Run until stopped; 0 after a clean drain or a finished burst, 1 if workers were
        killed, 2 if the supervisor could not run its workers."""
        loop = asyncio.get_running_loop()
        state_dir = Path(tempfile.mkdtemp(prefix="pagefleet-runner-"))
        if self._protection is None:
            self._protection = TaskProtection.from_env(
                self.runner_settings.protection_minutes,
                self.runner_settings.protection_idle_s,
                self.telemetry,
            )
        try:
            self._inventory, source = self._open_inventory()
            try:
                # Before any worker: one that cannot build its converter would only crash-loop.
                check_converter(self.settings.converter)
                plan, mps = await self._plan(state_dir)
            except (ConverterUnavailable, SupervisorError) as exc:
                return self._failed(str(exc))
            specs = plan.specs
            # The first line says what this runner is: its GPUs, MPS as a client saw it, W.
            self.telemetry.event(
                "runner_start",
                level="warning" if "unusable" in mps else "info",
                inventory=source,
                converter=self.settings.converter,
                mps=mps,
                gpus=[gpu.uuid for gpu, _ in plan.sizings if gpu is not None],
                sizing=[sizing.fields() for _, sizing in plan.sizings],
                workers=len(specs),
            )
            for note in plan.notes:
                self.telemetry.event("plan", inventory=source, note=note)
            self._check_timeouts()
            self.slots = [WorkerSlot(spec) for spec in specs]
            if (error := self._watch_parent(loop)) is not None:
                return self._failed(error)
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
                self._write_health({}, error=self._fatal)
        finally:
            if self.runner_settings.parent_fd is not None:
                loop.remove_reader(self.runner_settings.parent_fd)
            if self._handle_signals:
                for signum in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(signum)
            if self._kill_timer is not None:
                self._kill_timer.cancel()
            if self._parent_gone is not None:
                self._parent_gone.cancel()
            if self._inventory is not None:
                self._inventory.close()
            if self._protection is not None:
                await self._protection.close()
            shutil.rmtree(state_dir, ignore_errors=True)
        code = 2 if self._fatal else 1 if self._killed or not self._drain else 0
        self.telemetry.event("supervisor_stopped", exit_code=code, killed=self._killed)
        return code

    async def _plan(self, state_dir: Path) -> tuple[Plan, str]:
        """The workers to run, and what MPS a client of each GPU found (checked, not assumed)."""
        plan = plan_workers(
            self.settings, self.runner_settings, self._inventory, state_dir, self._host
        )
        if plan.mps_pipe is None:
            mode = self.runner_settings.mps
            reason = "PAGEFLEET_MPS=off" if mode == "off" else "no GPU"
            if mode != "off" and plan.sizings and plan.sizings[0][0] is not None:
                reason = f"no daemon at {self.runner_settings.mps_dir}"
            return plan, f"off ({reason})"
        pipe = plan.mps_pipe
        failures = []
        for gpu, sizing in plan.sizings:
            if gpu is None or sizing.workers == 0:
                continue
            probe = await asyncio.to_thread(self._mps_probe, pipe, gpu)
            if not probe.ok:
                failures.append(f"GPU {gpu.index} ({gpu.uuid}): {probe.detail}")
        if not failures:
            return plan, f"on, client connected via {pipe}"
        failed = "; ".join(failures)
        if self.runner_settings.mps == "on":
            raise SupervisorError(
                f"PAGEFLEET_MPS=on but a CUDA client cannot use the MPS daemon at {pipe}: "
                f"{failed}. Same UID as the daemon's servers, ipc=host and the pipe directory "
                "mounted at the same path (mps/README.md)"
            )
        # auto: workers told to use this daemon would fail every CUDA call; run without it
        # (runner_start, the first line, says so as a warning).
        plan = plan_workers(
            self.settings,
            self.runner_settings.model_copy(update={"mps": "off"}),
            self._inventory,
            state_dir,
            self._host,
        )
        return plan, f"off (daemon at {pipe} unusable: {failed})"

    def stop(self, drain: bool = True) -> None:
        """Stop the workers: drain (SIGTERM, SIGKILL at the ECS deadline) or kill them now.

        Call it from the event loop's thread. A second call with ``drain=False`` escalates.
        """
        if self._stopping.is_set() and (drain or not self._drain):
            return
        self._stopping.set()
        self._drain = drain
        if drain:
            deadline_s = self.runner_settings.stop_timeout_s - KILL_MARGIN_S
            self.telemetry.event("draining", deadline_s=deadline_s)
            self._kill_timer = asyncio.get_running_loop().call_later(
                deadline_s, self._kill_stragglers
            )
        else:
            self.telemetry.event("killing", level="warning")
        for slot in self.slots:
            slot.signal(signal.SIGTERM if drain else signal.SIGKILL)

    def _failed(self, error: str) -> int:
        """A configuration the supervisor cannot run: one line, no worker restarted, and the
        reason in the health file, where `--check` and the embedded stack read it; exit 2."""
        self.telemetry.event("supervisor_failed", level="error", error=error)
        self._write_health({}, error=error)
        return 2

    def _watch_parent(self, loop: asyncio.AbstractEventLoop) -> str | None:
        """Stop once the parent's end of ``parent_fd`` closes (:meth:`_stop_without_parent`): a
        parent killed outright (kill -9 of `pagefleet up`) sends no signal, and its children
        live on in sessions of their own. The end of file comes with the parent's end, however
        it ends, and takes no polling. The error if the setting names nothing to watch."""
        fd = self.runner_settings.parent_fd
        if fd is None:
            return None
        try:
            loop.add_reader(fd, self._on_parent_readable, fd)
        except (OSError, ValueError) as exc:
            return f"PAGEFLEET_PARENT_FD={fd} is no pipe to watch: {exc}"
        return None

    def _on_parent_readable(self, fd: int) -> None:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if data:
            return  # nothing is sent on it; whatever was is not the end
        loop = asyncio.get_running_loop()
        loop.remove_reader(fd)
        self.telemetry.event("parent_gone", level="warning", parent_fd=fd)
        self._parent_gone = loop.create_task(self._stop_without_parent())

    async def _stop_without_parent(self) -> None:
        """Drain if the endpoint still answers (a stack that outlives `pagefleet up`); else stop
        at once: the embedded server went with the parent, and every call of a drain would fail
        until its deadline, the workers and their chunks kept for nothing."""
        self.stop(drain=await _endpoint_answers(self.settings.endpoint_url))

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
            > self.runner_settings.stop_timeout_s - KILL_MARGIN_S
        ):
            self.telemetry.event(
                "config_warning",
                level="warning",
                note="PAGEFLEET_DRAIN_TIMEOUT_S leaves workers no time to release chunks before "
                "PAGEFLEET_STOP_TIMEOUT_S; held chunks wait out their visibility timeout",
                drain_timeout_s=self.settings.drain_timeout_s,
                stop_timeout_s=self.runner_settings.stop_timeout_s,
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
            if code == CONFIG_ERROR_EXIT and not self._fatal:
                # Every restart would fail the same way (the worker logged why): stop instead.
                self._fatal = (
                    f"worker {slot.spec.index} stopped on a configuration error "
                    f"(exit code {code}): its log line says which"
                )
                self.telemetry.event("worker_failed", level="error", error=self._fatal)
                self.stop(drain=True)
            if self._stopping.is_set():
                break
            if code == 0 and self.settings.burst:
                break
            # A worker that outlived the longest backoff failed afresh; one that keeps dying at
            # once backs off further each time.
            failures = 1 if ran_s >= self.runner_settings.restart_backoff_max_s else failures + 1
            delay = restart_delay(failures, self.runner_settings)
            self.telemetry.event("worker_restart", worker=slot.spec.index, delay_s=delay)
            try:
                await asyncio.wait_for(self._stopping.wait(), delay)
                break
            except TimeoutError:
                slot.restarts += 1

    # --- watching ---

    async def _watch_states(self) -> None:
        """Keep scale-in protection and the health file in step with the workers."""
        while True:
            states = self._states()
            busy = any(state is not None and state.held for state in states.values())
            if self._protection is not None:
                await self._protection.update(busy)
            self._write_health(states)
            starting = any(
                states[slot.spec.index] is None and (slot.proc is None or slot.alive)
                for slot in self.slots
            )
            await asyncio.sleep(STARTING_POLL_S if starting else STATE_POLL_S)

    def _states(self) -> dict[int, WorkerState | None]:
        states: dict[int, WorkerState | None] = {}
        for slot in self.slots:
            try:
                states[slot.spec.index] = WorkerState.read(slot.spec.state_file)
            except ValueError as exc:
                self.telemetry.event(
                    "state_unreadable", level="warning", worker=slot.spec.index, error=str(exc)
                )
                states[slot.spec.index] = None
        return states

    def _write_health(
        self, states: Mapping[int, WorkerState | None], error: str | None = None
    ) -> None:
        workers = []
        for slot in self.slots:
            state = states.get(slot.spec.index)
            workers.append(
                WorkerHealth(
                    index=slot.spec.index,
                    pid=slot.proc.pid if slot.alive and slot.proc else None,
                    restarts=slot.restarts,
                    held=state.held if state else 0,
                    ready=slot.alive and state is not None,
                )
            )
        health = RunnerHealth(pid=os.getpid(), updated_at=time.time(), workers=workers, error=error)
        health.write(Path(self.runner_settings.health_file))

    async def _report(self) -> None:
        """GPU telemetry and per-worker pages/s, every ``telemetry_interval_s``."""
        while True:
            await asyncio.sleep(self.runner_settings.telemetry_interval_s)
            try:
                await self.report_once()
            except Exception as exc:  # a bug in reporting must not end it silently
                self.telemetry.event(
                    "telemetry_failed", level="error", error=f"{type(exc).__name__}: {exc}"
                )

    async def report_once(self) -> None:
        if self._inventory is not None:
            try:
                samples = await asyncio.to_thread(self._inventory.sample)
            except GpuError as exc:
                # Logged and counted, and the next interval tries again.
                self.nvml_errors += 1
                samples = []
                self.telemetry.metrics(
                    "nvml_error",
                    {},
                    {"NvmlErrors": (self.nvml_errors, "Count")},
                    level="error",
                    error=str(exc),
                )
            for sample in samples:
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


async def _endpoint_answers(url: str | None) -> bool:
    """Whether anything accepts a connection at ``url`` (None, AWS's, is taken to)."""
    if url is None:
        return True
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        async with asyncio.timeout(ENDPOINT_PROBE_S):
            _, writer = await asyncio.open_connection(parts.hostname, port)
    except TimeoutError:
        return True
    except OSError:
        return False
    writer.close()
    return True


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
