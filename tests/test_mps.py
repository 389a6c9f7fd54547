"""mps/*.sh against stand-ins for nvidia-smi and nvidia-cuda-mps-control (no GPU here).

The stand-in daemon is "running" while ``<pipe>/daemon`` exists; it creates ``<pipe>/control``
like the real one, so the supervisor's MPS detection is checked against what the script made.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pagefleet.settings import load_settings
from runner.gpu import GpuInfo
from runner.mps import MpsProbe, probe_mps_client
from runner.worker_plan import Host, RunnerSettings, plan_workers

MPS = Path(__file__).resolve().parents[1] / "mps"

FAKE_SMI = """#!/usr/bin/env bash
[ -n "${FAKE_GPUS:-}" ] || { echo "NVIDIA-SMI has failed" >&2; exit 9; }
printf '%b\\n' "$FAKE_GPUS"
"""

FAKE_CONTROL = """#!/usr/bin/env bash
pipe="${CUDA_MPS_PIPE_DIRECTORY:?}"
if [ "${1:-}" = "-d" ]; then
    echo "${CUDA_VISIBLE_DEVICES:--} $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY" \\
        >>"$FAKE_LAUNCHES"
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
HOST = Host(cpu_count=8, memory_mb=60000)


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


def test_start_runs_one_daemon_that_the_supervisor_finds(env: dict[str, str]) -> None:
    result = run("start_mps.sh", env)
    assert result.returncode == 0, result.stderr
    pipe = Path(env["PAGEFLEET_MPS_DIR"])
    # One daemon for the instance: every GPU shares it, so no CUDA_VISIBLE_DEVICES of its own.
    assert launches(env) == [["-", str(pipe), f"{pipe}.log"]]
    assert all(f"GPU {i} ({uuid}) shared" in result.stdout for i, uuid in GPUS)
    runner_settings = RunnerSettings(workers_per_gpu=2, mps="on", mps_dir=str(pipe))
    inventory = _Inventory([GpuInfo(int(i), uuid, "fake", 24000, 24000) for i, uuid in GPUS])
    plan = plan_workers(load_settings(), runner_settings, inventory, pipe / "state", HOST)
    assert [s.env["CUDA_MPS_PIPE_DIRECTORY"] for s in plan.specs] == [str(pipe)] * 4
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in plan.specs] == [
        uuid for _, uuid in GPUS for _ in range(2)
    ]


def test_start_is_idempotent(env: dict[str, str]) -> None:
    assert run("start_mps.sh", env).returncode == 0
    again = run("start_mps.sh", env)
    assert again.returncode == 0
    assert len(launches(env)) == 1
    assert "already answers" in again.stdout


def test_start_replaces_a_dead_daemons_stale_pipes(env: dict[str, str]) -> None:
    pipe = Path(env["PAGEFLEET_MPS_DIR"])
    pipe.mkdir(parents=True)
    (pipe / "control").touch()  # left by a daemon that died: it does not answer
    assert run("start_mps.sh", env).returncode == 0
    assert len(launches(env)) == 1
    assert (pipe / "daemon").exists()


def _await_pgrep_sees(pid: int) -> None:
    """Until the script's own lookup finds ``pid``: a process that has just started can show an
    empty command line for a moment, which pgrep -f skips."""
    deadline = time.monotonic() + 30
    while True:
        found = subprocess.run(
            ["pgrep", "-f", "nvidia-cuda-mps-control -d"], capture_output=True, text=True
        ).stdout.split()
        if str(pid) in found:
            return
        assert time.monotonic() < deadline, f"pgrep never listed pid {pid}: {found}"
        time.sleep(0.01)


def test_start_never_runs_a_second_daemon_beside_another(env: dict[str, str]) -> None:
    # Another control daemon (the AMI's nvidia-mps.service) listens elsewhere: a sleep that
    # calls itself one, started as such (no shell that execs it later).
    other = subprocess.Popen(
        ["nvidia-cuda-mps-control -d", "30"],
        executable=shutil.which("sleep"),
        start_new_session=True,
    )
    try:
        _await_pgrep_sees(other.pid)
        result = run("start_mps.sh", env)
    finally:
        other.kill()
        other.wait()
    assert result.returncode == 1
    assert f"another MPS control daemon runs (pid {other.pid})" in result.stderr
    assert "/run/mps-ecs" in result.stderr
    assert launches(env) == []


def test_start_fails_clearly_when_the_daemon_never_answers(env: dict[str, str]) -> None:
    result = run("start_mps.sh", env, FAKE_MPS_BROKEN="1")
    assert result.returncode == 1
    assert "MPS daemon did not answer within 2s" in result.stderr
    assert "cannot open /dev/nvidia0" in result.stderr  # the daemon's log tail


def test_start_without_a_driver_says_so(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "bin" / "nvidia-smi").unlink()
    result = run("start_mps.sh", env)
    assert result.returncode == 1
    assert "nvidia-smi not found" in result.stderr
    assert launches(env) == []


def test_check_and_stop(env: dict[str, str]) -> None:
    down = run("check_mps.sh", env)
    assert down.returncode == 1 and "no answering daemon" in down.stderr
    assert run("start_mps.sh", env).returncode == 0
    up = run("check_mps.sh", env)
    assert up.returncode == 0 and "ok, servers: 4242" in up.stdout
    stopped = run("stop_mps.sh", env)
    assert stopped.returncode == 0 and "stopped daemon" in stopped.stdout
    assert run("check_mps.sh", env).returncode == 1
    assert "no daemon answers" in run("stop_mps.sh", env).stdout


class _Inventory:
    def __init__(self, gpus: list[GpuInfo]) -> None:
        self._gpus = gpus

    def gpus(self) -> list[GpuInfo]:
        return self._gpus

    def sample(self) -> list:
        return []

    def close(self) -> None:
        pass


# --- runner/mps.py: a CUDA client's view, against a stand-in libcuda built here ---

FAKE_LIBCUDA = r"""
#include <stdio.h>
#include <stdlib.h>
static int env_int(const char *name) { const char *v = getenv(name); return v ? atoi(v) : 0; }
int cuInit(unsigned flags) { return 0; }
int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    /* A real client connects to the daemon named by CUDA_MPS_PIPE_DIRECTORY here. */
    FILE *log = fopen(getenv("FAKE_CUDA_LOG"), "a");
    fprintf(log, "%s %s\n", getenv("CUDA_MPS_PIPE_DIRECTORY"), getenv("CUDA_VISIBLE_DEVICES"));
    fclose(log);
    *ctx = (void *)0x1;
    return env_int("FAKE_CUDA_CTX_RESULT");
}
int cuCtxSetCurrent(void *ctx) { return 0; }
int cuMemAlloc_v2(unsigned long long *ptr, size_t size) { *ptr = 0x1000; return 0; }
int cuMemFree_v2(unsigned long long ptr) { return 0; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
int cuGetErrorName(int code, const char **name) {
    if (code != 805) return 1;
    *name = "CUDA_ERROR_MPS_CONNECTION_FAILED";
    return 0;
}
"""


@pytest.fixture(scope="module")
def fake_libcuda(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in libcuda")
    folder = tmp_path_factory.mktemp("libcuda")
    (folder / "fake.c").write_text(FAKE_LIBCUDA)
    library = folder / "libcuda.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(library), str(folder / "fake.c")], check=True)
    return library


def test_mps_probe_connects_through_the_daemon(
    env: dict[str, str], fake_libcuda: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run("start_mps.sh", env).returncode == 0
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", f"{env['PATH'].split(':')[0]}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CUDA_LOG", str(fake_libcuda.parent / "clients"))
    pipe = Path(env["PAGEFLEET_MPS_DIR"])
    gpu = GpuInfo(1, GPUS[1][1], "fake", 24000, 24000)

    probe = probe_mps_client(pipe, gpu, library=str(fake_libcuda))
    assert probe == MpsProbe(True, "CUDA context created through the MPS daemon", "4242")
    # The client asked for the daemon's pipe, on its own GPU only.
    assert (fake_libcuda.parent / "clients").read_text() == f"{pipe} {gpu.uuid}\n"

    monkeypatch.setenv("FAKE_CUDA_CTX_RESULT", "805")
    refused = probe_mps_client(pipe, gpu, library=str(fake_libcuda))
    assert refused == MpsProbe(
        False, "cuDevicePrimaryCtxRetain: CUDA_ERROR_MPS_CONNECTION_FAILED (805)"
    )

    monkeypatch.setenv("FAKE_CUDA_CTX_RESULT", "0")
    assert run("stop_mps.sh", env).returncode == 0  # a context, but no MPS server behind it
    assert probe_mps_client(pipe, gpu, library=str(fake_libcuda)) == MpsProbe(
        False, "context created but the daemon lists no MPS server"
    )


def test_mps_probe_without_a_driver_library(tmp_path: Path) -> None:
    probe = probe_mps_client(
        tmp_path, GpuInfo(0, "GPU-x", "fake", 1, 1), library=str(tmp_path / "libcuda.so.1")
    )
    assert not probe.ok and probe.detail.startswith(f"cannot load {tmp_path}/libcuda.so.1")


# CUDA's default pipe directory: where a client without CUDA_MPS_PIPE_DIRECTORY looks for the
# daemon (NVIDIA's MPS documentation, "CUDA_MPS_PIPE_DIRECTORY": default /tmp/nvidia-mps).
CUDA_DEFAULT_PIPE_DIRECTORY = "/tmp/nvidia-mps"


def test_the_one_pipe_directory_is_off_cuda_s_default_everywhere() -> None:
    """PAGEFLEET_MPS_DIR has one default in the runner, the scripts, the systemd unit and the
    runners module (whose mount puts it at the same path in both containers), and it is not
    the path a CUDA process told nothing would join: with MPS off a worker's servers stay off."""
    root = MPS.parent
    script = re.search(
        r'MPS_DIR="\$\{PAGEFLEET_MPS_DIR:-([^}]+)\}"', (MPS / "common.sh").read_text()
    )
    unit = re.search(
        r"^Environment=PAGEFLEET_MPS_DIR=(\S+)$", (MPS / "pagefleet-mps.service").read_text(), re.M
    )
    module = re.search(
        r'variable "mps_pipe_directory" \{.*?default\s+=\s+"([^"]+)"',
        (root / "terraform" / "modules" / "runners" / "variables.tf").read_text(),
        re.S,
    )
    assert script and unit and module
    defaults = {RunnerSettings().mps_dir, script.group(1), unit.group(1), module.group(1)}
    assert len(defaults) == 1, defaults
    assert defaults.pop().rstrip("/") != CUDA_DEFAULT_PIPE_DIRECTORY
