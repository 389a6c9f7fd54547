"""``python -m runner``: the supervisor; ``python -m runner --check``: its health check."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from pathlib import Path

from pagefleet.settings import SettingsRefused, load_settings
from runner.health import check_health
from runner.supervisor import Supervisor
from runner.telemetry import Telemetry
from runner.worker_plan import load_runner_settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner",
        description="Run W pagefleet workers per GPU (or per CPU core) until stopped.",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 0 if a running supervisor is healthy, else 1"
    )
    parser.add_argument(
        "worker",
        nargs=argparse.REMAINDER,
        help="worker command after `--` (default: runner.worker)",
    )
    args = parser.parse_args(argv)
    try:
        runner_settings = load_runner_settings()
        settings = None if args.check else load_settings()
    except SettingsRefused as exc:
        # One line and exit 2, as for any configuration the supervisor cannot run: no worker
        # is started only to die of the same settings (rule 7).
        Telemetry().event("supervisor_failed", level="error", error=f"settings refused: {exc}")
        return 2
    if args.check:
        healthy, reason = check_health(Path(runner_settings.health_file))
        print(reason)
        return 0 if healthy else 1
    worker = args.worker[1:] if args.worker[:1] == ["--"] else args.worker
    supervisor = Supervisor(settings, runner_settings, worker_argv=worker or None)
    return asyncio.run(supervisor.run())
