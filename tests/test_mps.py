"""mps/*.sh against stand-ins for nvidia-smi and nvidia-cuda-mps-control (no GPU here).

The stand-in daemon is "running" while ``<pipe>/daemon`` exists; it creates ``<pipe>/control``
like the real one, so the supervisor's MPS detection is checked against what the script made.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pagefleet.settings import load_settings
from runner.gpu import GpuInfo
from runner.worker_plan import RunnerSettings, plan_workers

MPS = Path(__file__).resolve().parents[1] / "mps"

FAKE_SMI = """#!/usr/bin/env bash
[ -n "${FAKE_GPUS:-}" ] || { echo "NVIDIA-SMI has failed" >&2; exit 9; }
printf '%b\\n' "$FAKE_GPUS"
"""

FAKE_CONTROL = """#!/usr/bin/env bash
pipe="${CUDA_MPS_PIPE_DIRECTORY:?}"
if [ "${1:-}" = "-d" ]; then
    echo "$CUDA_VISIBLE_DEVICES $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY" >>"$FAKE_LAUNCHES"
    if [ -n "${FAKE_MPS_BROKEN:-}" ]; then
        echo "fake: cannot open /dev/nvidia0" >"$CUDA_MPS_LOG_DIRECTORY/control.log"
        exit 0
    fi
    touch "$pipe/control" "$pipe/daemon"
    exit 0
fi
read -r command
[ -e "$pipe/daemon" ] || { echo "Cannot find MPS control daemon process" >&2; exit 1; }
case "$command" in
    get_server_list) echo 4242 ;;
    quit) rm -f "$pipe/daemon" "$pipe/control" ;;
esac
"""

GPUS = [("0", "GPU-11111111-aaaa"), ("1", "GPU-22222222-bbbb")]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("nvidia-smi", FAKE_SMI), ("nvidia-cuda-mps-control", FAKE_CONTROL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PAGEFLEET_MPS_DIR": str(tmp_path / "mps"),
        "FAKE_GPUS": "\\n".join(f"{i}, {uuid}" for i, uuid in GPUS),
        "FAKE_LAUNCHES": str(tmp_path / "launches"),
        "MPS_START_TIMEOUT_S": "2",
    }


def run(script: str, env: dict[str, str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MPS / script)], env={**env, **extra}, capture_output=True, text=True, timeout=30
    )


def launches(env: dict[str, str]) -> list[list[str]]:
    path = Path(env["FAKE_LAUNCHES"])
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def test_start_runs_one_daemon_per_gpu_that_the_supervisor_finds(env: dict[str, str]) -> None:
    result = run("start_mps.sh", env)
    assert result.returncode == 0, result.stderr
    mps_dir = Path(env["PAGEFLEET_MPS_DIR"])
    assert launches(env) == [
        [uuid, str(mps_dir / uuid / "pipe"), str(mps_dir / uuid / "log")] for _, uuid in GPUS
    ]
    runner_settings = RunnerSettings(workers_per_gpu=2, mps="on", mps_dir=str(mps_dir))
    inventory = _Inventory([GpuInfo(int(i), uuid, "fake", 24000, 24000) for i, uuid in GPUS])
    specs, _ = plan_workers(load_settings(), runner_settings, inventory, mps_dir / "state")
    assert [s.env["CUDA_MPS_PIPE_DIRECTORY"] for s in specs] == [
        str(mps_dir / uuid / "pipe") for _, uuid in GPUS for _ in range(2)
    ]


def test_start_is_idempotent(env: dict[str, str]) -> None:
    assert run("start_mps.sh", env).returncode == 0
    again = run("start_mps.sh", env)
    assert again.returncode == 0
    assert len(launches(env)) == len(GPUS)
    assert again.stdout.count("already has a daemon") == len(GPUS)


def test_start_replaces_a_dead_daemons_stale_pipes(env: dict[str, str]) -> None:
    pipe = Path(env["PAGEFLEET_MPS_DIR"]) / GPUS[0][1] / "pipe"
    pipe.mkdir(parents=True)
    (pipe / "control").touch()  # left by a daemon that died: it does not answer
    assert run("start_mps.sh", env).returncode == 0
    assert len(launches(env)) == len(GPUS)
    assert (pipe / "daemon").exists()


def test_start_fails_clearly_when_the_daemon_never_answers(env: dict[str, str]) -> None:
    result = run("start_mps.sh", env, FAKE_MPS_BROKEN="1")
    assert result.returncode == 1
    assert f"GPU 0 ({GPUS[0][1]}): MPS daemon did not answer within 2s" in result.stderr
    assert "cannot open /dev/nvidia0" in result.stderr  # the daemon's log tail


def test_start_without_a_driver_says_so(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "bin" / "nvidia-smi").unlink()
    result = run("start_mps.sh", env)
    assert result.returncode == 1
    assert "nvidia-smi not found" in result.stderr
    assert launches(env) == []


def test_check_and_stop(env: dict[str, str]) -> None:
    down = run("check_mps.sh", env)
    assert down.returncode == 1 and down.stderr.count("no answering daemon") == len(GPUS)
    assert run("start_mps.sh", env).returncode == 0
    up = run("check_mps.sh", env)
    assert up.returncode == 0 and up.stdout.count("ok, servers: 4242") == len(GPUS)
    stopped = run("stop_mps.sh", env)
    assert stopped.returncode == 0 and stopped.stdout.count("stopped daemon") == len(GPUS)
    assert run("check_mps.sh", env).returncode == 1


class _Inventory:
    def __init__(self, gpus: list[GpuInfo]) -> None:
        self._gpus = gpus

    def gpus(self) -> list[GpuInfo]:
        return self._gpus

    def sample(self) -> list:
        return []

    def close(self) -> None:
        pass
