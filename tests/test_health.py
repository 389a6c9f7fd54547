"""The supervisor's health file and `python -m runner --check`'s verdict on it."""

from __future__ import annotations

import time
from pathlib import Path

from runner.health import HEALTH_MAX_AGE_S, RunnerHealth, WorkerHealth, check_health


def health(*workers: tuple[int | None, bool], age_s: float = 0.0) -> RunnerHealth:
    """A health record with one worker per (pid, ready) pair."""
    return RunnerHealth(
        pid=7,
        updated_at=time.time() - age_s,
        workers=[
            WorkerHealth(index=i, pid=pid, restarts=0, held=0, ready=ready)
            for i, (pid, ready) in enumerate(workers)
        ],
    )


def test_round_trip_and_ready_count(tmp_path: Path) -> None:
    path = tmp_path / "health.json"
    written = health((100, True), (101, False), (None, False))
    written.write(path)
    assert RunnerHealth.read(path) == written
    assert written.ready_workers == 1


def test_missing_file_reads_as_none(tmp_path: Path) -> None:
    assert RunnerHealth.read(tmp_path / "health.json") is None


def test_healthy_while_fresh_with_a_worker_running(tmp_path: Path) -> None:
    path = tmp_path / "health.json"
    health((100, True), (None, False)).write(path)
    assert check_health(path) == (True, "1 of 2 workers running")


def test_unhealthy_cases(tmp_path: Path) -> None:
    path = tmp_path / "health.json"
    ok, reason = check_health(path)
    assert not ok and reason == f"no health file {path}"

    path.write_text("{not json")
    ok, reason = check_health(path)
    assert not ok and reason.startswith(f"unreadable health file {path}")

    health((100, True), age_s=HEALTH_MAX_AGE_S + 5).write(path)
    ok, reason = check_health(path)
    assert not ok and reason == f"health file {path} is {HEALTH_MAX_AGE_S + 5:.0f} s old"

    health((None, False), (None, False)).write(path)  # the supervisor's last word on stopping
    assert check_health(path) == (False, "no worker running of 2")
