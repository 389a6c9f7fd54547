"""The GPUs this process can see, and their telemetry, through NVML (``pynvml``).

The supervisor talks to an :class:`Inventory`, not to pynvml, so tests hand it a fake one and a
machine without the NVIDIA driver gets ``None`` from :func:`open_inventory` (CPU mode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pynvml

_MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as found at start-up."""

    index: int
    # CUDA_VISIBLE_DEVICES gets the UUID: NVML and CUDA may number devices differently, and
    # inside an ECS container indices are renumbered while UUIDs are not.
    uuid: str
    name: str
    memory_total_mb: int
    memory_free_mb: int


@dataclass(frozen=True)
class GpuSample:
    """One telemetry reading of one GPU."""

    index: int
    uuid: str
    utilization_pct: int
    memory_used_mb: int
    memory_total_mb: int
    power_w: float


class GpuError(RuntimeError):
    """A GPU query failed (an NVML error): logged and counted by the caller, never swallowed."""


class Inventory(Protocol):
    def gpus(self) -> list[GpuInfo]: ...

    def sample(self) -> list[GpuSample]: ...

    def close(self) -> None: ...


# NVML raises these where there is no usable NVIDIA driver: the supervisor then runs CPU workers.
_NO_GPU_ERRORS = (pynvml.NVMLError_LibraryNotFound, pynvml.NVMLError_DriverNotLoaded)


class NvmlInventory:
    """The real inventory; build it with :func:`open_inventory`."""

    def __init__(self) -> None:
        count = pynvml.nvmlDeviceGetCount()
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]

    def gpus(self) -> list[GpuInfo]:
        found = []
        for index, handle in enumerate(self._handles):
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            found.append(
                GpuInfo(
                    index=index,
                    uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    memory_total_mb=int(memory.total) // _MIB,
                    memory_free_mb=int(memory.free) // _MIB,
                )
            )
        return found

    def sample(self) -> list[GpuSample]:
        try:
            return self._sample()
        except pynvml.NVMLError as exc:
            raise GpuError(f"NVML: {type(exc).__name__}: {exc}") from exc

    def _sample(self) -> list[GpuSample]:
        samples = []
        for index, handle in enumerate(self._handles):
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            samples.append(
                GpuSample(
                    index=index,
                    uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                    utilization_pct=int(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu),
                    memory_used_mb=int(memory.used) // _MIB,
                    memory_total_mb=int(memory.total) // _MIB,
                    power_w=pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                )
            )
        return samples

    def close(self) -> None:
        pynvml.nvmlShutdown()


def open_inventory() -> tuple[Inventory | None, str]:
    """The NVML inventory, or ``None`` and the reason when this machine has no usable GPU."""
    try:
        pynvml.nvmlInit()
    except _NO_GPU_ERRORS as exc:
        return None, f"NVML unavailable ({type(exc).__name__}: {exc})"
    inventory = NvmlInventory()
    if not inventory.gpus():
        inventory.close()
        return None, "NVML found no GPU"
    return inventory, "NVML"


def _text(value: str | bytes) -> str:
    # nvidia-ml-py returns str; older bindings returned bytes.
    return value.decode() if isinstance(value, bytes) else value
