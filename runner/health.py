"""The supervisor's health file: its workers as it last saw them, read by ``--check``.

The supervisor rewrites :class:`RunnerHealth` to ``PAGEFLEET_HEALTH_FILE`` while it runs (and a
last time, with no worker running, when it stops). ``python -m runner --check`` (the container's
HEALTHCHECK) passes it to :func:`check_health`; the embedded stack reads it to know when the
workers are warm.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from runner.worker_state import StateFile

# `--check` fails when the supervisor has not rewritten its health file for this long.
HEALTH_MAX_AGE_S = 30.0


class WorkerHealth(BaseModel):
    """One worker slot: the process in it (None while none runs) and what it reported."""

    model_config = ConfigDict(frozen=True)

    index: int
    pid: int | None
    restarts: int
    held: int
    ready: bool  # the worker wrote its state file: its converter is built, it polls the queue


class RunnerHealth(StateFile):
    pid: int
    updated_at: float
    workers: list[WorkerHealth]
    # Why the supervisor stopped, when it could not run its workers (a configuration error).
    error: str | None = None

    @property
    def ready_workers(self) -> int:
        """How many workers are warm."""
        return sum(worker.ready for worker in self.workers)


def check_health(path: Path, max_age_s: float = HEALTH_MAX_AGE_S) -> tuple[bool, str]:
    """Healthy when the supervisor rewrote its health file lately and a worker is running."""
    try:
        health = RunnerHealth.read(path)
    except (OSError, ValueError) as exc:
        return False, f"unreadable health file {path}: {exc}"
    if health is None:
        return False, f"no health file {path}"
    if health.error is not None:
        return False, f"the runner stopped: {health.error}"
    age_s = time.time() - health.updated_at
    if age_s > max_age_s:
        return False, f"health file {path} is {age_s:.0f} s old"
    alive = [worker for worker in health.workers if worker.pid is not None]
    if not alive:
        return False, f"no worker running of {len(health.workers)}"
    return True, f"{len(alive)} of {len(health.workers)} workers running"
