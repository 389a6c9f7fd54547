"""Where the cores and the memory went: per-process CPU and RSS (psutil), GPUs (pynvml).

A thread samples every ``interval_s``: RSS and CPU per process, by role, and GPU utilisation
and memory when NVML finds a GPU. :meth:`ResourceSampler.window` brackets a measured phase and
returns the CPU seconds each role used in it, from the processes' own CPU counters (exact, not
sampled), so "cores used" per role adds up to what the machine did.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psutil

from bench.pipeline.models import GpuPeak, GpuSummary, ProcessPeak, ResourceSummary, RoleCpu

# Roles of the processes of a local run, as the report names them.
HARNESS = "harness (moto + handlers)"
# The handlers' Lambda execution environments, processes of their own (embedded).
HANDLERS = "handlers (Lambda environments)"
SUPERVISOR = "supervisor"
WORKER = "worker"
CONVERTER = "converter"
OTHER = "other"
NOT_OURS = "rest of the machine"
# The bench's own plain converter and xargs runs, measured apart from the stack: not sampled.
BASELINES = "baselines"


def machine_busy_s() -> float:
    """CPU seconds every core of the machine spent busy since boot."""
    t = psutil.cpu_times()
    # Linux counts guest time inside user time, so it is not added again.
    fields = ("user", "nice", "system", "irq", "softirq", "steal")
    return float(sum(getattr(t, name, 0.0) for name in fields))


def role_of(proc: psutil.Process, harness_pid: int) -> str:
    """What a process of the run is, from its command line."""
    if proc.pid == harness_pid:
        return HARNESS
    try:
        cmdline = " ".join(proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return OTHER
    if any(
        f"-m {name}" in cmdline for name in ("bench.pipeline.baseline", "bench.pipeline.plain")
    ) or (cmdline.startswith("bash -c xargs")):
        return BASELINES
    if "embedded.environment" in cmdline:
        return HANDLERS
    if "runner.worker" in cmdline:
        return WORKER
    if "-m runner" in cmdline:
        return SUPERVISOR
    if "spawn_main" in cmdline:  # runner/conversion.py's child, started with "spawn"
        return CONVERTER
    return OTHER


@dataclass
class Window:
    """CPU seconds per process over one measured phase."""

    wall_s: float
    cpu_s: dict[int, float]
    roles: dict[int, str]
    machine_cpu_s: float  # every process on the machine, ours and other people's
    harness_threads_s: dict[str, float] = field(default_factory=dict)

    def merge(self, other: Window) -> Window:
        cpu_s = dict(self.cpu_s)
        for pid, seconds in other.cpu_s.items():
            cpu_s[pid] = cpu_s.get(pid, 0.0) + seconds
        threads = dict(self.harness_threads_s)
        for name, seconds in other.harness_threads_s.items():
            threads[name] = threads.get(name, 0.0) + seconds
        return Window(
            wall_s=self.wall_s + other.wall_s,
            cpu_s=cpu_s,
            roles={**self.roles, **other.roles},
            machine_cpu_s=self.machine_cpu_s + other.machine_cpu_s,
            harness_threads_s=threads,
        )

    def harness_split(self) -> dict[str, float]:
        """The harness's CPU seconds by thread group: the handlers' dispatcher threads, this
        harness's own threads, and the rest, which is moto serving requests (werkzeug starts
        a thread per connection, and a finished thread's time is only in the process total)."""
        total = sum(s for pid, s in self.cpu_s.items() if self.roles[pid] == HARNESS)
        split = {name: round(s, 3) for name, s in sorted(self.harness_threads_s.items())}
        split["moto server (request threads)"] = round(max(0.0, total - sum(split.values())), 3)
        return split

    def by_role(self) -> dict[str, RoleCpu]:
        """CPU seconds and mean cores per role, plus what the rest of the machine used."""
        totals: dict[str, float] = defaultdict(float)
        for pid, seconds in self.cpu_s.items():
            totals[self.roles[pid]] += seconds
        totals[NOT_OURS] = max(0.0, self.machine_cpu_s - sum(self.cpu_s.values()))
        return {
            role: RoleCpu(
                cpu_s=round(s, 3), cores=round(s / self.wall_s, 3) if self.wall_s else 0.0
            )
            for role, s in sorted(totals.items())
        }


@dataclass
class ResourceSampler:
    """Samples the harness process and the process trees of ``roots()`` (the runner)."""

    roots: Callable[[], list[int]]
    interval_s: float = 0.5
    harness_pid: int = field(default_factory=os.getpid)
    samples: list[dict[str, Any]] = field(default_factory=list)
    gpu_samples: list[dict[str, Any]] = field(default_factory=list)
    peak_rss_mb: dict[int, float] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    _procs: dict[int, psutil.Process] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _nvml: Any = None
    gpu_note: str = ""

    def start(self) -> None:
        self._nvml = _open_nvml(self)
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name="bench-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._nvml is not None:
            self._nvml.nvmlShutdown()
            self._nvml = None

    def processes(self) -> dict[int, psutil.Process]:
        """The harness and every live descendant of it and of the roots, less the bench's own
        baselines, keeping psutil objects (their CPU-percent state lives in them). One walk of
        the process table a call: a walk per subtree cost 10 ms a sample."""
        children: dict[int, list[int]] = defaultdict(list)
        for proc in psutil.process_iter(["ppid"]):
            children[proc.info["ppid"]].append(proc.pid)
        found: dict[int, psutil.Process] = {}
        pending = [self.harness_pid, *self.roots()]
        while pending:
            pid = pending.pop()
            if pid in found:
                continue
            try:
                proc = self._procs.get(pid) or psutil.Process(pid)
                if pid not in self.roles:
                    self.roles[pid] = role_of(proc, self.harness_pid)
            except psutil.NoSuchProcess:
                continue
            if self.roles[pid] == BASELINES:
                continue
            found[pid] = proc
            pending.extend(children.get(pid, []))
        self._procs = found
        return found

    def cpu_times(self) -> dict[int, float]:
        times: dict[int, float] = {}
        for pid, proc in self.processes().items():
            try:
                cpu = proc.cpu_times()
            except psutil.NoSuchProcess:
                continue
            times[pid] = cpu.user + cpu.system
        return times

    @contextmanager
    def window(self) -> Iterator[list[Window]]:
        """``with sampler.window() as out:`` -- ``out[0]`` is the phase's :class:`Window`."""
        out: list[Window] = []
        before, started, busy = self.cpu_times(), time.perf_counter(), machine_busy_s()
        threads_before = harness_threads()
        yield out
        after, wall_s = self.cpu_times(), time.perf_counter() - started
        machine_cpu_s = machine_busy_s() - busy
        threads = {name: s - threads_before.get(name, 0.0) for name, s in harness_threads().items()}
        # A process born in the phase started from zero; one that died in it is lost (the
        # workers stay up for the whole run, so nothing of theirs is).
        cpu_s = {pid: t - before.get(pid, 0.0) for pid, t in after.items()}
        out.append(Window(wall_s, cpu_s, dict(self.roles), machine_cpu_s, threads))

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample_once()
            self._stop.wait(self.interval_s)

    def sample_once(self) -> None:
        t = round(time.perf_counter() - self._started, 3)
        for pid, proc in list(self.processes().items()):
            try:
                with proc.oneshot():
                    cpu_pct = proc.cpu_percent()
                    rss_mb = proc.memory_info().rss / 2**20
            except psutil.NoSuchProcess:
                continue
            self.peak_rss_mb[pid] = max(self.peak_rss_mb.get(pid, 0.0), rss_mb)
            self.samples.append(
                {
                    "t": t,
                    "pid": pid,
                    "role": self.roles[pid],
                    "cpu_pct": cpu_pct,
                    "rss_mb": round(rss_mb, 1),
                }
            )
        if self._nvml is not None:
            self.gpu_samples.extend({"t": t, **s} for s in _gpu_sample(self._nvml))

    def summary(self) -> ResourceSummary:
        """Peak RSS and mean CPU per process and per role, and GPU peaks."""
        cpu: dict[int, list[float]] = defaultdict(list)
        for s in self.samples:
            cpu[s["pid"]].append(s["cpu_pct"])
        per_process = [
            ProcessPeak(
                pid=pid,
                role=self.roles[pid],
                peak_rss_mb=round(peak, 1),
                mean_cpu_pct=round(sum(cpu[pid]) / len(cpu[pid]), 1) if cpu[pid] else 0.0,
            )
            for pid, peak in sorted(self.peak_rss_mb.items())
        ]
        peak_by_role: dict[str, float] = defaultdict(float)
        for pid, peak in self.peak_rss_mb.items():
            role = self.roles[pid]
            peak_by_role[role] = max(peak_by_role[role], round(peak, 1))
        gpus: dict[int, GpuPeak] = {}
        for g in self.gpu_samples:
            seen = gpus.setdefault(g["index"], GpuPeak(max_util_pct=0.0, max_memory_used_mb=0.0))
            seen.max_util_pct = max(seen.max_util_pct, g["util_pct"])
            seen.max_memory_used_mb = max(seen.max_memory_used_mb, g["memory_used_mb"])
        return ResourceSummary(
            interval_s=self.interval_s,
            processes=per_process,
            peak_rss_mb_by_role=dict(sorted(peak_by_role.items())),
            gpu=GpuSummary(note=self.gpu_note, devices=gpus),
            samples=len(self.samples),
        )


def harness_threads() -> dict[str, float]:
    """CPU seconds of this process's long-lived threads, by group: ``dispatch-*`` (the
    handlers), ``MainThread`` (this harness: uploads and watching records), ``bench-sampler``."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    groups: dict[str, float] = defaultdict(float)
    for thread in psutil.Process().threads():
        name = names.get(thread.id)
        if name is not None and (name.startswith("dispatch-") or name in _OWN_THREADS):
            groups[name] += thread.user_time + thread.system_time
    return dict(groups)


_OWN_THREADS = ("MainThread", "bench-sampler")


def _open_nvml(sampler: ResourceSampler) -> Any:
    """pynvml when a GPU driver answers; None (and a note why) otherwise."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as exc:  # no library, no driver, no device: all mean "no GPU here"
        sampler.gpu_note = f"no GPU sampled: {type(exc).__name__}: {exc}"
        return None
    count = pynvml.nvmlDeviceGetCount()
    if count == 0:
        pynvml.nvmlShutdown()
        sampler.gpu_note = "no GPU sampled: NVML sees no device"
        return None
    sampler.gpu_note = f"{count} GPU(s) sampled through NVML"
    return pynvml


def _gpu_sample(nvml: Any) -> list[dict[str, Any]]:
    out = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        util = nvml.nvmlDeviceGetUtilizationRates(handle)
        memory = nvml.nvmlDeviceGetMemoryInfo(handle)
        out.append(
            {
                "index": index,
                "util_pct": float(util.gpu),
                "memory_used_mb": round(memory.used / 2**20, 1),
            }
        )
    return out
