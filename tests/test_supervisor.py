"""The supervisor with real worker processes: a small fake worker that keeps the worker contract.

The fake worker claims "chunks" (files) from a queue directory by atomic rename, holds each for
``FAKE_CONVERT_S``, reports in its state file like runner/worker/, and on SIGTERM finishes its
chunk within ``PAGEFLEET_DRAIN_TIMEOUT_S`` or releases it back to the queue, then exits 0.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp.web
import psutil
import pynvml
import pytest

from pagefleet.settings import load_settings
from runner import gpu
from runner import supervisor as supervisor_module
from runner.cli import main
from runner.gpu import GpuInfo, GpuSample
from runner.health import RunnerHealth, check_health
from runner.mps import MpsProbe
from runner.protection import RETRY_S, TaskProtection
from runner.supervisor import Supervisor
from runner.telemetry import Telemetry
from runner.worker_plan import (
    KILL_MARGIN_S,
    Host,
    RunnerSettings,
    SupervisorError,
    detect_host,
    load_runner_settings,
    ocr_server_capacity,
    plan_workers,
    restart_delay,
)
from runner.worker_state import CONFIG_ERROR_EXIT, WorkerState

if TYPE_CHECKING:
    from embedded.pipeline import LocalPipeline

FAKE_WORKER = r"""
import json, os, signal, sys, time
from pathlib import Path

root = Path(os.environ["FAKE_ROOT"])
state_file = Path(os.environ["PAGEFLEET_WORKER_STATE_FILE"])
burst = os.environ.get("PAGEFLEET_BURST") == "1"
drain_s = float(os.environ.get("PAGEFLEET_DRAIN_TIMEOUT_S", "25"))
convert_s = float(os.environ.get("FAKE_CONVERT_S", "0.02"))
(root / "env" / f"{os.getpid()}.json").write_text(json.dumps(dict(os.environ)))

if "FAKE_EXIT" in os.environ:
    sys.exit(int(os.environ["FAKE_EXIT"]))
fail_mark = root / f"failed-{os.environ['PAGEFLEET_WORKER_INDEX']}"
if os.environ.get("FAKE_FAIL_ONCE") and not fail_mark.exists():
    fail_mark.touch()
    sys.exit(3)

stop_at = None
def on_term(signum, frame):
    global stop_at
    stop_at = time.monotonic()
signal.signal(signal.SIGTERM, signal.SIG_IGN if os.environ.get("FAKE_IGNORE_TERM") else on_term)

state = {"pid": os.getpid(), "held": 0, "chunks_done": 0, "pages_done": 0, "convert_s": 0.0}
def save():
    tmp = state_file.with_name(state_file.name + ".tmp")
    tmp.write_text(json.dumps({**state, "updated_at": time.time()}))
    tmp.replace(state_file)

def claim():
    for name in sorted(os.listdir(root / "queue")):
        try:
            os.rename(root / "queue" / name, root / "inflight" / name)
            return name
        except FileNotFoundError:
            continue  # another worker took it
    return None

save()
while stop_at is None:
    name = claim()
    if name is None:
        if burst:
            sys.exit(0)
        time.sleep(0.02)  # stands for SQS long polling
        continue
    state["held"] = 1
    save()
    started = time.monotonic()
    while time.monotonic() - started < convert_s:
        if stop_at is not None and time.monotonic() - stop_at >= drain_s:
            break
        time.sleep(0.01)  # stands for converting
    if time.monotonic() - started >= convert_s:
        os.rename(root / "inflight" / name, root / "done" / name)
        state["chunks_done"] += 1
        state["pages_done"] += int((root / "done" / name).read_text())
        state["convert_s"] += time.monotonic() - started
    else:
        os.rename(root / "inflight" / name, root / "queue" / name)  # released
    state["held"] = 0
    save()
"""


class FakeInventory:
    def __init__(self, gpus: list[GpuInfo]) -> None:
        self._gpus = gpus
        self.closed = False

    def gpus(self) -> list[GpuInfo]:
        return self._gpus

    def sample(self) -> list[GpuSample]:
        return [
            GpuSample(g.index, g.uuid, 50, g.memory_total_mb // 2, g.memory_total_mb, 120.5)
            for g in self._gpus
        ]

    def close(self) -> None:
        self.closed = True


def gpu_info(index: int, free_mb: int, total_mb: int = 81559) -> GpuInfo:
    return GpuInfo(index, f"GPU-{index:08d}-fake", "NVIDIA H100 80GB HBM3", total_mb, free_mb)


class Sink(io.StringIO):
    def events(self, name: str | None = None) -> list[dict]:
        records = [json.loads(line) for line in self.getvalue().splitlines()]
        return [r for r in records if name is None or r["event"] == name]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for sub in ("queue", "inflight", "done", "env"):
        (tmp_path / sub).mkdir()
    (tmp_path / "fake_worker.py").write_text(FAKE_WORKER)
    return tmp_path


def add_chunks(root: Path, count: int, pages: int = 4) -> list[str]:
    names = [f"chunk-{i:03d}" for i in range(count)]
    for name in names:
        (root / "queue" / name).write_text(str(pages))
    return names


def listing(root: Path, sub: str) -> list[str]:
    return sorted(os.listdir(root / sub))


def worker_envs(root: Path) -> list[dict[str, str]]:
    return [json.loads(p.read_text()) for p in sorted((root / "env").iterdir())]


def make_supervisor(
    root: Path,
    *,
    workers: int = 2,
    burst: bool = False,
    inventory=None,
    env: dict[str, str] | None = None,
    drain_timeout_s: float = 5.0,
    mps_probe=None,
    host: Host | None = None,
    **runner_settings: object,
) -> tuple[Supervisor, Sink]:
    sink = Sink()
    settings = load_settings(workers=workers, burst=burst, drain_timeout_s=drain_timeout_s)
    runner_settings.setdefault("health_file", str(root / "health.json"))
    runner_settings.setdefault("restart_backoff_s", 0.05)
    extra_env = {
        "FAKE_ROOT": str(root),
        "PAGEFLEET_BURST": "1" if burst else "0",
        "PAGEFLEET_DRAIN_TIMEOUT_S": str(drain_timeout_s),
        **(env or {}),
    }
    supervisor = Supervisor(
        settings,
        load_runner_settings(**runner_settings),
        worker_argv=[sys.executable, str(root / "fake_worker.py")],
        extra_env=extra_env,
        inventory=inventory or (lambda: (None, "test: no NVML")),
        mps_probe=mps_probe or _probe(False, "no probe expected")[0],
        host=host,
        telemetry=Telemetry(sink),
        handle_signals=False,
    )
    return supervisor, sink


# --- deciding W and each worker's environment ---

# A g6.xlarge-like host: 4 vCPUs, 14 GiB available after the vLLM sidecar took its share.
HOST = Host(cpu_count=4, memory_mb=14336)


def test_w_from_free_gpu_memory_for_gpu_ocr_workers(tmp_path: Path) -> None:
    inventory = FakeInventory([gpu_info(0, 80000), gpu_info(1, 20000), gpu_info(2, 5000)])
    runner_settings = RunnerSettings(worker_gpu_memory_mb=7168, max_workers_per_gpu=8, mps="off")
    plan = plan_workers(load_settings(), runner_settings, inventory, tmp_path, HOST)
    # 80000 // 7168 = 11, capped at 8; 20000 // 7168 = 2; GPU 2 cannot hold one worker.
    assert [spec.gpu.index for spec in plan.specs if spec.gpu] == [0] * 8 + [1] * 2
    assert any("GPU 2" in note and "no workers" in note for note in plan.notes)
    assert [spec.index for spec in plan.specs] == list(range(10))
    assert {sizing.limited_by for _, sizing in plan.sizings} == {"gpu memory"}


def test_w_from_setting_overrides_memory(tmp_path: Path) -> None:
    inventory = FakeInventory([gpu_info(0, 1000), gpu_info(1, 80000)])
    runner_settings = RunnerSettings(workers_per_gpu=3, mps="off")
    plan = plan_workers(load_settings(), runner_settings, inventory, tmp_path, HOST)
    assert [spec.gpu.index for spec in plan.specs if spec.gpu] == [0, 0, 0, 1, 1, 1]


# Each row: converter settings, host -> W, what limited it, OCR requests per worker and in flight
# in all, and each worker's threads. marker: W = physical cores - 2 (marker's CLI rule; every EC2
# GPU type has 2 threads a core) and memory // (1536 MB measured per conversion process + 256 MB
# per worker) after 2048 MB for the spawned servers, capped at 8; threads max(2, cores // W). The
# OCR server takes surya's max-num-seqs for the GPU type (24 GB: 32, 80 GB: 104, 141 GB: 184)
# and all workers keep 1.5x that in flight.
SIZING_TABLE = [
    # marker on one-GPU instances: W from physical cores and memory, never from GPU memory
    ({"marker_vllm_gpu_type": "l4"}, Host(4, 14336, 2), 1, "cpu", 48, 48, 2),  # g6.xlarge
    ({"marker_vllm_gpu_type": "l4"}, Host(8, 30000, 2), 2, "cpu", 24, 48, 2),  # g6.2xlarge
    ({"marker_vllm_gpu_type": "l4"}, Host(16, 60000, 2), 6, "cpu", 8, 48, 2),  # g6.4xlarge
    ({"marker_vllm_gpu_type": "l4"}, Host(32, 120000, 2), 8, "cap", 6, 48, 2),  # g6.8xlarge
    ({"marker_vllm_gpu_type": "a10"}, Host(16, 7000, 2), 2, "memory", 24, 48, 4),  # tight memory
    ({"marker_vllm_gpu_type": "h100"}, Host(8, 60000), 6, "cpu", 26, 156, 2),  # no SMT: 8 cores
    ({"marker_vllm_gpu_type": "h200"}, Host(2, 8000), 1, "cpu", 276, 276, 2),  # 2 cores: 1 worker
    ({}, Host(4, 14336, 2), 1, "cpu", 48, 48, 2),  # no GPU type: surya's 4090 profile
    ({"marker_vllm_gpu_type": "mi300"}, Host(4, 14336, 2), 1, "cpu", 12, 12, 2),  # unknown: 8
    (
        {"marker_vllm_gpu_type": "l4", "marker_inference_parallel": 5, "convert_threads": 3},
        Host(8, 30000, 2),
        2,
        "cpu",
        5,
        10,
        3,
    ),
    ({"marker_disable_ocr": True}, Host(8, 30000, 2), 2, "cpu", None, None, 2),  # no OCR server
]


@pytest.mark.parametrize(
    ("overrides", "host", "workers", "limited_by", "per_worker", "total", "threads"),
    SIZING_TABLE,
)
def test_marker_sizing_on_a_one_gpu_instance(
    tmp_path: Path,
    overrides: dict[str, object],
    host: Host,
    workers: int,
    limited_by: str,
    per_worker: int | None,
    total: int | None,
    threads: int,
) -> None:
    settings = load_settings(converter="marker", **overrides)
    gpu = gpu_info(0, 81000)
    plan = plan_workers(settings, RunnerSettings(mps="off"), FakeInventory([gpu]), tmp_path, host)
    ((sized_gpu, sizing),) = plan.sizings
    assert sized_gpu == gpu
    assert (sizing.workers, sizing.limited_by) == (workers, limited_by)
    assert (sizing.inference_parallel, sizing.ocr_in_flight) == (per_worker, total)
    assert len(plan.specs) == workers
    for spec in plan.specs:
        assert spec.env["CUDA_VISIBLE_DEVICES"] == gpu.uuid  # the servers it spawns: this GPU
        assert spec.env["PAGEFLEET_CONVERT_THREADS"] == str(threads)
        if per_worker is None:
            assert "PAGEFLEET_MARKER_INFERENCE_PARALLEL" not in spec.env
        else:
            assert spec.env["PAGEFLEET_MARKER_INFERENCE_PARALLEL"] == str(per_worker)


def test_marker_ocr_concurrency_matches_the_servers_own_sizing() -> None:
    # surya's _gpu_settings(): max(8, int(32 * vram / 24) // 8 * 8) concurrent sequences.
    assert [ocr_server_capacity(t) for t in ("t4", "l4", "l40s", "h100", "h200", "b200")] == [
        16,
        32,
        64,
        104,
        184,
        240,
    ]
    assert ocr_server_capacity(None) == ocr_server_capacity("4090") == 32


def test_marker_refuses_several_gpus_instead_of_using_gpu_0_for_all(tmp_path: Path) -> None:
    settings = load_settings(converter="marker", marker_vllm_gpu_type="a100")
    inventory = FakeInventory([gpu_info(i, 40000) for i in range(8)])  # a p4d.24xlarge
    with pytest.raises(SupervisorError, match=r"8 GPUs.*one runner per GPU.*PAGEFLEET_GPUS"):
        plan_workers(settings, RunnerSettings(mps="off"), inventory, tmp_path, HOST)
    # One GPU chosen: its workers, and what they spawn, are pinned to it.
    plan = plan_workers(
        settings, RunnerSettings(mps="off", gpus="5"), inventory, tmp_path, Host(8, 60000)
    )
    assert {spec.env["CUDA_VISIBLE_DEVICES"] for spec in plan.specs} == {gpu_info(5, 0).uuid}
    assert len(plan.specs) == 6


def test_gpu_ocr_workers_on_several_gpus_each_stay_on_theirs(tmp_path: Path) -> None:
    inventory = FakeInventory([gpu_info(0, 20000), gpu_info(1, 20000)])
    runner_settings = RunnerSettings(worker_gpu_memory_mb=8000, mps="off")
    plan = plan_workers(load_settings(), runner_settings, inventory, tmp_path, HOST)
    assert [spec.env["CUDA_VISIBLE_DEVICES"] for spec in plan.specs] == [
        gpu_info(0, 0).uuid,
        gpu_info(0, 0).uuid,
        gpu_info(1, 0).uuid,
        gpu_info(1, 0).uuid,
    ]


@pytest.mark.parametrize(
    ("workers", "host", "expected", "limited_by", "threads"),
    [
        (0, Host(2, 24000), 2, "cpu", 1),  # this machine's kind: one worker per core
        (0, Host(16, 9000), 2, "memory", 8),  # many cores, little memory
        (0, Host(1, 100), 1, "cpu", 1),  # never zero
        (3, Host(2, 24000), 3, "setting", 1),  # PAGEFLEET_WORKERS wins
    ],
)
def test_cpu_only_host_sizing(
    tmp_path: Path, workers: int, host: Host, expected: int, limited_by: str, threads: int
) -> None:
    plan = plan_workers(load_settings(workers=workers), RunnerSettings(), None, tmp_path, host)
    ((gpu, sizing),) = plan.sizings
    assert gpu is None
    assert (sizing.workers, sizing.limited_by, sizing.threads) == (expected, limited_by, threads)
    assert sizing.inference_parallel is None
    assert all(spec.env["PAGEFLEET_CONVERT_THREADS"] == str(threads) for spec in plan.specs)


def test_detected_host_is_plausible() -> None:
    host = detect_host()
    assert 1 <= host.cpu_count <= (os.cpu_count() or 1)
    assert 1 <= host.threads_per_core <= 8 and 1 <= host.physical_cores <= host.cpu_count
    assert 0 < host.memory_mb <= psutil.virtual_memory().total // 2**20


def test_gpus_setting_picks_gpus_by_index_or_uuid(tmp_path: Path) -> None:
    inventory = FakeInventory([gpu_info(0, 80000), gpu_info(1, 80000), gpu_info(2, 80000)])
    runner_settings = RunnerSettings(workers_per_gpu=1, mps="off", gpus=f"2, {gpu_info(0, 0).uuid}")
    plan = plan_workers(load_settings(), runner_settings, inventory, tmp_path, HOST)
    assert [spec.gpu.index for spec in plan.specs if spec.gpu] == [0, 2]
    with pytest.raises(SupervisorError, match=r"\['7'\]"):
        plan_workers(
            load_settings(),
            runner_settings.model_copy(update={"gpus": "1,7"}),
            inventory,
            tmp_path,
            HOST,
        )


def test_no_gpu_with_room_is_an_error(tmp_path: Path) -> None:
    inventory = FakeInventory([gpu_info(0, 4000)])
    runner_settings = RunnerSettings(worker_gpu_memory_mb=7168, mps="off")
    with pytest.raises(SupervisorError, match="WORKER_GPU_MEMORY_MB"):
        plan_workers(load_settings(), runner_settings, inventory, tmp_path, HOST)


def _daemon(pipe: Path) -> Path:
    pipe.mkdir(parents=True)
    (pipe / "control").touch()
    return pipe


def test_worker_env_with_mps(tmp_path: Path) -> None:
    gpus = [gpu_info(0, 80000), gpu_info(1, 80000)]
    pipe = _daemon(tmp_path / "mps")  # one daemon for the instance, every GPU
    runner_settings = RunnerSettings(workers_per_gpu=3, mps="auto", mps_dir=str(pipe))
    plan = plan_workers(
        load_settings(), runner_settings, FakeInventory(gpus), tmp_path / "state", HOST
    )
    assert plan.mps_pipe == pipe
    for spec in plan.specs:
        assert spec.env["CUDA_VISIBLE_DEVICES"] == spec.gpu.uuid
        assert spec.env["CUDA_MPS_PIPE_DIRECTORY"] == str(pipe)
        assert spec.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == str(math.ceil(200 / 3))
    assert [spec.gpu.index for spec in plan.specs] == [0, 0, 0, 1, 1, 1]
    state_files = {spec.env["PAGEFLEET_WORKER_STATE_FILE"] for spec in plan.specs}
    assert len(state_files) == len(plan.specs)
    assert all(Path(f).parent == tmp_path / "state" for f in state_files)
    # No daemon there: auto runs without MPS.
    (pipe / "control").unlink()
    plan = plan_workers(load_settings(), runner_settings, FakeInventory(gpus), tmp_path, HOST)
    assert plan.mps_pipe is None
    assert not any("CUDA_MPS_PIPE_DIRECTORY" in spec.env for spec in plan.specs)


def test_marker_workers_join_mps_without_a_thread_limit(tmp_path: Path) -> None:
    pipe = _daemon(tmp_path / "mps")
    settings = load_settings(converter="marker")
    plan = plan_workers(
        settings,
        RunnerSettings(mps_dir=str(pipe)),
        FakeInventory([gpu_info(0, 80000)]),
        tmp_path,
        HOST,
    )
    for spec in plan.specs:
        assert spec.env["CUDA_MPS_PIPE_DIRECTORY"] == str(pipe)
        # The worker runs no kernel; a limit would only cap the layout server it spawns.
        assert "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" not in spec.env


def test_thread_percentage_setting_and_single_worker(tmp_path: Path) -> None:
    pipe = _daemon(tmp_path / "mps")
    gpus = [gpu_info(0, 80000)]
    one = RunnerSettings(workers_per_gpu=1, mps_dir=str(pipe))
    fixed = RunnerSettings(workers_per_gpu=4, mps_dir=str(pipe), mps_active_thread_percentage=25)
    plan = plan_workers(load_settings(), one, FakeInventory(gpus), tmp_path, HOST)
    assert plan.specs[0].env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "100"
    plan = plan_workers(load_settings(), fixed, FakeInventory(gpus), tmp_path, HOST)
    assert {s.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] for s in plan.specs} == {"25"}


def test_mps_on_without_daemon_is_an_error(tmp_path: Path) -> None:
    runner_settings = RunnerSettings(workers_per_gpu=1, mps="on", mps_dir=str(tmp_path / "none"))
    with pytest.raises(SupervisorError, match=r"nvidia-mps\.service.*start_mps\.sh"):
        plan_workers(
            load_settings(), runner_settings, FakeInventory([gpu_info(0, 80000)]), tmp_path, HOST
        )


# --- the first log line: MPS as a client found it ---


def _probe(ok: bool, detail: str):
    calls: list[tuple[Path, str]] = []

    def probe(pipe: Path, gpu: GpuInfo) -> MpsProbe:
        calls.append((pipe, gpu.uuid))
        return MpsProbe(ok, detail, "4242" if ok else "")

    return probe, calls


async def test_first_log_line_says_the_mps_client_connected(root: Path) -> None:
    pipe = _daemon(root / "mps")
    inventory = FakeInventory([gpu_info(0, 80000)])
    probe, calls = _probe(True, "CUDA context created through the MPS daemon")
    supervisor, sink = make_supervisor(
        root,
        burst=True,
        inventory=lambda: (inventory, "fake"),
        workers_per_gpu=2,
        mps="on",
        mps_dir=str(pipe),
        mps_probe=probe,
    )
    assert await supervisor.run() == 0
    first = sink.events()[0]
    assert first["event"] == "runner_start"
    assert first["mps"] == f"on, client connected via {pipe}"
    assert first["sizing"][0]["workers"] == 2 and first["sizing"][0]["limited_by"] == "setting"
    assert calls == [(pipe, inventory.gpus()[0].uuid)]
    assert {e["CUDA_MPS_PIPE_DIRECTORY"] for e in worker_envs(root)} == {str(pipe)}


async def test_mps_client_that_cannot_connect(root: Path) -> None:
    pipe = _daemon(root / "mps")
    inventory = FakeInventory([gpu_info(0, 80000)])
    probe, _ = _probe(False, "cuDevicePrimaryCtxRetain: CUDA_ERROR_MPS_CONNECTION_FAILED (805)")
    # on: refuse to start, saying why.
    supervisor, sink = make_supervisor(
        root,
        burst=True,
        inventory=lambda: (inventory, "fake"),
        workers_per_gpu=1,
        mps="on",
        mps_dir=str(pipe),
        mps_probe=probe,
    )
    assert await supervisor.run() == 2
    (failed,) = sink.events("supervisor_failed")
    assert "(805)" in failed["error"] and "Same UID" in failed["error"]
    assert worker_envs(root) == []
    # auto: run without MPS, and say so first.
    supervisor, sink = make_supervisor(
        root,
        burst=True,
        inventory=lambda: (inventory, "fake"),
        workers_per_gpu=1,
        mps="auto",
        mps_dir=str(pipe),
        mps_probe=probe,
    )
    assert await supervisor.run() == 0
    start = sink.events()[0]
    assert start["event"] == "runner_start" and start["level"] == "warning"
    assert start["mps"].startswith(f"off (daemon at {pipe} unusable: GPU 0")
    assert all("CUDA_MPS_PIPE_DIRECTORY" not in e for e in worker_envs(root))


async def test_workers_receive_their_environment(root: Path) -> None:
    inventory = FakeInventory([gpu_info(0, 80000)])
    supervisor, _ = make_supervisor(
        root, burst=True, inventory=lambda: (inventory, "fake"), workers_per_gpu=2, mps="off"
    )
    assert await supervisor.run() == 0
    envs = worker_envs(root)
    assert len(envs) == 2
    assert {e["CUDA_VISIBLE_DEVICES"] for e in envs} == {inventory.gpus()[0].uuid}
    assert sorted(e["PAGEFLEET_WORKER_INDEX"] for e in envs) == ["0", "1"]
    assert all(e["FAKE_ROOT"] == str(root) for e in envs)
    assert inventory.closed


# --- CPU mode ---


def test_nvml_library_missing_means_cpu_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library() -> None:
        raise pynvml.NVMLError_LibraryNotFound()

    monkeypatch.setattr(pynvml, "nvmlInit", no_library)
    inventory, reason = gpu.open_inventory()
    assert inventory is None
    assert "LibraryNotFound" in reason


async def test_cpu_mode_runs_settings_workers_and_says_so_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_library() -> None:
        raise pynvml.NVMLError_LibraryNotFound()

    monkeypatch.setattr(pynvml, "nvmlInit", no_library)
    add_chunks(root, 9)
    supervisor, sink = make_supervisor(
        root, workers=3, burst=True, inventory=gpu.open_inventory, env={"FAKE_FAIL_ONCE": "1"}
    )
    assert await supervisor.run() == 0
    # Every worker failed once and was restarted; the CPU-mode line still appears once.
    assert [slot.exit_codes for slot in supervisor.slots] == [[3, 0]] * 3
    notes = [e["note"] for e in sink.events("plan")]
    threads = max(1, (os.cpu_count() or 1) // 3)
    assert notes == [f"no GPU: running 3 CPU workers, {threads} threads each"]
    assert sink.events("plan")[0]["inventory"].startswith("NVML unavailable")
    assert all(e["CUDA_VISIBLE_DEVICES"] == "" for e in worker_envs(root))
    assert all(e["PAGEFLEET_CONVERT_THREADS"] == str(threads) for e in worker_envs(root))
    assert listing(root, "done") == [f"chunk-{i:03d}" for i in range(9)]


async def test_cpu_mode_defaults_to_one_worker_per_core(root: Path) -> None:
    cores = os.cpu_count() or 1
    supervisor, _ = make_supervisor(root, workers=0, burst=True, host=Host(cores, 10**6))
    assert await supervisor.run() == 0
    assert len(supervisor.slots) == cores


# --- restarts and burst ---


async def test_killed_worker_is_restarted(root: Path) -> None:
    supervisor, sink = make_supervisor(root, workers=2)
    run = asyncio.create_task(supervisor.run())
    await wait_ready(supervisor)
    first, other = supervisor.slots
    pid = await first.wait_running()
    other_pid = await other.wait_running()
    os.kill(pid, signal.SIGKILL)
    new_pid = await asyncio.wait_for(first.wait_running(not_pid=pid), 10)

    assert new_pid != pid
    assert first.exit_codes == [-signal.SIGKILL]
    assert first.restarts == 1
    assert other.proc is not None and other.proc.pid == other_pid and other.exit_codes == []
    (restart,) = sink.events("worker_restart")
    assert restart["worker"] == 0 and restart["delay_s"] == 0.05

    supervisor.stop(drain=True)
    assert await asyncio.wait_for(run, 10) == 0
    # The new worker may still be starting, before its SIGTERM handler exists: holding nothing,
    # it dies of the signal itself.
    assert first.exit_codes[-1] in (0, -signal.SIGTERM)
    assert other.exit_codes == [0]


async def test_restart_backoff_grows_until_stopped(root: Path) -> None:
    # The cap is well above a fake worker's life even on a loaded machine: a worker that
    # outlives it counts as failing afresh, which would restart the sequence.
    supervisor, sink = make_supervisor(
        root, workers=1, env={"FAKE_EXIT": "7"}, restart_backoff_s=0.05, restart_backoff_max_s=2.0
    )
    run = asyncio.create_task(supervisor.run())
    while not supervisor.slots:
        await asyncio.sleep(0)
    (slot,) = supervisor.slots
    pid = None
    for _ in range(5):
        pid = await asyncio.wait_for(slot.wait_running(not_pid=pid), 10)
    supervisor.stop()
    assert await asyncio.wait_for(run, 10) == 0
    delays = [e["delay_s"] for e in sink.events("worker_restart")]
    assert delays[:4] == [0.05, 0.1, 0.2, 0.4]
    assert set(slot.exit_codes[:-1]) == {7}
    assert slot.exit_codes[-1] in (7, -signal.SIGTERM)  # the last may die starting up


def test_restart_delay_is_exponential_and_capped() -> None:
    runner_settings = RunnerSettings(restart_backoff_s=1.0, restart_backoff_max_s=60.0)
    assert [restart_delay(n, runner_settings) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]


async def test_burst_exits_once_all_workers_exit_zero(root: Path) -> None:
    names = add_chunks(root, 12)
    supervisor, sink = make_supervisor(root, workers=3, burst=True)
    assert await asyncio.wait_for(supervisor.run(), 30) == 0
    # Workers exiting 0 in burst mode are not restarted.
    assert [slot.exit_codes for slot in supervisor.slots] == [[0], [0], [0]]
    assert not sink.events("worker_restart")
    assert listing(root, "done") == names
    assert listing(root, "queue") == listing(root, "inflight") == []


async def test_worker_that_cannot_start_stops_the_supervisor(root: Path) -> None:
    supervisor, sink = make_supervisor(root, workers=2)
    supervisor.worker_argv = [str(root / "no-such-worker")]
    assert await asyncio.wait_for(supervisor.run(), 10) == 2
    assert "no-such-worker" in sink.events("worker_failed")[0]["error"]


async def test_a_worker_exiting_on_a_configuration_error_is_not_restarted(root: Path) -> None:
    """Exit code 78: its converter cannot be imported, so every restart would fail the same
    way. The supervisor stops instead, says so once, and leaves the reason for `--check`."""
    supervisor, sink = make_supervisor(root, workers=2, env={"FAKE_EXIT": str(CONFIG_ERROR_EXIT)})
    assert await asyncio.wait_for(supervisor.run(), 10) == 2
    assert not sink.events("worker_restart")
    (failed,) = sink.events("worker_failed")
    assert "configuration error (exit code 78)" in failed["error"]
    # Each worker ran once at most: the failed one exited 78; the other, stopped with it, ended
    # however the stop found it under load (78 too, SIGTERM, or SIGKILL at the deadline).
    codes = [slot.exit_codes for slot in supervisor.slots]
    assert [78] in codes and all(len(c) <= 1 for c in codes), codes
    health = RunnerHealth.read(root / "health.json")
    assert health is not None and health.error == failed["error"]
    assert check_health(root / "health.json") == (False, f"the runner stopped: {failed['error']}")


# --- drain ---


async def test_stragglers_are_killed_at_the_deadline(root: Path) -> None:
    supervisor, sink = make_supervisor(
        root, workers=2, env={"FAKE_IGNORE_TERM": "1"}, stop_timeout_s=KILL_MARGIN_S + 1.0
    )
    run = asyncio.create_task(supervisor.run())
    await wait_ready(supervisor)
    started = time.monotonic()
    supervisor.stop(drain=True)
    assert await asyncio.wait_for(run, 10) == 1
    assert 0.9 <= time.monotonic() - started < 5
    assert [slot.exit_codes for slot in supervisor.slots] == [[-signal.SIGKILL]] * 2
    assert len(sink.events("worker_killed")) == 2


async def test_stop_without_drain_kills_at_once(root: Path) -> None:
    supervisor, _ = make_supervisor(root, workers=1, env={"FAKE_IGNORE_TERM": "1"})
    run = asyncio.create_task(supervisor.run())
    await wait_ready(supervisor)
    supervisor.stop(drain=False)
    assert await asyncio.wait_for(run, 5) == 1
    assert supervisor.slots[0].exit_codes == [-signal.SIGKILL]


async def wait_ready(supervisor: Supervisor) -> None:
    """Until every worker wrote its state file, i.e. has its signal handlers in place."""
    while not supervisor.slots:  # run() plans before its first await on a worker
        await asyncio.sleep(0)
    for slot in supervisor.slots:
        await slot.wait_running()
    deadline = time.monotonic() + 30
    # Files written by other processes: nothing to await, so poll.
    while any(WorkerState.read(slot.spec.state_file) is None for slot in supervisor.slots):
        assert time.monotonic() < deadline, "workers never wrote their state files"
        await asyncio.sleep(0.02)


async def test_cancelled_supervisor_leaves_no_worker_behind(root: Path) -> None:
    supervisor, _ = make_supervisor(root, workers=2, env={"FAKE_IGNORE_TERM": "1"})
    run = asyncio.create_task(supervisor.run())
    await wait_ready(supervisor)
    pids = [slot.proc.pid for slot in supervisor.slots if slot.proc]
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    for pid in pids:
        with pytest.raises(ProcessLookupError):  # killed and reaped
            os.kill(pid, 0)


def wait_for_files(path: Path, count: int, timeout_s: float) -> list[str]:
    """Another process's files: nothing to await, so poll until the deadline."""
    deadline = time.monotonic() + timeout_s
    while len(names := sorted(os.listdir(path))) < count:
        assert time.monotonic() < deadline, f"{path} has {names}, expected {count} entries"
        time.sleep(0.02)
    return names


@pytest.mark.parametrize(
    ("convert_s", "drain_s", "held_end_in"),
    [(1.5, 10.0, "done"), (60.0, 0.5, "queue")],
    ids=["finish-within-drain", "release-after-drain"],
)
def test_sigterm_drains_without_losing_a_chunk(
    root: Path, convert_s: float, drain_s: float, held_end_in: str
) -> None:
    """`python -m runner` as ECS runs it: SIGTERM to the supervisor, workers drain, exit 0."""
    names = add_chunks(root, 20)
    proc = _python_m_runner(root, convert_s=convert_s, drain_s=drain_s)
    try:
        held = wait_for_files(root / "inflight", 2, timeout_s=30)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    _drained(proc, out, root, names)
    assert set(held) <= set(listing(root, held_end_in))


def test_the_runner_drains_and_stops_once_its_parent_is_gone(root: Path) -> None:
    """The process that started the runner died, kill -9 included (no signal reaches the
    runner, which lives on in a session of its own): its end of PAGEFLEET_PARENT_FD's pipe
    closes, and the runner drains and exits as on SIGTERM."""
    names = add_chunks(root, 20)
    watched, parent_end = os.pipe()
    proc = _python_m_runner(
        root, convert_s=1.5, drain_s=10.0, parent_fd=watched, pass_fds=(watched,)
    )
    os.close(watched)  # the runner's end
    try:
        wait_for_files(root / "inflight", 2, timeout_s=30)
        os.close(parent_end)  # what the parent's death does to its end
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    events = _drained(proc, out, root, names)
    assert [e["event"] for e in events if e["event"] in ("parent_gone", "draining")] == [
        "parent_gone",
        "draining",
    ]


def _python_m_runner(
    root: Path,
    *,
    convert_s: float,
    drain_s: float,
    parent_fd: int | None = None,
    pass_fds: tuple[int, ...] = (),
    endpoint: str | None = None,
) -> subprocess.Popen[str]:
    """`python -m runner` as ECS runs it, two fake workers, its log on a pipe."""
    env = {
        **os.environ,
        "FAKE_ROOT": str(root),
        "FAKE_CONVERT_S": str(convert_s),
        "PAGEFLEET_WORKERS": "2",
        "PAGEFLEET_WORKERS_PER_GPU": "2",
        "PAGEFLEET_MPS": "off",
        "PAGEFLEET_DRAIN_TIMEOUT_S": str(drain_s),
        "PAGEFLEET_STOP_TIMEOUT_S": "30",
        "PAGEFLEET_HEALTH_FILE": str(root / "health.json"),
    }
    env.pop("ECS_AGENT_URI", None)
    if parent_fd is not None:
        env["PAGEFLEET_PARENT_FD"] = str(parent_fd)
    if endpoint is not None:
        env["PAGEFLEET_ENDPOINT_URL"] = endpoint
    cmd = [sys.executable, "-m", "runner", "--", sys.executable, str(root / "fake_worker.py")]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True, pass_fds=pass_fds)


def _drained(proc: subprocess.Popen[str], out: str, root: Path, names: list[str]) -> list[dict]:
    """The runner's log, once it is certain the runner drained: exit 0, no chunk lost, each
    worker ended cleanly and none was restarted."""
    assert proc.returncode == 0, out
    assert listing(root, "inflight") == []
    assert sorted(listing(root, "done") + listing(root, "queue")) == names
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["exit_code"] for e in events if e["event"] == "worker_exited"] == [0, 0]
    assert not [e for e in events if e["event"] == "worker_restart"]
    return events


def test_the_runner_stops_at_once_when_its_parent_took_the_endpoint_with_it(root: Path) -> None:
    """`pagefleet run` killed (SIGTERM, which it leaves to its default) takes its embedded
    server with it: nothing answers at the endpoint, and a drain would hold the workers and
    their chunks until its deadline for calls that can only fail. So the runner kills them."""
    names = add_chunks(root, 20)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{free.getsockname()[1]}"  # closed: nothing listens there
    watched, parent_end = os.pipe()
    proc = _python_m_runner(
        root, convert_s=60, drain_s=10, parent_fd=watched, pass_fds=(watched,), endpoint=gone
    )
    os.close(watched)
    try:
        held = wait_for_files(root / "inflight", 2, timeout_s=30)
        os.close(parent_end)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 1, out
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events if e["event"] in ("parent_gone", "draining", "killing")] == [
        "parent_gone",
        "killing",
    ]
    assert [e["exit_code"] for e in events if e["event"] == "worker_exited"] == [-9, -9]
    assert listing(root, "inflight") == held  # not drained: on SQS their leases bring them back
    assert sorted(listing(root, "queue") + held) == names


def test_an_unavailable_converter_stops_the_runner_once_before_any_worker(root: Path) -> None:
    """PAGEFLEET_CONVERTER=marker without marker-pdf: one line saying what is missing and the
    fix, exit 2, the reason in the health file; no worker started only to crash-loop."""
    if importlib.util.find_spec("marker") is not None:
        pytest.skip("marker-pdf is installed here")
    health = root / "health.json"
    env = {
        **os.environ,
        "FAKE_ROOT": str(root),
        "PAGEFLEET_CONVERTER": "marker",
        "PAGEFLEET_HEALTH_FILE": str(health),
    }
    cmd = [sys.executable, "-m", "runner", "--", sys.executable, str(root / "fake_worker.py")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stderr == ""
    (line,) = done.stdout.splitlines()
    event = json.loads(line)
    said = "converter marker needs marker-pdf: pip install 'pagefleet[marker]'"
    assert (event["event"], event["level"], event["error"]) == ("supervisor_failed", "error", said)
    assert listing(root, "env") == []  # no worker ran
    assert check_health(health) == (False, f"the runner stopped: {said}")


def test_settings_that_cannot_hold_a_lease_stop_the_runner_at_start(root: Path) -> None:
    """Refused once, in one line, before any worker starts: no crash loop, no traceback."""
    env = {**os.environ, "FAKE_ROOT": str(root), "PAGEFLEET_VISIBILITY_TIMEOUT_S": "5"}
    cmd = [sys.executable, "-m", "runner", "--", sys.executable, str(root / "fake_worker.py")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr == ""
    (line,) = done.stdout.splitlines()
    event = json.loads(line)
    assert (event["event"], event["level"]) == ("supervisor_failed", "error")
    said = "PAGEFLEET_HEARTBEAT_S (20) must be at most half of PAGEFLEET_VISIBILITY_TIMEOUT_S (5)"
    assert said in event["error"]
    assert listing(root, "env") == []  # no worker ran


# --- health check ---


async def test_health_file_and_check(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    health = root / "health.json"
    monkeypatch.setenv("PAGEFLEET_HEALTH_FILE", str(health))
    assert main(["--check"]) == 1  # no supervisor yet
    supervisor, _ = make_supervisor(root, workers=2)
    run = asyncio.create_task(supervisor.run())
    await wait_ready(supervisor)
    deadline = time.monotonic() + 5
    # Another process's file, rewritten as the supervisor polls its workers: wait for a write
    # that shows both workers warm.
    while (written := RunnerHealth.read(health)) is None or written.ready_workers < 2:
        assert time.monotonic() < deadline, written
        await asyncio.sleep(0.02)
    assert [(w.index, w.pid, w.held) for w in written.workers] == [
        (slot.spec.index, slot.proc.pid if slot.proc else None, 0) for slot in supervisor.slots
    ]
    assert check_health(health) == (True, "2 of 2 workers running")
    assert await asyncio.to_thread(main, ["--check"]) == 0
    supervisor.stop()
    await run
    ok, reason = check_health(health)
    assert not ok and reason == "no worker running of 2"
    final = RunnerHealth.read(health)
    assert final is not None and final.ready_workers == 0
    ok, reason = check_health(health, max_age_s=-1)
    assert not ok and "old" in reason


# --- scale-in protection ---


class FakeAgent:
    """The ECS agent's task protection endpoint, over real HTTP."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.called = asyncio.Event()
        self.fail = False

    async def handle(self, request: aiohttp.web.Request) -> aiohttp.web.Response:
        body = await request.json()
        self.bodies.append(body)
        self.called.set()
        if self.fail:
            return aiohttp.web.json_response(
                {"failure": {"Arn": "arn:task", "Reason": "TASK_NOT_VALID"}}
            )
        return aiohttp.web.json_response(
            {"protection": {"ProtectionEnabled": body["ProtectionEnabled"]}}
        )


@pytest.fixture
async def agent():
    fake = FakeAgent()
    app = aiohttp.web.Application()
    # ECS_AGENT_URI is http://169.254.170.2/api/<task id>; the endpoint hangs below it.
    app.router.add_put("/api/some-task-id/task-protection/v1/state", fake.handle)
    runner = aiohttp.web.AppRunner(app)
    await runner.setup()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield fake, f"http://127.0.0.1:{port}/api/some-task-id"
    await runner.cleanup()


async def test_protection_follows_busy_renews_and_idles_out(agent) -> None:
    fake, uri = agent
    now = [1000.0]
    sink = Sink()
    protection = TaskProtection(uri, 10, idle_s=30, telemetry=Telemetry(sink), clock=lambda: now[0])
    try:
        await protection.update(False)
        assert fake.bodies == []  # never enabled: nothing to drop
        await protection.update(True)
        await protection.update(True)
        assert fake.bodies == [{"ProtectionEnabled": True, "ExpiresInMinutes": 10}]
        now[0] += 5 * 60  # half the lease: renew
        await protection.update(True)
        assert len(fake.bodies) == 2
        now[0] += 29
        await protection.update(False)
        assert len(fake.bodies) == 2  # idle, but not for idle_s yet
        now[0] += 1
        await protection.update(False)
        assert fake.bodies[-1] == {"ProtectionEnabled": False}
        assert not protection.enabled
    finally:
        await protection.close()


async def test_protection_failure_is_retried_later(agent) -> None:
    fake, uri = agent
    fake.fail = True
    now = [0.0]
    sink = Sink()
    protection = TaskProtection(uri, 10, idle_s=30, telemetry=Telemetry(sink), clock=lambda: now[0])
    try:
        await protection.update(True)
        assert not protection.enabled
        assert "TASK_NOT_VALID" in sink.events("protection_failed")[0]["error"]
        fake.fail = False
        now[0] += RETRY_S - 1
        await protection.update(True)
        assert len(fake.bodies) == 1  # not before RETRY_S
        now[0] += 1
        await protection.update(True)
        assert protection.enabled and len(fake.bodies) == 2
    finally:
        await protection.close()


async def test_supervisor_protects_the_task_while_a_worker_holds_a_chunk(
    root: Path, agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, uri = agent
    # The supervisor reads state files once a second; polling faster only saves the wait.
    monkeypatch.setattr(supervisor_module, "STATE_POLL_S", 0.05)
    add_chunks(root, 1)
    supervisor, _ = make_supervisor(root, workers=1, env={"FAKE_CONVERT_S": "60"})
    supervisor._protection = TaskProtection(uri, 15, idle_s=0, telemetry=supervisor.telemetry)
    run = asyncio.create_task(supervisor.run())
    await asyncio.to_thread(wait_for_files, root / "inflight", 1, 30)
    await asyncio.wait_for(fake.called.wait(), 10)
    assert fake.bodies == [{"ProtectionEnabled": True, "ExpiresInMinutes": 15}]
    supervisor.stop(drain=False)
    assert await run == 1


def test_protection_only_on_ecs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ECS_AGENT_URI", raising=False)
    assert TaskProtection.from_env(10, 30, Telemetry(Sink())) is None
    monkeypatch.setenv("ECS_AGENT_URI", "http://169.254.170.2/api/x")
    assert TaskProtection.from_env(10, 30, Telemetry(Sink())) is not None


# --- drain with the real worker on a moto server ---


@pytest.fixture(scope="module")
def long_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """124 pages: four chunks of 31 pages, about a second each, so SIGTERM finds them in hand.
    Made once for both drain modes (generating it takes seconds)."""
    from embedded.demo import report_pdf

    return report_pdf(tmp_path_factory.mktemp("long") / "long.pdf", sections=260, seed=5)


@pytest.mark.parametrize("drain_timeout_s", ["20", "0"], ids=["finish", "release"])
def test_sigterm_drains_real_workers_without_losing_a_chunk(
    moto_server, settings, long_pdf: Path, tmp_path: Path, drain_timeout_s: str
) -> None:
    """`python -m runner` with runner.worker: SIGTERM while chunks are held drains every worker
    to a clean exit, and no chunk is lost: the job completes once runners start again."""
    from embedded.pipeline import LocalPipeline
    from pagefleet.storage import Bucket
    from pagefleet.submission import upload
    from tests.conftest import wait_for_record

    settings = settings.model_copy(update={"chunk_pages": 32})
    log = tmp_path / "runner.log"
    local = LocalPipeline(
        settings,
        workers=2,
        server=moto_server,
        runner_env={"PAGEFLEET_DRAIN_TIMEOUT_S": drain_timeout_s},
        log_file=str(log),
    )
    with local:
        assert local.stack is not None
        local.wait_ready()  # a worker still starting could die of SIGTERM before its handler
        bucket = Bucket(local.stack.s3, settings.bucket)
        upload(bucket, "drain/long", long_pdf.read_bytes())
        deadline = time.monotonic() + 60
        # A leased chunk message is a chunk in a worker's hand. The health file says so too, but
        # up to a second late, when these chunks may be done.
        while _chunks_in_flight(local) == 0:
            assert time.monotonic() < deadline, "no worker ever held a chunk"
            time.sleep(0.02)
        assert local.stop_runners() == 0

        # Every chunk is either done or back on the queue at once: none waits out its lease.
        assert _chunks_in_flight(local) == 0
        local.start_runners()
        record = wait_for_record(bucket, "drain/long")
    assert record.status == "done"
    assert all(chunk.status == "done" for chunk in record.chunks)
    assert sum(c.last_page - c.first_page + 1 for c in record.chunks) == record.pages
    events = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    first_run = events[
        : next(i for i, e in enumerate(events) if e["event"] == "supervisor_stopped")
    ]
    assert any(e["event"] == "draining" for e in first_run)
    assert [e["exit_code"] for e in first_run if e["event"] == "worker_exited"] == [0, 0]


def _chunks_in_flight(local: LocalPipeline) -> int:
    assert local.stack is not None
    attributes = local.stack.sqs.get_queue_attributes(
        QueueUrl=local.stack.queue_urls["chunks"],
        AttributeNames=["ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessagesNotVisible"])
