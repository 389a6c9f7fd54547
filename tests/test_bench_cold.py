"""The cold-run measurement (bench/pipeline/cold.py): whole process trees, orphans included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.pipeline.cold import _SUMMARY, cold_targets, report_section
from bench.pipeline.models import ColdPair, ColdRun
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
    "import sys\n"
    "from bench.pipeline.cold import become_subreaper, measure\n"
    "become_subreaper()\n"
    "print(measure([sys.executable, '-c', sys.argv[1]]).model_dump_json())\n"
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
    run = ColdRun.model_validate_json(done.stdout)
    assert run.cpu_s >= 0.3
    assert run.reaped_s >= run.wall_s


def test_the_summary_line_of_pagefleet_run_is_read() -> None:
    progress = Progress(documents=2, documents_done=2, pages_done=9, started=0.0, finished=8.0)
    line = run_summary(progress, total_s=12.5, starting_s=4.0, where=Path("/tmp/out"))
    found = _SUMMARY.search(line)
    assert found is not None
    assert [float(v) for v in found.groups()] == [12.5, 4.0, 8.0]


def _run(wall_s: float, cpu_s: float, starting_s: float | None = None) -> ColdRun:
    summary = None if starting_s is None else {"starting_s": starting_s}
    return ColdRun(
        command="c",
        wall_s=wall_s,
        reaped_s=wall_s,
        user_s=cpu_s,
        sys_s=0.0,
        load=1.0,
        summary=summary,
    )


def test_the_report_pairs_each_cold_run_with_its_xargs_round() -> None:
    pairs = [
        ColdPair(workers=2, run=_run(30.0, 35.0, 3.0), xargs=_run(24.0, 30.0)),
        ColdPair(workers=2, run=_run(20.0, 33.0, 2.5), xargs=_run(22.0, 30.0)),
    ]
    text = "\n".join(report_section(pairs))
    assert "| 2 | 1.0 | 30.0 | 35.0 | 3.0 | 24.0 | 30.0 | 1.17 | 0.80x |" in text
    assert "medians of 2 pairs: the cold run costs 1.13x the CPU" in text
    [target] = cold_targets(pairs)
    assert target.value == round((0.8 + 1.1) / 2, 4) and not target.met
    assert report_section(None) == [] and cold_targets(None) == []
