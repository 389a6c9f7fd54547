"""scripts/drill as a user runs it: what it says when asked for a drill it does not have."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRILLS = ["rss", "kill", "duplicates", "races", "hostile", "burst", "faults"]


def test_an_unknown_drill_is_a_usage_error_that_lists_the_drills() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "drill"), "--only", "kill,nosuch"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1] == (
        "scripts/drill: error: unknown drills: nosuch; the drills are " + ", ".join(DRILLS)
    )
