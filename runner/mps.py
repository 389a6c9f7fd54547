"""Does a CUDA client of this container reach the MPS daemon? Checked once, before any worker.

A client that finds a daemon's ``control`` pipe but cannot connect (another UID's server, no
``ipc=host``, a pipe directory not shared) fails every CUDA call with error 805, and one that
finds no daemon silently runs without MPS. So the supervisor does what a worker's CUDA runtime
would do, in a child process of its own so that the supervisor itself never holds a CUDA
context: load the driver library, create the GPU's context with ``CUDA_MPS_PIPE_DIRECTORY`` set,
allocate a little memory, and ask the daemon which MPS servers it runs while the context lives.

``python -m runner.mps [--library libcuda.so.1]`` is that child; it prints one JSON object.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.gpu import GpuInfo

CUDA_LIBRARY = "libcuda.so.1"
PROBE_TIMEOUT_S = 60.0
# cuda.h: the MPS errors a client can meet when it creates its context.
MPS_ERRORS = {
    805: "CUDA_ERROR_MPS_CONNECTION_FAILED",
    806: "CUDA_ERROR_MPS_RPC_FAILURE",
    807: "CUDA_ERROR_MPS_SERVER_NOT_READY",
    808: "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
    809: "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
    810: "CUDA_ERROR_MPS_CLIENT_TERMINATED",
}


@dataclass(frozen=True)
class MpsProbe:
    """``ok``: a context was created through the daemon; ``detail`` says what was seen."""

    ok: bool
    detail: str
    servers: str = ""


def probe_mps_client(
    pipe: Path,
    gpu: GpuInfo,
    *,
    library: str = CUDA_LIBRARY,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> MpsProbe:
    """Create a CUDA context on ``gpu`` through the daemon at ``pipe``, in a child process."""
    env = {
        **os.environ,
        "CUDA_MPS_PIPE_DIRECTORY": str(pipe),
        "CUDA_VISIBLE_DEVICES": gpu.uuid,
    }
    env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
    try:
        child = subprocess.run(
            [sys.executable, "-m", "runner.mps", "--library", library],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return MpsProbe(False, f"no CUDA context within {timeout_s:g} s (daemon hung?)")
    try:
        reply = json.loads(child.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (child.stderr or child.stdout).strip()[-300:]
        return MpsProbe(False, f"probe exited {child.returncode}: {tail}")
    return MpsProbe(bool(reply["ok"]), str(reply["detail"]), str(reply.get("servers", "")))


def _error_name(cuda: ctypes.CDLL, code: int) -> str:
    name = ctypes.c_char_p()
    if cuda.cuGetErrorName(code, ctypes.byref(name)) == 0 and name.value:
        return f"{name.value.decode()} ({code})"
    return MPS_ERRORS.get(code, "CUDA error") + f" ({code})"


def client_check(library: str) -> dict[str, object]:
    """What a CUDA client sees: run in the child, with the environment the workers get."""
    try:
        cuda = ctypes.CDLL(library)
    except OSError as exc:
        return {"ok": False, "detail": f"cannot load {library}: {exc}"}
    device = ctypes.c_int()
    context = ctypes.c_void_p()
    pointer = ctypes.c_uint64()
    steps = (
        ("cuInit", lambda: cuda.cuInit(0)),
        ("cuDeviceGet", lambda: cuda.cuDeviceGet(ctypes.byref(device), 0)),
        (
            "cuDevicePrimaryCtxRetain",
            lambda: cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device),
        ),
        ("cuCtxSetCurrent", lambda: cuda.cuCtxSetCurrent(context)),
        ("cuMemAlloc", lambda: cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(1 << 20))),
    )
    retained = False
    try:
        for name, call in steps:
            code = call()
            if code != 0:
                return {"ok": False, "detail": f"{name}: {_error_name(cuda, code)}"}
            retained = retained or name == "cuDevicePrimaryCtxRetain"
        servers = _server_list()
        cuda.cuMemFree_v2(pointer)
        detail = "CUDA context created through the MPS daemon"
        if servers is None:
            detail += " (nvidia-cuda-mps-control not here to list its servers)"
        elif not servers:
            return {"ok": False, "detail": "context created but the daemon lists no MPS server"}
        return {"ok": True, "detail": detail, "servers": servers or ""}
    finally:
        if retained:
            cuda.cuDevicePrimaryCtxRelease_v2(device)


def _server_list() -> str | None:
    """The daemon's MPS servers (pids), asked while this process's context lives."""
    control = shutil.which("nvidia-cuda-mps-control")
    if control is None:
        return None
    reply = subprocess.run(
        [control], input="get_server_list\n", capture_output=True, text=True, timeout=10
    )
    return " ".join(reply.stdout.split())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.mps", description=__doc__)
    parser.add_argument("--library", default=CUDA_LIBRARY)
    args = parser.parse_args(argv)
    print(json.dumps(client_check(args.library)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
