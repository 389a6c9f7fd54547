"""The worker's state file: what runner/worker/ writes is what the supervisor reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.worker_state import WorkerState


def state(**changes: object) -> WorkerState:
    fields = dict(pid=42, held=1, chunks_done=3, pages_done=48, convert_s=2.5, updated_at=1e9)
    return WorkerState.model_validate({**fields, **changes})


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "worker-0.json"
    state().write(path)
    assert WorkerState.read(path) == state()
    state(held=0, chunks_done=4).write(path)  # rewritten in place
    assert WorkerState.read(path) == state(held=0, chunks_done=4)


def test_write_leaves_no_temporary_file_beside_it(tmp_path: Path) -> None:
    state().write(tmp_path / "worker-0.json")
    assert [p.name for p in tmp_path.iterdir()] == ["worker-0.json"]


def test_missing_file_means_not_written_yet(tmp_path: Path) -> None:
    assert WorkerState.read(tmp_path / "worker-0.json") is None


@pytest.mark.parametrize("text", ["", "{", '{"pid": 1}', '{"pid": "x", "held": 0}'])
def test_malformed_file_is_a_value_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "worker-0.json"
    path.write_text(text)
    with pytest.raises(ValueError):
        WorkerState.read(path)
