"""The worker's state file: what one worker holds and has done, for its supervisor.

A worker (``runner/worker/``) writes its :class:`WorkerState` to ``PAGEFLEET_WORKER_STATE_FILE``
once it is warm and whenever it takes or finishes a chunk; the supervisor reads it for scale-in
protection, health and telemetry. Both sides go through this module, so the shape is defined once,
and so is the one exit code that means more than "restart me" (:data:`CONFIG_ERROR_EXIT`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict

# A worker that exits with this code (sysexits' EX_CONFIG) met a configuration error that every
# restart would meet again (its converter cannot be imported), before it took a chunk: the
# supervisor restarts no worker then, and stops.
CONFIG_ERROR_EXIT = 78


class StateFile(BaseModel):
    """A small JSON file one process rewrites atomically and others read."""

    model_config = ConfigDict(frozen=True)

    def write(self, path: Path) -> None:
        write_atomic(path, self.model_dump_json())

    @classmethod
    def read(cls, path: Path) -> Self | None:
        """The contents, or None before the first write; ValueError if malformed."""
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        return cls.model_validate_json(text)


class WorkerState(StateFile):
    """One worker's last report: its pid, chunks held now, and running totals."""

    pid: int
    held: int
    chunks_done: int
    pages_done: int
    convert_s: float
    updated_at: float


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new, never half."""
    # Hidden and per-writer: no glob for the real files matches it, no two writers share it.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
