"""NVML inventory (against a stand-in pynvml) and the telemetry the supervisor writes."""

from __future__ import annotations

import asyncio
import ctypes.util
import io
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pynvml
import pytest

from pagefleet.settings import load_settings
from runner import gpu
from runner.gpu import GpuInfo, GpuSample
from runner.supervisor import Supervisor, WorkerSlot
from runner.telemetry import Telemetry
from runner.worker_plan import RunnerSettings, WorkerSpec
from runner.worker_state import WorkerState

MIB = 1024 * 1024


class FakeNvml:
    """The pynvml calls NvmlInventory makes, for two GPUs."""

    def __init__(self) -> None:
        self.shut_down = False

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(pynvml, "nvmlInit", lambda: None)
        monkeypatch.setattr(pynvml, "nvmlShutdown", self.shutdown)
        monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: 2)
        monkeypatch.setattr(pynvml, "nvmlDeviceGetHandleByIndex", lambda i: f"handle{i}")
        monkeypatch.setattr(pynvml, "nvmlDeviceGetUUID", lambda h: f"GPU-uuid-{h}")
        monkeypatch.setattr(pynvml, "nvmlDeviceGetName", lambda h: b"NVIDIA L4")
        monkeypatch.setattr(
            pynvml,
            "nvmlDeviceGetMemoryInfo",
            lambda h: SimpleNamespace(total=23034 * MIB, free=22000 * MIB, used=1034 * MIB),
        )
        monkeypatch.setattr(
            pynvml, "nvmlDeviceGetUtilizationRates", lambda h: SimpleNamespace(gpu=87, memory=40)
        )
        monkeypatch.setattr(pynvml, "nvmlDeviceGetPowerUsage", lambda h: 71_500)

    def shutdown(self) -> None:
        self.shut_down = True


def test_nvml_inventory_reads_gpus_and_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = FakeNvml()
    nvml.install(monkeypatch)
    inventory, source = gpu.open_inventory()
    assert inventory is not None and source == "NVML"
    assert inventory.gpus() == [
        GpuInfo(0, "GPU-uuid-handle0", "NVIDIA L4", 23034, 22000),
        GpuInfo(1, "GPU-uuid-handle1", "NVIDIA L4", 23034, 22000),
    ]
    assert inventory.sample()[1] == GpuSample(1, "GPU-uuid-handle1", 87, 1034, 23034, 71.5)
    inventory.close()
    assert nvml.shut_down


def test_nvml_with_no_gpu_means_cpu_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    nvml = FakeNvml()
    nvml.install(monkeypatch)
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: 0)
    assert gpu.open_inventory() == (None, "NVML found no GPU")
    assert nvml.shut_down


def test_driver_not_loaded_means_cpu_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_loaded() -> None:
        raise pynvml.NVMLError_DriverNotLoaded()

    monkeypatch.setattr(pynvml, "nvmlInit", not_loaded)
    inventory, reason = gpu.open_inventory()
    assert inventory is None and "DriverNotLoaded" in reason


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has libnvidia-ml"
)
def test_real_nvml_absent_on_this_machine() -> None:
    inventory, reason = gpu.open_inventory()
    assert inventory is None
    assert "LibraryNotFound" in reason


def test_emf_record_is_valid() -> None:
    sink = io.StringIO()
    Telemetry(sink).metrics(
        "gpu",
        {"Gpu": "0"},
        {"GpuUtilization": (87, "Percent"), "GpuPower": (71.5, "None")},
        gpu_uuid="GPU-x",
    )
    (line,) = sink.getvalue().splitlines()
    record = json.loads(line)
    (directive,) = record["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == "pagefleet"
    # Every dimension and metric the directive names is a top-level member (EMF rule).
    assert directive["Dimensions"] == [["Service", "Gpu"]]
    assert all(isinstance(record[d], str) for d in directive["Dimensions"][0])
    assert {m["Name"]: record[m["Name"]] for m in directive["Metrics"]} == {
        "GpuUtilization": 87,
        "GpuPower": 71.5,
    }
    assert abs(record["_aws"]["Timestamp"] / 1000 - time.time()) < 5
    assert record["event"] == "gpu" and record["gpu_uuid"] == "GPU-x"


class FakeInventory:
    def gpus(self) -> list[GpuInfo]:
        return [GpuInfo(0, "GPU-0", "fake", 1000, 1000)]

    def sample(self) -> list[GpuSample]:
        return [GpuSample(0, "GPU-0", 64, 500, 1000, 99.0)]

    def close(self) -> None:
        pass


async def test_report_gives_gpu_metrics_and_worker_pages_per_second(tmp_path: Path) -> None:
    sink = io.StringIO()
    supervisor = Supervisor(
        load_settings(workers=1),
        RunnerSettings(health_file=str(tmp_path / "health.json")),
        inventory=lambda: (FakeInventory(), "fake"),
        telemetry=Telemetry(sink),
        handle_signals=False,
    )
    supervisor._inventory = FakeInventory()
    state_file = tmp_path / "worker-0.json"
    spec = WorkerSpec(0, None, {"PAGEFLEET_WORKER_STATE_FILE": str(state_file)})
    supervisor.slots = [WorkerSlot(spec)]

    def write(pid: int, pages: int, convert_s: float) -> None:
        WorkerState(
            pid=pid,
            held=1,
            chunks_done=pages // 4,
            pages_done=pages,
            convert_s=convert_s,
            updated_at=0,
        ).write(state_file)

    write(100, 40, 10.0)
    await supervisor.report_once()  # first sight: no interval yet, GPU metrics only
    write(100, 100, 20.0)
    await asyncio.sleep(0.2)
    await supervisor.report_once()

    records = [json.loads(line) for line in sink.getvalue().splitlines()]
    gpus = [r for r in records if r["event"] == "gpu"]
    workers = [r for r in records if r["event"] == "worker"]
    assert [r["GpuUtilization"] for r in gpus] == [64, 64]
    (worker,) = workers
    assert worker["Worker"] == "0" and worker["pages_done"] == 100
    assert worker["ConvertPagesPerSecond"] == pytest.approx(60 / 10.0)
    # 60 pages in a bit over 0.2 s of wall time.
    assert 60 / 1.0 < worker["PagesPerSecond"] <= 60 / 0.2

    write(101, 8, 1.0)  # restarted worker: counters from zero, no rate until its next report
    await supervisor.report_once()
    assert sum(1 for line in sink.getvalue().splitlines() if '"event":"worker"' in line) == 1


# --- scripts/gpu-check, as far as a machine without a GPU can take it ---

GPU_CHECK = Path(__file__).resolve().parents[1] / "scripts" / "gpu-check"


def _gpu_check_module():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("gpu_check", str(GPU_CHECK))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.mark.skipif(
    ctypes.util.find_library("nvidia-ml") is not None, reason="this machine has libnvidia-ml"
)
def test_gpu_check_refuses_without_a_gpu() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, str(GPU_CHECK)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "gpu-check needs an NVIDIA GPU: NVML unavailable" in result.stderr


def test_gpu_check_times_one_setting_through_the_local_pipeline(
    moto_server, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One run_setting on the CPU converter: the pipeline, warm-up, timing and sampling."""
    import argparse

    gpu_check = _gpu_check_module()
    args = argparse.Namespace(chunk_pages=4, timeout_s=120)
    batch = gpu_check.generated_batch(tmp_path / "batch", copies=2, sections=8)
    warmup = gpu_check.generated_batch(tmp_path / "warmup", copies=1, sections=2)
    env = {
        "PAGEFLEET_CONVERTER": "text-layer",
        "PAGEFLEET_WORKERS": "2",
        "PAGEFLEET_WORKERS_PER_GPU": "2",
        "PAGEFLEET_MPS": "off",
    }
    result = gpu_check.run_setting(
        args, moto_server, FakeInventory(), FakeInventory().gpus()[0], env, batch, warmup, tmp_path
    )
    assert result["failed"] == []
    assert result["pages"] > 4 and result["pages_per_s"] > 0
    assert result["gpu_util_mean_pct"] in (0, 64.0)  # 0 if the batch beat the first sample
    assert Path(result["log"]).exists()
    gpu_check.print_table("cpu", [{**result, "mps": "off", "workers": 2}])
    assert "pages/s" in capsys.readouterr().out


async def test_an_nvml_error_is_logged_and_counted_and_reporting_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    nvml = FakeNvml()
    nvml.install(monkeypatch)
    inventory, _ = gpu.open_inventory()
    assert inventory is not None
    sink = io.StringIO()
    supervisor = Supervisor(
        load_settings(workers=1),
        RunnerSettings(health_file=str(tmp_path / "health.json")),
        telemetry=Telemetry(sink),
        handle_signals=False,
    )
    supervisor._inventory = inventory

    def lost(handle: str) -> None:
        raise pynvml.NVMLError_GpuIsLost()

    monkeypatch.setattr(pynvml, "nvmlDeviceGetPowerUsage", lost)
    await supervisor.report_once()
    await supervisor.report_once()
    monkeypatch.setattr(pynvml, "nvmlDeviceGetPowerUsage", lambda h: 71_500)
    await supervisor.report_once()

    records = [json.loads(line) for line in sink.getvalue().splitlines()]
    errors = [r for r in records if r["event"] == "nvml_error"]
    assert [r["NvmlErrors"] for r in errors] == [1, 2]
    assert all(r["level"] == "error" and "GpuIsLost" in r["error"] for r in errors)
    assert errors[0]["_aws"]["CloudWatchMetrics"][0]["Metrics"] == [
        {"Name": "NvmlErrors", "Unit": "Count"}
    ]
    # The next interval reports again.
    assert [r["Gpu"] for r in records if r["event"] == "gpu"] == ["0", "1"]
    assert supervisor.nvml_errors == 2
