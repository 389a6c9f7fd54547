"""scripts/gpu-smoke and runner/smoke.py as far as a machine without a GPU takes them.

The whole script runs against stand-ins: tests/test_mps.py's nvidia-smi, MPS control daemon and
libcuda, a libnvidia-ml built here (an H200), and worker processes that speak the smoke's
worker protocol and join the stand-in daemon's MPS server the way a CUDA client does (through
``CUDA_MPS_PIPE_DIRECTORY``). The torch mix itself runs on the CPU where torch is installed.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile
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
WHEEL_LIST = ROOT / "mps" / "gpu-smoke-wheels.txt"
H200 = GpuInfo(0, GPUS[0][1], "NVIDIA H200", 143771, 142000)

FAKE_NVML = r"""
#include <string.h>
typedef struct { unsigned long long total, free, used; } memory_t;
typedef struct { unsigned int gpu, memory; } utilization_t;
int nvmlInitWithFlags(unsigned int flags) { return 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int result) { return "fake NVML error"; }
int nvmlDeviceGetCount_v2(unsigned int *count) { *count = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **handle) {
    *handle = (void *)0x1;
    return 0;
}
int nvmlDeviceGetUUID(void *handle, char *uuid, unsigned int size) {
    strncpy(uuid, "@UUID@", size);
    return 0;
}
int nvmlDeviceGetName(void *handle, char *name, unsigned int size) {
    strncpy(name, "NVIDIA H200", size);
    return 0;
}
int nvmlDeviceGetMemoryInfo(void *handle, memory_t *memory) {
    memory->total = 143771ULL << 20;
    memory->used = 1024ULL << 20;
    memory->free = memory->total - memory->used;
    return 0;
}
int nvmlSystemGetDriverVersion(char *version, unsigned int size) {
    strncpy(version, "580.95.05", size);
    return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int *version) { *version = 13000; return 0; }
int nvmlDeviceGetComputeMode(void *handle, int *mode) { *mode = 0; return 0; }
int nvmlDeviceGetUtilizationRates(void *handle, utilization_t *rates) {
    rates->gpu = 87;
    rates->memory = 40;
    return 0;
}
int nvmlDeviceGetPowerUsage(void *handle, unsigned int *milliwatts) {
    *milliwatts = 412000;
    return 0;
}
"""

# The control daemon of test_mps, plus what an MPS server knows of its clients: the pids that
# joined it (a client appends itself to <pipe>/clients), and a log of every command it got.
CONTROL_WITH_CLIENTS = """#!/usr/bin/env bash
core="$(dirname "$0")/mps-control-core"
[ "${1:-}" = "-d" ] && exec "$core" "$@"
read -r command
echo "$command" >>"$FAKE_MPS_COMMANDS"
case "$command" in
    "get_client_list "*)
        [ -e "$CUDA_MPS_PIPE_DIRECTORY/daemon" ] || exit 1
        cat "$CUDA_MPS_PIPE_DIRECTORY/clients" 2>/dev/null
        exit 0 ;;
esac
echo "$command" | "$core"
"""

# A worker as runner/smoke.py's protocol has it, without torch, started in a few milliseconds
# (so no pydantic: its state file is written as runner.worker_state's WorkerState, which the
# supervisor validates when it reads it). It ignores SIGTERM, as a process stuck in a CUDA call
# may: only the smoke's own kill ends it.
STAND_IN_WORKER = """
import json, os, signal, sys, time
from pathlib import Path

signal.signal(signal.SIGTERM, signal.SIG_IGN)
seconds = float(sys.argv[sys.argv.index("--seconds") + 1])
Path(os.environ["STAND_IN_PIDS"], str(os.getpid())).touch()
# A CUDA client joins the daemon its CUDA_MPS_PIPE_DIRECTORY names, if one listens there.
pipe = os.environ.get("STAND_IN_JOIN", os.environ.get("CUDA_MPS_PIPE_DIRECTORY", ""))
if pipe and Path(pipe, "daemon").exists():
    with open(Path(pipe, "clients"), "a") as clients:
        clients.write(f"{os.getpid()}\\n")
state = Path(os.environ["PAGEFLEET_WORKER_STATE_FILE"])

def report(pages, elapsed):
    fields = {"pid": os.getpid(), "held": 1, "chunks_done": 0, "pages_done": pages,
              "convert_s": elapsed, "updated_at": time.time()}
    state.with_suffix(".tmp").write_text(json.dumps(fields))
    state.with_suffix(".tmp").replace(state)

report(0, 0.0)
print("ready", flush=True)
sys.stdin.readline()
started = time.monotonic()
pages = 0
while (elapsed := time.monotonic() - started) < seconds:
    time.sleep(0.01)  # a page's work
    pages += 1
    report(pages, elapsed)
print(json.dumps({"pid": os.getpid(), "pages": pages, "seconds": elapsed, "memory_mb": 64}))
"""


@pytest.fixture
def stand_ins(env: dict[str, str], fake_libcuda: Path, tmp_path: Path) -> dict[str, str]:
    """The environment scripts/gpu-smoke runs in here: every stand-in, and nothing else."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None  # fake_libcuda skipped the test otherwise
    bin_dir = Path(env["PATH"].split(":")[0])
    (bin_dir / "nvidia-cuda-mps-control").rename(bin_dir / "mps-control-core")
    (bin_dir / "nvidia-cuda-mps-control").write_text(CONTROL_WITH_CLIENTS)
    (bin_dir / "nvidia-cuda-mps-control").chmod(0o755)
    nvml = tmp_path / "nvml"
    nvml.mkdir()
    (nvml / "nvml.c").write_text(FAKE_NVML.replace("@UUID@", H200.uuid))
    library = nvml / "libnvidia-ml.so.1"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(library), str(nvml / "nvml.c")], check=True)
    (tmp_path / "worker.py").write_text(STAND_IN_WORKER)
    for folder in ("pids", "tmp", "wheels"):
        (tmp_path / folder).mkdir()
    return {
        **env,
        "LD_LIBRARY_PATH": f"{nvml}:{fake_libcuda.parent}",
        "FAKE_CUDA_LOG": str(tmp_path / "cuda-clients"),
        "FAKE_MPS_COMMANDS": str(tmp_path / "mps-commands"),
        "STAND_IN_PIDS": str(tmp_path / "pids"),
        "TMPDIR": str(tmp_path / "tmp"),
        "GPU_SMOKE_PYTHON": sys.executable,
        "GPU_SMOKE_WHEELS": str(tmp_path / "wheels"),
        "PYTHONPATH": str(ROOT),
    }


def smoke_command(tmp_path: Path, seconds: float) -> list[str]:
    stand_in = f"{sys.executable} {tmp_path / 'worker.py'}"
    out = tmp_path / "out"
    return [str(SCRIPT), "--out", str(out), "--seconds", str(seconds), "--worker-command", stand_in]


def rows_by_step(out: Path) -> dict[str, dict]:
    return {row["step"]: row for row in json.loads((out / "gpu-smoke.json").read_text())["rows"]}


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_script_refuses_without_a_driver(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(SCRIPT)], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2
    assert "gpu-smoke needs an NVIDIA GPU: nvidia-smi not found" in result.stderr


def test_a_python_without_the_carried_packages_is_told_how_to_get_them(
    env: dict[str, str], tmp_path: Path
) -> None:
    bare = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    result = subprocess.run(
        [str(SCRIPT), "--out", str(tmp_path / "out")],
        env={
            **env,
            "GPU_SMOKE_PYTHON": str(bare / "bin" / "python"),
            "GPU_SMOKE_WHEELS": str(tmp_path),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "cannot import pydantic_settings, psutil and pynvml" in result.stderr
    assert "make gpu-smoke-wheels" in result.stderr


def test_without_nvml_the_table_and_json_still_come_out(
    env: dict[str, str], tmp_path: Path
) -> None:
    # nvidia-smi answers (a stand-in) but there is no NVML library: the inventory step fails,
    # the table and the JSON still come out, and nothing is left behind. (A stand-in worker,
    # so that the environment step does not ask for torch.)
    out = tmp_path / "out"
    (tmp_path / "tmp").mkdir()
    result = subprocess.run(
        [str(SCRIPT), "--out", str(out), "--worker-command", "true"],
        env={
            **env,
            "GPU_SMOKE_PYTHON": sys.executable,
            "GPU_SMOKE_WHEELS": str(tmp_path / "no-wheels"),
            "TMPDIR": str(tmp_path / "tmp"),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "[FAIL] inventory: no GPU: NVML unavailable" in result.stdout
    steps = rows_by_step(out)
    assert [(step, row["status"]) for step, row in steps.items()] == [
        ("environment", "ok"),
        ("inventory", "FAIL"),
    ]
    assert re.search(r"inventory +FAIL", (out / "gpu-smoke.txt").read_text())
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_full_run_against_the_stand_ins(stand_ins: dict[str, str], tmp_path: Path) -> None:
    # A carried wheel, as `make gpu-smoke-wheels` leaves them: unpacked and imported first.
    with zipfile.ZipFile(tmp_path / "wheels" / "smoke_probe-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("smoke_probe/__init__.py", "")
        wheel.writestr("smoke_probe-1.0.dist-info/METADATA", "Name: smoke-probe\nVersion: 1.0\n")
    # report_once() reads each worker's pages over the half second between a quarter and three
    # quarters into the last run: long enough for every one of 8 stand-ins to be scheduled on
    # a busy machine (at 0.3 s runs, a 0.15 s window once saw one worker do nothing).
    result = subprocess.run(
        smoke_command(tmp_path, seconds=1.0),
        env=stand_ins,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    steps = rows_by_step(tmp_path / "out")
    assert list(steps) == [
        "environment",
        "inventory",
        "mps",
        "plan",
        "W=1 MPS off",
        "W=1 MPS on",
        "W=8 MPS off",
        "W=8 MPS on",
        "telemetry (report_once)",
        "W=1 MPS on / off",
        "W=8 MPS on / off",
        "MarkerConverter on CUDA",
        "mps stop",
    ]
    assert {step: row["status"] for step, row in steps.items()} == {
        **dict.fromkeys(steps, "ok"),
        # No marker-pdf here, nor on the lent GPU machine; in marker's venv, no CUDA for torch.
        "MarkerConverter on CUDA": "skip",
    }
    assert steps["environment"]["data"]["carried"] == {"smoke-probe": "1.0"}
    assert steps["inventory"]["detail"].startswith("driver 580.95.05, CUDA 13.0; 0: NVIDIA H200")
    # The plan for this host, and its workers' GPU and pipe: those the smoke's workers ran with.
    plan = steps["plan"]["data"]
    assert plan["sizing"]["ocr_capacity"] == 184  # surya's --max-num-seqs for an H200
    private_pipe = plan["worker_env"]["CUDA_MPS_PIPE_DIRECTORY"]
    assert plan["worker_env"]["CUDA_VISIBLE_DEVICES"] == H200.uuid
    assert private_pipe.startswith(stand_ins["TMPDIR"])
    # Every process of an MPS-on run is a client of the daemon's server, none of an off run.
    for count in smoke.WORKER_COUNTS:
        on, off = steps[f"W={count} MPS on"]["data"], steps[f"W={count} MPS off"]["data"]
        assert len(on["pids"]) == len(off["pids"]) == count
        assert on["joined"] == sorted(on["pids"]) and off["joined"] == []
        assert on["pages_per_s"] > 0 and off["pages_per_s"] > 0
    # report_once() under load: the GPU's NVML metrics and every worker's pages/s.
    telemetry = steps["telemetry (report_once)"]["data"]["records"]
    assert [r["GpuUtilization"] for r in telemetry if r["event"] == "gpu"] == [87, 87]
    workers = [r for r in telemetry if r["event"] == "worker"]
    assert len(workers) == 8 and all(r["PagesPerSecond"] > 0 for r in workers)
    assert (tmp_path / "out" / "telemetry.jsonl").read_text().count('"event":"gpu"') == 2
    # One private daemon, asked for its servers' clients, told to quit; nothing left behind.
    assert [launch[1] for launch in test_mps.launches(stand_ins)] == [private_pipe]
    commands = Path(stand_ins["FAKE_MPS_COMMANDS"]).read_text().splitlines()
    assert "get_client_list 4242" in commands and "quit" in commands
    assert all(gone(int(pid.name)) for pid in (tmp_path / "pids").iterdir())
    assert len(list((tmp_path / "pids").iterdir())) == 2 * sum(smoke.WORKER_COUNTS)
    assert list((tmp_path / "tmp").iterdir()) == []
    table = (tmp_path / "out" / "gpu-smoke.txt").read_text()
    assert re.search(r"W=8 MPS on / off\s+ok", table)


def test_sigterm_from_timeout_stops_everything_and_writes_the_json(
    stand_ins: dict[str, str], tmp_path: Path
) -> None:
    # As the device tool runs it: `timeout 480 scripts/gpu-smoke ...`; timeout passes on the
    # SIGTERM it gets to the smoke and to its whole process group.
    proc = subprocess.Popen(
        ["timeout", "300", *smoke_command(tmp_path, seconds=600)],
        env=stand_ins,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "workers running" in line:
            break
    assert "  1 workers running for 600 s\n" in seen, seen
    proc.send_signal(signal.SIGTERM)
    rest, errors = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, "".join(seen) + rest + errors
    report = json.loads((tmp_path / "out" / "gpu-smoke.json").read_text())
    assert report["interrupted"] == "SIGTERM"
    steps = {row["step"]: row for row in report["rows"]}
    assert list(steps) == ["environment", "inventory", "mps", "plan", "W=1 MPS off", "mps stop"]
    assert steps["W=1 MPS off"]["status"] == "FAIL"
    assert steps["W=1 MPS off"]["detail"].startswith("interrupted by SIGTERM after")
    assert steps["mps stop"]["status"] == "ok"
    assert "quit" in Path(stand_ins["FAKE_MPS_COMMANDS"]).read_text().splitlines()
    (pid,) = (tmp_path / "pids").iterdir()  # it ignored the SIGTERM; the smoke killed it
    assert gone(int(pid.name))
    assert list((tmp_path / "tmp").iterdir()) == []
    assert "W=1 MPS off" in (tmp_path / "out" / "gpu-smoke.txt").read_text()


@pytest.mark.parametrize(
    ("use_mps", "join", "complaint"),
    [
        (True, "", "not MPS clients"),  # a client that found no daemon runs without MPS
        (False, "mps", "MPS clients though MPS is off"),  # one that found it all the same
    ],
)
def test_a_worker_on_the_wrong_side_of_mps_fails_its_run(
    stand_ins: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_mps: bool,
    join: str,
    complaint: str,
) -> None:
    for name, value in stand_ins.items():
        monkeypatch.setenv(name, value)
    run = smoke.Smoke(tmp_path / "out", 0.1, [sys.executable, str(tmp_path / "worker.py")])
    monkeypatch.setenv("STAND_IN_JOIN", str(run.mps_dir) if join else "")
    try:
        assert run.mps(H200)
        status, detail, data = run.run_workers(_Inventory([H200]), H200, 1, use_mps, None)
    finally:
        run.close()
    assert status == "FAIL" and complaint in detail
    assert data["pids"] == [int(pid.name) for pid in (tmp_path / "pids").iterdir()]


def test_another_daemon_means_no_second_one(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    other = subprocess.Popen(
        ["nvidia-cuda-mps-control -d", "30"],
        executable=shutil.which("sleep"),
        start_new_session=True,
    )
    run = smoke.Smoke(tmp_path / "out", seconds=1)
    try:
        test_mps._await_pgrep_sees(other.pid)
        assert not run.mps(H200)
    finally:
        other.kill()
        other.wait()
        run.close()
    (row, stop) = run.rows
    assert row.status == "skip" and f"pid {other.pid}" in row.detail
    assert stop.step == "mps stop" and "no daemon answers" in stop.detail


def test_the_carried_wheels_are_what_the_smoke_imports_beyond_the_gpu_machine() -> None:
    # runner.smoke's whole import graph, in a fresh interpreter: every module that is neither
    # the standard library's, the project's, nor one the GPU machine has must come as a wheel.
    imports = (
        "import sys; before = set(sys.modules); import runner.smoke; "
        "print(*set(sys.modules) - before)"
    )
    listing = subprocess.run(
        [sys.executable, "-c", imports],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    owners = importlib.metadata.packages_distributions()
    imported = {
        owner
        for module in listing
        if (top := module.split(".")[0]) not in sys.stdlib_module_names
        for owner in owners.get(top, [])
    }
    wanted = {
        line for line in WHEEL_LIST.read_text().splitlines() if line and not line.startswith("#")
    }

    def canonical(names: set[str]) -> set[str]:
        return {re.sub(r"[-_.]+", "-", name).lower() for name in names}

    assert canonical(imported) - {"pagefleet"} - canonical(set(smoke.MACHINE_PACKAGES)) == (
        canonical(wanted)
    )
    pins = ROOT.joinpath("requirements.lock").read_text().splitlines()
    assert all(any(pin.startswith(f"{name}==") for pin in pins) for name in wanted)


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


def test_the_worker_mix_runs_on_the_cpu(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="torch is the GPU machine's (and make marker-venv's)")
    pytest.importorskip("transformers", reason="transformers is the GPU machine's")
    state = tmp_path / "worker-0.json"
    small = "--device cpu --pages 1 --texts 2 --resolution 64 --seconds 0.5".split()
    result = subprocess.run(
        [sys.executable, "-m", "runner.smoke", "--worker", *small],
        input="go\n",
        env={**os.environ, "PAGEFLEET_WORKER_STATE_FILE": str(state)},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    ready, reply = result.stdout.strip().splitlines()[-2:]
    assert ready == "ready", result.stderr
    done = json.loads(reply)
    assert done["iterations"] >= 1 and done["pages"] == done["iterations"]
    assert json.loads(state.read_text())["pages_done"] == done["pages"]


def test_a_smoke_closed_in_process_leaves_the_caller_s_signals_as_they_were(
    tmp_path: Path,
) -> None:
    """Its close holds SIGTERM and SIGINT off while it cleans up, then hands them back: a
    process that ignored them would have every later child ignore Ctrl-C too (dispositions set
    to ignore survive exec), as a whole `make test` once found."""
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    smoke.Smoke(tmp_path / "out", seconds=1).close()
    assert {signum: signal.getsignal(signum) for signum in before} == before
