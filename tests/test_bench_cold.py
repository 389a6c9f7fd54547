"""The cold-run measurement (bench/pipeline/cold.py): whole process trees, orphans included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.pipeline.cold import _SUMMARY, TreeRun, report
from cli.embedded_stack import run_summary
from pagefleet.submission import Progress

ROOT = Path(__file__).resolve().parents[1]

# A grandchild that outlives its parent and burns 0.3 s of CPU: its parent never waits for it,
# so only a subreaper that reaps it counts its CPU (as the Lambda environments' fork server).
_ORPHAN = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    t = time.process_time()\n"
    "    while time.process_time() - t < 0.3: pass\n"
    "    os._exit(0)\n"
)
_MEASURE = (
    "import json, sys\n"
    "from dataclasses import asdict\n"
    "from bench.pipeline.cold import become_subreaper, measure\n"
    "become_subreaper()\n"
    "run = measure([sys.executable, '-c', sys.argv[1]])\n"
    "print(json.dumps(asdict(run)))\n"
)


def test_an_orphaned_descendant_is_waited_for_and_counted() -> None:
    # In a process of its own: a subreaper pytest would collect every test's orphans.
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, _ORPHAN],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    run = json.loads(done.stdout)
    assert run["returncode"] == 0
    assert run["user_s"] + run["sys_s"] >= 0.3
    assert run["reaped_s"] >= run["wall_s"]


def test_the_summary_line_of_pagefleet_run_is_read() -> None:
    progress = Progress(documents=2, documents_done=2, pages_done=9, started=0.0, finished=8.0)
    line = run_summary(progress, total_s=12.5, starting_s=4.0, where=Path("/tmp/out"))
    found = _SUMMARY.search(line)
    assert found is not None
    assert [float(v) for v in found.groups()] == [12.5, 4.0, 8.0]


def test_the_report_pairs_each_cold_run_with_its_xargs_round() -> None:
    cold = TreeRun("pagefleet run", 30.0, 30.5, 30.0, 5.0, 0, 1.0, {"starting_s": 3.0})
    plain = TreeRun("xargs", 24.0, 24.0, 28.0, 2.0, 0, 1.0)
    text = report([(cold, plain)])
    assert "| 1 | 1.0 | 30.0 | 35.0 | 3.0 | 24.0 | 30.0 | 1.17 | 0.80x |" in text
    assert "costs 1.17x the CPU" in text
