"""GPU smoke test of the runner's GPU half: ``python -m runner.smoke`` (``scripts/gpu-smoke``).

On a machine with an NVIDIA GPU, one pass of short checks, each a row of one table:

1. driver and NVML inventory (driver version, each GPU's name, UUID, memory, compute mode);
2. MPS: a control daemon started in a private pipe directory (``mps/start_mps.sh``), checked
   (``mps/check_mps.sh``) and probed by a CUDA client (:mod:`runner.mps`), stopped at the end;
3. the supervisor's plan for marker on this host (W, OCR concurrency, each worker's environment);
4. W small torch processes (matrix products) sharing the GPU through one MPS server, against
   the same W without MPS: throughput and GPU memory;
5. ``MarkerConverter`` built on CUDA, up to the point where model servers are needed.

It never changes the compute mode and never resets the GPU; everything it starts it stops, and
its folder is removed. Where another MPS daemon already runs (the ECS GPU AMI's) it starts none
and says so. Results go to a JSON file beside the printed table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pagefleet.settings import load_settings
from runner.gpu import GpuInfo, Inventory, open_inventory
from runner.mps import CUDA_LIBRARY, probe_mps_client
from runner.worker_plan import SURYA_GPU_VRAM_GB, RunnerSettings, detect_host, plan_workers

REPO = Path(__file__).resolve().parents[1]
MPS_SCRIPTS = REPO / "mps"
BURN_SIZE = 4096


@dataclass
class Row:
    step: str
    status: str  # ok, FAIL or skip
    detail: str
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


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
        seconds: float,
        workers: int,
        python: str = sys.executable,
        cuda_library: str = CUDA_LIBRARY,
    ) -> None:
        self.seconds = seconds
        self.cuda_library = cuda_library
        self.workers = workers
        self.python = python
        self.rows: list[Row] = []
        self.work = Path(tempfile.mkdtemp(prefix="pagefleet-gpu-smoke-"))
        self.mps_dir = self.work / "mps"
        self._mps_started = False

    def step(self, name: str, check: Callable[[], tuple[str, str, dict[str, Any]]]) -> Row:
        started = time.monotonic()
        try:
            status, detail, data = check()
        except Exception as exc:
            status, detail, data = "FAIL", f"{type(exc).__name__}: {exc}", {}
        row = Row(name, status, detail, round(time.monotonic() - started, 1), data)
        self.rows.append(row)
        print(f"[{row.status}] {name}: {detail}", flush=True)
        return row

    # --- 1. inventory ---

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

    # --- 2. MPS in a private pipe directory ---

    def mps(self, gpu: GpuInfo) -> bool:
        env = {**os.environ, "PAGEFLEET_MPS_DIR": str(self.mps_dir)}

        def check() -> tuple[str, str, dict[str, Any]]:
            start = subprocess.run(
                [str(MPS_SCRIPTS / "start_mps.sh")], env=env, capture_output=True, text=True
            )
            if start.returncode != 0:
                if "another MPS control daemon runs" in start.stderr:
                    return "skip", start.stderr.strip(), {}
                return "FAIL", (start.stdout + start.stderr).strip()[-400:], {}
            self._mps_started = True
            checked = subprocess.run(
                [str(MPS_SCRIPTS / "check_mps.sh")], env=env, capture_output=True, text=True
            )
            if checked.returncode != 0:
                return "FAIL", checked.stderr.strip(), {}
            probe = probe_mps_client(self.mps_dir, gpu, library=self.cuda_library)
            status = "ok" if probe.ok else "FAIL"
            return status, f"{probe.detail}; servers: {probe.servers}", asdict(probe)

        return self.step("mps", check).status == "ok"

    def stop_mps(self) -> None:
        if self._mps_started:
            env = {**os.environ, "PAGEFLEET_MPS_DIR": str(self.mps_dir)}
            stop = subprocess.run(
                [str(MPS_SCRIPTS / "stop_mps.sh")], env=env, capture_output=True, text=True
            )
            self._mps_started = stop.returncode != 0
            self.rows.append(
                Row("mps stop", "ok" if stop.returncode == 0 else "FAIL", stop.stdout.strip())
            )

    # --- 3. the supervisor's plan ---

    def plan(self, inventory: Inventory, gpu: GpuInfo, mps: bool) -> int:
        workers = [0]

        def check() -> tuple[str, str, dict[str, Any]]:
            gpu_type = surya_gpu_type(gpu.name, gpu.memory_total_mb)
            settings = load_settings(converter="marker", marker_vllm_gpu_type=gpu_type)
            runner_settings = RunnerSettings(
                gpus=gpu.uuid, mps="on" if mps else "off", mps_dir=str(self.mps_dir)
            )
            plan = plan_workers(settings, runner_settings, inventory, self.work / "state")
            ((_, sizing),) = plan.sizings
            workers[0] = sizing.workers
            env = {k: v for k, v in plan.specs[0].env.items() if not k.endswith("STATE_FILE")}
            detail = (
                f"GPU type {gpu_type}: W={sizing.workers} (by {sizing.limited_by}), OCR "
                f"{sizing.inference_parallel}/worker, {sizing.ocr_in_flight} in flight for a "
                f"server of {sizing.ocr_capacity}; worker env {env}"
            )
            return "ok", detail, {"sizing": sizing.fields(), "worker_env": env}

        self.step("plan", check)
        return workers[0]

    # --- 4. W torch processes with and without MPS ---

    def share(self, gpu: GpuInfo, workers: int, mps: bool) -> None:
        modes = [("off", False)] + ([("on", True)] if mps else [])
        results: dict[str, dict[str, Any]] = {}
        for label, use_mps in modes:

            def check(use_mps: bool = use_mps) -> tuple[str, str, dict[str, Any]]:
                result = self.burn(gpu, workers, use_mps)
                detail = (
                    f"{workers} processes: {result['tflops']:.1f} TFLOP/s in all, "
                    f"{result['memory_mb']} MiB GPU memory each at most"
                )
                return "ok", detail, result

            row = self.step(f"{workers} torch processes, MPS {label}", check)
            results[label] = row.data
        if "on" in results and "off" in results and results["off"].get("tflops"):
            ratio = results["on"]["tflops"] / results["off"]["tflops"]
            self.rows.append(Row("MPS on / off", "ok", f"throughput x{ratio:.2f}"))

    def burn(self, gpu: GpuInfo, workers: int, use_mps: bool) -> dict[str, Any]:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu.uuid}
        env.pop("CUDA_MPS_PIPE_DIRECTORY", None)
        if use_mps:
            env["CUDA_MPS_PIPE_DIRECTORY"] = str(self.mps_dir)
        return run_burners(self.python, workers, self.seconds, "cuda", env)

    # --- 5. MarkerConverter on CUDA ---

    def marker(self, gpu: GpuInfo, mps: bool) -> None:
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu.uuid, "HF_HUB_OFFLINE": "1"}
        if mps:
            env["CUDA_MPS_PIPE_DIRECTORY"] = str(self.mps_dir)

        def check() -> tuple[str, str, dict[str, Any]]:
            child = subprocess.run(
                [self.python, "-m", "runner.smoke", "--marker-child"],
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

    def close(self) -> None:
        self.stop_mps()
        shutil.rmtree(self.work, ignore_errors=True)

    def table(self) -> str:
        width = max(len(row.step) for row in self.rows)
        lines = [f"{'step':<{width}}  result  {'s':>6}  detail"]
        for row in self.rows:
            lines.append(f"{row.step:<{width}}  {row.status:<6}  {row.seconds:>6}  {row.detail}")
        return "\n".join(lines)


def run_burners(
    python: str, workers: int, seconds: float, device: str, env: dict[str, str]
) -> dict[str, Any]:
    """``workers`` burner processes started together (each waits, warm, for "go")."""
    procs = [
        subprocess.Popen(
            [python, "-m", "runner.smoke", "--burn", str(seconds), "--device", device],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    try:
        for proc in procs:  # each prints "ready" once its CUDA context and kernels are warm
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"a burner did not start: {line!r}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        replies = []
        for proc in procs:
            out, _ = proc.communicate(timeout=seconds + 120)
            replies.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return {
        "tflops": sum(r["tflops"] for r in replies),
        "memory_mb": max(r["memory_mb"] for r in replies),
        "per_process": replies,
    }


def burn(seconds: float, device: str, size: int = BURN_SIZE) -> dict[str, Any]:
    """One burner: bf16 (CUDA) or fp32 (CPU) matrix products for ``seconds`` after "go"."""
    import torch

    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    (a @ b).sum().item()  # warm: context, kernels
    print("ready", flush=True)
    sys.stdin.readline()
    count = 0
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        c = a @ b
        count += 1
        if device == "cuda" and count % 8 == 0:
            torch.cuda.synchronize()
    float(c[0, 0])  # the last product is done
    elapsed = time.monotonic() - started
    memory = torch.cuda.max_memory_reserved() // 2**20 if device == "cuda" else 0
    return {"tflops": 2 * size**3 * count / elapsed / 1e12, "memory_mb": int(memory), "n": count}


def marker_child() -> dict[str, Any]:
    """Build MarkerConverter (OCR off: no server is needed to build it) and say what it sees."""
    started = time.monotonic()
    import torch

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.smoke", description=__doc__)
    parser.add_argument("--out", default="gpu-smoke.json")
    parser.add_argument("--seconds", type=float, default=20.0, help="per torch run")
    parser.add_argument("--workers", type=int, default=0, help="torch processes (0: the plan's W)")
    parser.add_argument("--burn", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    parser.add_argument("--marker-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.burn is not None:
        print(json.dumps(burn(args.burn, args.device)))
        return 0
    if args.marker_child:
        print(json.dumps(marker_child()))
        return 0

    smoke = Smoke(args.seconds, args.workers)
    inventory, reason = open_inventory()
    try:
        gpus = smoke.inventory(inventory, reason)
        if inventory is not None and gpus:
            gpu = gpus[0]
            mps = smoke.mps(gpu)
            workers = smoke.plan(inventory, gpu, mps) or 1
            smoke.share(gpu, args.workers or min(workers, 8), mps)
            smoke.marker(gpu, mps)
    finally:
        smoke.close()
        if inventory is not None:
            inventory.close()
    host = detect_host()
    print(f"\nrunner GPU smoke, {time.strftime('%Y-%m-%d %H:%M')}, {host.cpu_count} cores")
    print(smoke.table())
    Path(args.out).write_text(json.dumps([asdict(row) for row in smoke.rows], indent=1))
    print(f"results: {args.out}")
    if inventory is None:
        return 2
    return 1 if any(row.status == "FAIL" for row in smoke.rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
