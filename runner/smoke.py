"""GPU smoke test of the runner's GPU half: ``python -m runner.smoke --out DIR``.

``scripts/gpu-smoke`` runs it with the GPU machine's own Python and the carried wheels.

On a machine with an NVIDIA GPU, one pass of short checks, each a row of one table:

1. the interpreter: Python, the wheels carried to it (mps/README.md), torch and transformers;
2. driver and NVML inventory (driver version, each GPU's name, UUID, memory, compute mode);
3. MPS: a control daemon started in a private pipe directory (``mps/start_mps.sh``), checked
   (``mps/check_mps.sh``) and probed by a CUDA client (:mod:`runner.mps`), stopped at the end;
4. the supervisor's plan for marker on this host (W, OCR concurrency, each worker's environment);
5. W = 1 and 8 worker processes each running a mix shaped like marker's model servers (page
   images copied to the GPU, small normalising kernels, a forward of rf-detr's DINOv2-small
   backbone at 704 px and of surya's DistilBert OCR-error grader, results copied back; random
   weights, nothing downloaded), with MPS on and off: throughput, GPU memory, and whether each
   process is, or is not, a client of the daemon's MPS server (``get_client_list``);
6. the supervisor's ``report_once()`` telemetry while the last of those runs loads the GPU;
7. ``MarkerConverter`` built on CUDA, where marker is importable (else skipped).

It never changes the compute mode and never resets the GPU. Everything it starts it stops, on
SIGTERM too (``timeout``): the workers are killed, the daemon is told to quit, and the JSON in
DIR holds every row so far (it is rewritten after each one). Where another MPS daemon already
runs (the ECS GPU AMI's) it starts none and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.metadata
import importlib.util
import io
import json
import os
import platform
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from pagefleet.settings import load_settings
from runner.gpu import GpuInfo, Inventory, open_inventory
from runner.mps import CUDA_LIBRARY, probe_mps_client
from runner.supervisor import Supervisor, WorkerSlot
from runner.telemetry import Telemetry
from runner.worker_plan import (
    SURYA_GPU_VRAM_GB,
    RunnerSettings,
    WorkerSpec,
    detect_host,
    plan_workers,
)
from runner.worker_state import WorkerState

REPO = Path(__file__).resolve().parents[1]
MPS_SCRIPTS = REPO / "mps"
WORKER_COUNTS = (1, 8)
# A worker builds torch, transformers and two models, and creates its CUDA context (the first
# client starts the MPS server): minutes would mean it hangs.
READY_TIMEOUT_S = 180.0
# surya 0.22.1's model servers: the fast-layout server batches up to 8 pages
# (surya/fast_layout/config.py) for rf-detr-large, a DINOv2-small backbone (12 layers of 384,
# 6 heads, patch 16) at 704 px (surya/common/rfdetr/predictor.py, LARGE_ARGS); the OCR-error
# server batches up to 64 texts (surya/ocr_error/config.py) for a DistilBert of 6 layers of 768
# (surya/ocr_error/model/config.py), in float16 on a GPU (surya/settings.py, MODEL_DTYPE).
LAYOUT_PAGES = 8
LAYOUT_RESOLUTION = 704
GRADER_TEXTS = 64
GRADER_TOKENS = 128
# Installed on the GPU machine itself (mps/README.md); everything else comes as carried wheels.
MACHINE_PACKAGES = ("torch", "transformers", "numpy", "onnxruntime", "pillow")


class Interrupted(BaseException):
    """SIGTERM or SIGINT: not an Exception, so no step takes it for its own failure."""


@dataclass
class Row:
    step: str
    status: str  # ok, FAIL or skip
    detail: str
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


Check = Callable[[], tuple[str, str, dict[str, Any]]]


def surya_gpu_type(name: str, memory_mb: int) -> str | None:
    """surya's VLLM_GPU_TYPE for an NVML GPU name ("NVIDIA H100 80GB HBM3" -> "h100")."""
    lowered = name.lower().replace("nvidia", "").replace("geforce", "").replace("rtx", "")
    words = lowered.replace("-", " ").split()
    if "a100" in words:
        return "a100-80" if memory_mb > 50_000 else "a100-40"
    if "a10g" in words or "a10" in words:
        return "a10"
    for word in words:
        if word in SURYA_GPU_VRAM_GB:
            return word
    return None


class Smoke:
    """Runs the steps in order; a failed step fails the run, and later steps still run."""

    def __init__(
        self,
        out: Path,
        seconds: float,
        worker_command: Sequence[str] | None = None,
        cuda_library: str = CUDA_LIBRARY,
    ) -> None:
        self.out = out
        self.seconds = seconds
        self.cuda_library = cuda_library
        # The worker each of W processes runs: the torch mix below, or a stand-in (tests).
        self.builtin_worker = worker_command is None
        self.worker_argv = list(
            worker_command or [sys.executable, "-m", "runner.smoke", "--worker"]
        )
        self.rows: list[Row] = []
        self.interrupted: str | None = None
        self.work = Path(tempfile.mkdtemp(prefix="pagefleet-gpu-smoke-"))
        self.mps_dir = self.work / "mps"
        self.telemetry = io.StringIO()
        self._mps_tried = False
        self._procs: list[subprocess.Popen[bytes]] = []
        out.mkdir(parents=True, exist_ok=True)

    def step(self, name: str, check: Check) -> Row:
        started = time.monotonic()
        try:
            status, detail, data = check()
        except Interrupted as exc:
            self.interrupted = str(exc)
            elapsed = round(time.monotonic() - started, 1)
            self.add(Row(name, "FAIL", f"interrupted by {exc} after {elapsed} s", elapsed))
            raise
        except Exception as exc:
            status, detail, data = "FAIL", f"{type(exc).__name__}: {exc}", {}
        return self.add(Row(name, status, detail, round(time.monotonic() - started, 1), data))

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        print(f"[{row.status}] {row.step}: {row.detail}", flush=True)
        self.save()
        return row

    # --- 1. the interpreter ---

    def environment(self) -> None:
        def check() -> tuple[str, str, dict[str, Any]]:
            site = os.environ.get("GPU_SMOKE_SITE")
            carried = {
                dist.metadata["Name"]: dist.version
                for dist in importlib.metadata.distributions(path=[site] if site else [])
            }
            machine = {name: _version(name) for name in MACHINE_PACKAGES}
            needed = ("torch", "transformers") if self.builtin_worker else ()
            missing = [name for name in needed if machine[name] is None]
            detail = (
                f"Python {platform.python_version()} ({sys.executable}); carried: "
                + (", ".join(f"{n} {v}" for n, v in sorted(carried.items())) or "none")
                + "; "
                + ", ".join(f"{n} {v or 'missing'}" for n, v in machine.items())
            )
            data = {"python": sys.version, "carried": carried, "site": site, "machine": machine}
            if missing:
                return "FAIL", f"{detail}: the worker mix needs {' and '.join(missing)}", data
            return "ok", detail, data

        self.step("environment", check)

    # --- 2. inventory ---

    def inventory(self, inventory: Inventory | None, reason: str) -> list[GpuInfo]:
        found: list[GpuInfo] = []

        def check() -> tuple[str, str, dict[str, Any]]:
            if inventory is None:
                return "FAIL", f"no GPU: {reason}", {}
            found.extend(inventory.gpus())
            import pynvml

            driver = pynvml.nvmlSystemGetDriverVersion()
            cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
            modes = []
            for index in range(len(found)):
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
                modes.append(int(pynvml.nvmlDeviceGetComputeMode(handle)))
            gpus = [asdict(gpu) for gpu in found]
            names = ", ".join(f"{g.index}: {g.name} {g.memory_total_mb} MiB" for g in found)
            detail = f"driver {driver}, CUDA {cuda // 1000}.{cuda % 1000 // 10}; {names}"
            return "ok", detail, {"driver": driver, "gpus": gpus, "compute_modes": modes}

        self.step("inventory", check)
        return found

    # --- 3. MPS in a private pipe directory ---

    def mps(self, gpu: GpuInfo) -> bool:
        env = self._mps_env()

        def check() -> tuple[str, str, dict[str, Any]]:
            # Marked before the start: a SIGTERM during it still has the daemon told to quit.
            self._mps_tried = True
            # A session of its own: the daemon it leaves running is out of reach of the
            # process-group SIGTERM that `timeout` sends, and is stopped by `quit` instead.
            start = subprocess.run(
                [str(MPS_SCRIPTS / "start_mps.sh")],
                env=env,
                capture_output=True,
                text=True,
                start_new_session=True,
            )
            if start.returncode != 0:
                if "another MPS control daemon runs" in start.stderr:
                    return "skip", start.stderr.strip(), {}
                return "FAIL", (start.stdout + start.stderr).strip()[-400:], {}
            checked = subprocess.run(
                [str(MPS_SCRIPTS / "check_mps.sh")], env=env, capture_output=True, text=True
            )
            if checked.returncode != 0:
                return "FAIL", checked.stderr.strip(), {}
            probe = probe_mps_client(self.mps_dir, gpu, library=self.cuda_library)
            status = "ok" if probe.ok else "FAIL"
            return status, f"{probe.detail}; servers: {probe.servers}", asdict(probe)

        return self.step("mps", check).status == "ok"

    def _mps_env(self) -> dict[str, str]:
        return {**os.environ, "PAGEFLEET_MPS_DIR": str(self.mps_dir)}

    def mps_clients(self) -> dict[str, list[int]]:
        """Each MPS server of the private daemon and the pids of its clients (NVIDIA's MPS
        control commands ``get_server_list`` and ``get_client_list <server pid>``)."""
        return {
            server: [int(pid) for pid in self._control(f"get_client_list {server}").split()]
            for server in self._control("get_server_list").split()
        }

    def _control(self, command: str) -> str:
        reply = subprocess.run(
            ["nvidia-cuda-mps-control"],
            input=command + "\n",
            env={**os.environ, "CUDA_MPS_PIPE_DIRECTORY": str(self.mps_dir)},
            capture_output=True,
            text=True,
            timeout=10,
        )
        return reply.stdout

    def stop_mps(self) -> None:
        if not self._mps_tried:
            return
        self._mps_tried = False
        stop = subprocess.run(
            [str(MPS_SCRIPTS / "stop_mps.sh")], env=self._mps_env(), capture_output=True, text=True
        )
        detail = (stop.stdout + stop.stderr).strip()
        self.add(Row("mps stop", "ok" if stop.returncode == 0 else "FAIL", detail))
        logs = Path(f"{self.mps_dir}.log")
        if logs.is_dir():
            shutil.copytree(logs, self.out / "mps-log", dirs_exist_ok=True)

    # --- 4. the supervisor's plan ---

    def plan(self, inventory: Inventory, gpu: GpuInfo, mps: bool) -> None:
        def check() -> tuple[str, str, dict[str, Any]]:
            gpu_type = surya_gpu_type(gpu.name, gpu.memory_total_mb)
            settings = load_settings(converter="marker", marker_vllm_gpu_type=gpu_type)
            runner_settings = RunnerSettings(
                gpus=gpu.uuid, mps="on" if mps else "off", mps_dir=str(self.mps_dir)
            )
            plan = plan_workers(settings, runner_settings, inventory, self.work / "state")
            ((_, sizing),) = plan.sizings
            env = {k: v for k, v in plan.specs[0].env.items() if not k.endswith("STATE_FILE")}
            detail = (
                f"GPU type {gpu_type}: W={sizing.workers} (by {sizing.limited_by}), OCR "
                f"{sizing.inference_parallel}/worker, {sizing.ocr_in_flight} in flight for a "
                f"server of {sizing.ocr_capacity}; worker env {env}"
            )
            # The workers below run with exactly this GPU and pipe directory: what they prove
            # about joining MPS holds for the supervisor's workers.
            expected = self.worker_env(gpu, mps)
            wrong = {
                name: env.get(name)
                for name in ("CUDA_VISIBLE_DEVICES", "CUDA_MPS_PIPE_DIRECTORY")
                if env.get(name) != expected.get(name)
            }
            data = {"sizing": sizing.fields(), "worker_env": env}
            if wrong:
                return "FAIL", f"{detail}; differs from the smoke's workers: {wrong}", data
            return "ok", detail, data

        self.step("plan", check)

    def worker_env(self, gpu: GpuInfo, mps: bool) -> dict[str, str]:
        env = {"CUDA_VISIBLE_DEVICES": gpu.uuid}
        if mps:
            env["CUDA_MPS_PIPE_DIRECTORY"] = str(self.mps_dir)
        return env

    # --- 5. W workers with and without MPS, 6. telemetry ---

    def share(self, inventory: Inventory, gpu: GpuInfo, mps: bool) -> None:
        modes = [False, True] if mps else [False]
        runs = [(count, use_mps) for count in WORKER_COUNTS for use_mps in modes]
        for count, use_mps in runs:
            label = f"W={count} MPS {'on' if use_mps else 'off'}"
            last = (count, use_mps) == runs[-1]
            supervisor = self._supervisor(inventory) if last else None
            check = functools.partial(self.run_workers, inventory, gpu, count, use_mps, supervisor)
            row = self.step(label, check)
            if supervisor is not None:
                self.step("telemetry (report_once)", functools.partial(self._telemetry_row, row))
        for count in WORKER_COUNTS if mps else ():
            off = self._row(f"W={count} MPS off")
            on = self._row(f"W={count} MPS on")
            if off and on and off.status == on.status == "ok":
                ratio = on.data["pages_per_s"] / off.data["pages_per_s"]
                self.add(
                    Row(
                        f"W={count} MPS on / off",
                        "ok",
                        f"pages/s x{ratio:.2f}; GPU memory {on.data['gpu_memory_mb']} MiB on, "
                        f"{off.data['gpu_memory_mb']} MiB off",
                        data={"ratio": ratio},
                    )
                )

    def _row(self, step: str) -> Row | None:
        return next((row for row in self.rows if row.step == step), None)

    def run_workers(
        self,
        inventory: Inventory,
        gpu: GpuInfo,
        count: int,
        use_mps: bool,
        supervisor: Supervisor | None,
    ) -> tuple[str, str, dict[str, Any]]:
        """``count`` workers started together (each waits, warm, for "go"), their MPS
        membership checked, then run for ``seconds`` while NVML is sampled."""
        folder = Path(tempfile.mkdtemp(prefix=f"w{count}-", dir=self.work))
        threads = max(1, detect_host().cpu_count // count)
        specs = []
        for index in range(count):
            env = {
                **self.worker_env(gpu, use_mps),
                "PAGEFLEET_WORKER_STATE_FILE": str(folder / f"worker-{index}.json"),
                "PAGEFLEET_CONVERT_THREADS": str(threads),
            }
            specs.append(WorkerSpec(index, gpu, env))
        base = {k: v for k, v in os.environ.items() if k != "CUDA_MPS_PIPE_DIRECTORY"}
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for spec in specs:  # each tracked at once: a SIGTERM mid-way leaves none behind
                proc = subprocess.Popen(
                    [*self.worker_argv, "--seconds", str(self.seconds)],
                    env={**base, **spec.env},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
                self._procs.append(proc)
                procs.append(proc)
            deadline = time.monotonic() + READY_TIMEOUT_S
            for proc in procs:
                if (said := _await_ready(proc, deadline)) is not None:
                    return "FAIL", f"worker {proc.pid} did not start: {said!r}", {}
            pids = [proc.pid for proc in procs]
            # The daemon's `control` pipe: without one (no daemon of ours), no server to ask.
            clients = self.mps_clients() if (self.mps_dir / "control").exists() else {}
            joined = sorted(set(pids) & {pid for found in clients.values() for pid in found})
            baseline = _memory_used_mb(gpu, inventory)
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
            print(f"  {count} workers running for {self.seconds:g} s", flush=True)
            samples = self._sample(procs, inventory, gpu, supervisor, specs)
            replies = [_reply(proc) for proc in procs]
        finally:
            self.kill(procs)
        pages_per_s = sum(r["pages"] / r["seconds"] for r in replies)
        peak = max((s["memory_used_mb"] for s in samples), default=baseline)
        data = {
            "workers": count,
            "mps": use_mps,
            "pids": pids,
            "mps_clients": clients,
            "joined": joined,
            "pages_per_s": pages_per_s,
            "gpu_memory_mb": peak,
            "gpu_memory_before_go_mb": baseline,
            "gpu_util_mean_pct": _mean([s["utilization_pct"] for s in samples]),
            "per_process": replies,
        }
        detail = (
            f"{pages_per_s:.1f} pages/s in all, GPU memory {peak} MiB "
            f"(per process at most {max(r['memory_mb'] for r in replies)} MiB), "
            f"util {data['gpu_util_mean_pct']:.0f} %; "
        )
        if use_mps and joined != sorted(pids):
            missing = sorted(set(pids) - set(joined))
            return "FAIL", detail + f"not MPS clients: {missing} (servers: {clients})", data
        if not use_mps and joined:
            return "FAIL", detail + f"MPS clients though MPS is off: {joined}", data
        membership = "every process an MPS client" if use_mps else "no process an MPS client"
        return "ok", detail + membership, data

    def _sample(
        self,
        procs: list[subprocess.Popen[bytes]],
        inventory: Inventory,
        gpu: GpuInfo,
        supervisor: Supervisor | None,
        specs: list[WorkerSpec],
    ) -> list[dict[str, int]]:
        """NVML readings until every worker has exited; with a supervisor, ``report_once()`` a
        quarter and three quarters into the run: GPU metrics under load, and the workers'
        pages/s over the half between, from the state files they keep as runner workers do."""
        if supervisor is not None:
            supervisor.slots = [WorkerSlot(spec) for spec in specs]
        reports = [self.seconds / 4, self.seconds * 3 / 4]
        interval = min(0.5, self.seconds / 10)
        started = time.monotonic()
        deadline = started + self.seconds + READY_TIMEOUT_S
        samples = []
        while any(proc.poll() is None for proc in procs) and time.monotonic() < deadline:
            for sample in inventory.sample():
                if sample.uuid == gpu.uuid:
                    samples.append(
                        {
                            "memory_used_mb": sample.memory_used_mb,
                            "utilization_pct": sample.utilization_pct,
                        }
                    )
            if supervisor is not None and reports and time.monotonic() - started >= reports[0]:
                reports.pop(0)
                asyncio.run(supervisor.report_once())
            with contextlib.suppress(subprocess.TimeoutExpired):
                procs[0].wait(timeout=interval)
        return samples

    def _supervisor(self, inventory: Inventory) -> Supervisor:
        supervisor = Supervisor(
            load_settings(converter="marker"),
            RunnerSettings(health_file=str(self.work / "health.json")),
            telemetry=Telemetry(self.telemetry),
            handle_signals=False,
        )
        # What Supervisor.run() opens first; here the smoke's own NVML inventory.
        supervisor._inventory = inventory
        return supervisor

    def _telemetry_row(self, run: Row) -> tuple[str, str, dict[str, Any]]:
        records = [json.loads(line) for line in self.telemetry.getvalue().splitlines()]
        (self.out / "telemetry.jsonl").write_text(self.telemetry.getvalue())
        gpus = [r for r in records if r["event"] == "gpu"]
        workers = [r for r in records if r["event"] == "worker"]
        rate = sum(r["PagesPerSecond"] for r in workers)
        data = {"records": records}
        if not gpus:
            return "FAIL", "report_once() wrote no gpu record", data
        busy = max(gpus, key=lambda r: r["GpuUtilization"])
        detail = (
            f"{len(gpus)} gpu records (busiest: util {busy['GpuUtilization']} %, memory "
            f"{busy['GpuMemoryUsed']}/{busy['GpuMemoryTotal']} MiB, {busy['GpuPower']} W); "
            f"{len(workers)} worker records, {rate:.1f} pages/s in all"
        )
        if run.status == "ok":
            detail += f" (measured {run.data['pages_per_s']:.1f})"
        if len(workers) != run.data.get("workers") or rate <= 0:
            return "FAIL", detail + ": no rate for every worker", data
        return "ok", detail, data

    def kill(self, procs: list[subprocess.Popen[bytes]]) -> None:
        # Load generators with nothing to save: killed, and MPS frees what a client leaves.
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            self._procs.remove(proc)

    # --- 7. MarkerConverter on CUDA ---

    def marker(self, gpu: GpuInfo, mps: bool) -> None:
        env = {
            **os.environ,
            **self.worker_env(gpu, mps),
            "HF_HUB_OFFLINE": "1",
        }

        def check() -> tuple[str, str, dict[str, Any]]:
            if importlib.util.find_spec("marker") is None:
                return "skip", f"marker-pdf is not importable with {sys.executable}", {}
            child = subprocess.run(
                [sys.executable, "-m", "runner.smoke", "--marker-child"],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            try:
                reply = json.loads(child.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                return "FAIL", (child.stderr or child.stdout).strip()[-400:], {}
            return reply.pop("status"), reply.pop("detail"), reply

        self.step("MarkerConverter on CUDA", check)

    # --- the end ---

    def close(self) -> None:
        """Stop what was started, whatever stopped the run, with signals held off meanwhile
        (timeout signals its child, then the child's whole group): the handlers are the
        caller's again afterwards, so a process that runs a smoke in-process (a test) keeps
        its Ctrl-C, and its children do not inherit ignored signals."""
        with _signals_ignored(signal.SIGTERM, signal.SIGINT):
            self.kill(list(self._procs))
            self.stop_mps()
            shutil.rmtree(self.work, ignore_errors=True)

    def table(self) -> str:
        width = max(len(row.step) for row in self.rows)
        lines = [f"{'step':<{width}}  result  {'s':>6}  detail"]
        for row in self.rows:
            lines.append(f"{row.step:<{width}}  {row.status:<6}  {row.seconds:>6}  {row.detail}")
        return "\n".join(lines)

    def save(self) -> None:
        report = {
            "interrupted": self.interrupted,
            "rows": [asdict(row) for row in self.rows],
        }
        (self.out / "gpu-smoke.json").write_text(json.dumps(report, indent=1))


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _memory_used_mb(gpu: GpuInfo, inventory: Inventory) -> int:
    return next((s.memory_used_mb for s in inventory.sample() if s.uuid == gpu.uuid), 0)


def _await_ready(proc: subprocess.Popen[bytes], deadline: float) -> str | None:
    """None once the worker has printed "ready"; else what it printed before it exited or
    went silent past ``deadline``. Read from the pipe itself, so no buffer hides a line."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    seen = b""
    while b"ready" not in seen.splitlines():
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            return seen.decode(errors="replace")[-300:]
        seen += chunk
    return None


def _reply(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """The last line a worker printed, its JSON result, once it has exited."""
    assert proc.stdout is not None
    if proc.poll() is None:
        raise RuntimeError(f"worker {proc.pid} still runs past its time")
    lines = proc.stdout.read().decode(errors="replace").strip().splitlines()
    try:
        reply: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise RuntimeError(f"worker {proc.pid} gave no result: {lines[-1:]}") from None
    return reply


@contextlib.contextmanager
def _signals_ignored(*signums: int) -> Iterator[None]:
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # timeout sends SIGTERM to its child and then to the child's whole group: once is enough.
    signal.signal(signum, signal.SIG_IGN)
    raise Interrupted(signal.Signals(signum).name)


# --- the worker: one process of the mix ---


def worker(
    seconds: float, device: str, pages: int, texts: int, resolution: int = LAYOUT_RESOLUTION
) -> dict[str, Any]:
    """Build the models, say "ready", wait for "go", run the mix for ``seconds``."""
    import numpy as np
    import torch

    # transformers is the GPU machine's, not the project's: no types here (pyproject's overrides
    # name only the runner image's untyped libraries).
    from transformers import (  # type: ignore[import-not-found]
        Dinov2Config,
        Dinov2Model,
        DistilBertConfig,
        DistilBertForSequenceClassification,
    )

    torch.set_num_threads(int(os.environ.get("PAGEFLEET_CONVERT_THREADS", "1")))
    state_file = Path(os.environ["PAGEFLEET_WORKER_STATE_FILE"])
    dtype = torch.float16 if device == "cuda" else torch.float32
    layout = Dinov2Model(
        Dinov2Config(
            hidden_size=384,
            num_hidden_layers=12,
            num_attention_heads=6,
            mlp_ratio=4,
            patch_size=16,
            image_size=resolution,
        )
    )
    grader = DistilBertForSequenceClassification(DistilBertConfig(num_labels=2))
    layout = layout.to(device=device, dtype=dtype).eval()
    grader = grader.to(device=device, dtype=dtype).eval()
    rng = np.random.default_rng(os.getpid())
    # Decoded page images and tokenised texts, as the servers hold them before the GPU.
    images = rng.integers(0, 256, (pages, resolution, resolution, 3), np.uint8)
    tokens = rng.integers(1000, 30000, (texts, GRADER_TOKENS))
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1)

    @torch.inference_mode()
    def once() -> None:
        x = torch.from_numpy(images).to(device)
        x = ((x.permute(0, 3, 1, 2).float() / 255 - mean) / std).to(dtype)
        features = layout(pixel_values=x).last_hidden_state
        features[:, 1:, :4].sigmoid().float().cpu()  # boxes back to the host
        ids = torch.from_numpy(tokens).to(device)
        grader(input_ids=ids).logits.float().softmax(-1).cpu()

    def report(done: int, convert_s: float) -> None:
        # The state file a runner worker keeps, which the supervisor's report_once() reads.
        WorkerState(
            pid=os.getpid(),
            held=1,
            chunks_done=0,
            pages_done=done,
            convert_s=convert_s,
            updated_at=time.time(),
        ).write(state_file)

    once()  # warm: CUDA context (through MPS when it is on), kernels, allocator
    once()
    report(0, 0.0)
    print("ready", flush=True)
    sys.stdin.readline()
    count = 0
    started = last = time.monotonic()
    while (now := time.monotonic()) - started < seconds:
        once()
        count += 1
        if now - last >= min(1.0, seconds / 10):
            report(count * pages, now - started)
            last = now
    elapsed = time.monotonic() - started
    report(count * pages, elapsed)
    memory = torch.cuda.max_memory_reserved() // 2**20 if device == "cuda" else 0
    return {
        "pid": os.getpid(),
        "iterations": count,
        "pages": count * pages,
        "texts": count * texts,
        "seconds": elapsed,
        "memory_mb": int(memory),
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
    }


def marker_child() -> dict[str, Any]:
    """Build MarkerConverter (OCR off: no server is needed to build it) and say what it sees;
    skipped where torch sees no CUDA (marker's CPU venv), as building it there spawns the layout
    server on the CPU, which says nothing about this machine's GPU."""
    started = time.monotonic()
    import torch

    if not torch.cuda.is_available():
        return {"status": "skip", "detail": f"torch {torch.__version__} sees no CUDA device"}
    from runner.converters.marker import MarkerConverter

    settings = load_settings(converter="marker", marker_disable_ocr=True)
    converter = MarkerConverter(settings)
    from marker.settings import settings as marker_settings
    from surya.inference import _autodetect_backend

    data = {
        "cuda": torch.cuda.is_available(),
        "torch": torch.__version__,
        "marker": converter.version,
        "marker_device": marker_settings.TORCH_DEVICE_MODEL,
        "surya_backend": _autodetect_backend(),
    }
    ok = data["cuda"] and data["marker_device"] == "cuda" and data["surya_backend"] == "vllm"
    detail = (
        f"built in {time.monotonic() - started:.1f} s: torch {data['torch']} CUDA "
        f"{data['cuda']}, marker device {data['marker_device']}, surya backend "
        f"{data['surya_backend']}"
    )
    return {"status": "ok" if ok else "FAIL", "detail": detail, **data}


def run(smoke: Smoke, stream: IO[str]) -> int:
    inventory: Inventory | None = None
    try:
        smoke.environment()
        inventory, reason = open_inventory()
        gpus = smoke.inventory(inventory, reason)
        if inventory is not None and gpus:
            gpu = gpus[0]
            mps = smoke.mps(gpu)
            smoke.plan(inventory, gpu, mps)
            smoke.share(inventory, gpu, mps)
            smoke.marker(gpu, mps)
    except Interrupted as exc:
        smoke.interrupted = str(exc)
    finally:
        smoke.close()
        if inventory is not None:
            inventory.close()
    host = detect_host()
    table = (
        f"runner GPU smoke, {time.strftime('%Y-%m-%d %H:%M')}, {host.cpu_count} cores\n"
        + smoke.table()
    )
    (smoke.out / "gpu-smoke.txt").write_text(table + "\n")
    print("\n" + table, file=stream)
    print(f"results: {smoke.out}", file=stream)
    if smoke.interrupted is not None:
        return 128 + signal.Signals[smoke.interrupted].value
    if inventory is None:
        return 2
    return 1 if any(row.status == "FAIL" for row in smoke.rows) else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.smoke", description=__doc__)
    parser.add_argument("--out", type=Path, help="folder for gpu-smoke.json, .txt and logs")
    parser.add_argument("--seconds", type=float, default=20.0, help="per worker run")
    parser.add_argument(
        "--worker-command",
        type=shlex.split,
        help="what each worker process runs instead of the torch mix (a stand-in); it is "
        "given --seconds S, prints 'ready', waits for a line, prints one JSON result",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    parser.add_argument("--pages", type=int, default=LAYOUT_PAGES, help=argparse.SUPPRESS)
    parser.add_argument("--texts", type=int, default=GRADER_TEXTS, help=argparse.SUPPRESS)
    parser.add_argument("--resolution", type=int, default=LAYOUT_RESOLUTION, help=argparse.SUPPRESS)
    parser.add_argument("--marker-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        reply = worker(args.seconds, args.device, args.pages, args.texts, args.resolution)
        print(json.dumps(reply))
        return 0
    if args.marker_child:
        print(json.dumps(marker_child()))
        return 0
    if args.out is None:
        parser.error("--out DIR is required")
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _interrupt)
    return run(Smoke(args.out, args.seconds, args.worker_command), sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
