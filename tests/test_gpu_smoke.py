"""scripts/gpu-smoke and runner/smoke.py as far as a machine without a GPU takes them: the
script's wiring, the table, MPS start/probe/stop and the plan against the stand-ins of
tests/test_mps.py, and the torch burners on the CPU where torch is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner import smoke
from runner.gpu import GpuInfo
from tests import test_mps
from tests.test_mps import GPUS, _Inventory

# The stand-ins for nvidia-smi, nvidia-cuda-mps-control and libcuda, shared with test_mps.
env = test_mps.env
fake_libcuda = test_mps.fake_libcuda

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu-smoke"


def test_the_script_refuses_without_a_driver(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(SCRIPT)], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert "gpu-smoke needs an NVIDIA GPU: nvidia-smi not found" in result.stderr


def test_the_script_runs_the_checks_and_reports_a_missing_nvml(
    env: dict[str, str], tmp_path: Path
) -> None:
    # nvidia-smi answers (a stand-in) but there is no NVML library: the inventory step fails,
    # the table and the JSON still come out, and nothing is left behind.
    out = tmp_path / "smoke.json"
    before = set(Path("/tmp").glob("pagefleet-gpu-smoke-*"))
    result = subprocess.run(
        [str(SCRIPT), "--out", str(out)],
        env={**os.environ, **env, "GPU_SMOKE_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "[FAIL] inventory: no GPU: NVML unavailable" in result.stdout
    assert "step       result" in result.stdout
    rows = json.loads(out.read_text())
    assert [(row["step"], row["status"]) for row in rows] == [("inventory", "FAIL")]
    assert set(Path("/tmp").glob("pagefleet-gpu-smoke-*")) == before


@pytest.mark.parametrize(
    ("name", "memory_mb", "gpu_type"),
    [
        ("NVIDIA H200", 143771, "h200"),
        ("NVIDIA H100 80GB HBM3", 81559, "h100"),
        ("NVIDIA A100-SXM4-40GB", 40960, "a100-40"),
        ("NVIDIA A100-SXM4-80GB", 81920, "a100-80"),
        ("NVIDIA A10G", 23028, "a10"),
        ("NVIDIA L4", 23034, "l4"),
        ("NVIDIA L40S", 46068, "l40s"),
        ("Tesla T4", 15360, "t4"),
        ("NVIDIA GeForce RTX 4090", 24564, "4090"),
        ("NVIDIA B200", 183359, "b200"),
        ("NVIDIA RTX A6000", 49140, None),
    ],
)
def test_gpu_names_map_to_surya_gpu_types(name: str, memory_mb: int, gpu_type: str | None) -> None:
    assert smoke.surya_gpu_type(name, memory_mb) == gpu_type


def test_mps_and_plan_steps_against_the_stand_ins(
    env: dict[str, str], fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", f"{env['PATH'].split(':')[0]}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CUDA_LOG", str(fake_libcuda.parent / "smoke-clients"))
    gpu = GpuInfo(0, GPUS[0][1], "NVIDIA L4", 23034, 22000)
    run = smoke.Smoke(seconds=1, workers=0, cuda_library=str(fake_libcuda))
    try:
        assert run.mps(gpu)
        assert (run.mps_dir / "control").exists()  # its own, private daemon
        workers = run.plan(_Inventory([gpu]), gpu, mps=True)
        assert workers >= 1
    finally:
        run.close()
    steps = {row.step: row for row in run.rows}
    assert steps["mps"].status == "ok" and "servers: 4242" in steps["mps"].detail
    plan = steps["plan"]
    assert plan.status == "ok" and plan.data["sizing"]["ocr_capacity"] == 32  # an L4
    assert plan.data["worker_env"]["CUDA_MPS_PIPE_DIRECTORY"] == str(run.mps_dir)
    assert plan.data["worker_env"]["CUDA_VISIBLE_DEVICES"] == gpu.uuid
    assert steps["mps stop"].status == "ok"
    assert not run.work.exists()
    assert "plan" in run.table() and "mps stop" in run.table()


def test_another_daemon_means_no_second_one(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    other = subprocess.Popen(
        ["bash", "-c", 'exec -a "nvidia-cuda-mps-control -d" sleep 30'], start_new_session=True
    )
    run = smoke.Smoke(seconds=1, workers=0)
    try:
        assert not run.mps(GpuInfo(0, GPUS[0][1], "NVIDIA L4", 23034, 22000))
    finally:
        other.kill()
        other.wait()
        run.close()
    (row,) = run.rows
    assert row.status == "skip" and f"pid {other.pid}" in row.detail


def test_burners_share_a_start_and_report_throughput() -> None:
    pytest.importorskip("torch", reason="torch is in the runner image's env (make marker-venv)")
    result = smoke.run_burners(sys.executable, 2, 1.0, "cpu", dict(os.environ))
    assert len(result["per_process"]) == 2
    assert result["tflops"] > 0 and all(r["n"] > 0 for r in result["per_process"])
