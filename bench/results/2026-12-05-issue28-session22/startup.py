"""The start-up of ``pagefleet run`` on a one-page folder, trees in turn (A B A B ...): the
medians of the wall time, the CPU seconds of the whole process tree (bench/pipeline/cold.py)
and the run's own ``starting`` seconds.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session22/startup.py \
        RUNS FOLDER TREE...

Each tree runs with its own code (``PYTHONPATH`` and the working directory set to it) through
this checkout's venv.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.pipeline.cold import become_subreaper, measure


def main() -> None:
    runs, folder, trees = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    pagefleet = str(Path(sys.executable).parent / "pagefleet")
    become_subreaper()
    seen: dict[str, list[tuple[float, float, float]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(runs):
            for tree in trees:
                os.environ["PYTHONPATH"] = tree
                argv = [pagefleet, "run", folder, "--workers", "2", "--out", out]
                run = measure(argv, cwd=Path(tree))
                starting = run.summary["starting_s"] if run.summary else float("nan")
                seen[tree].append((starting, run.wall_s, run.user_s + run.sys_s))
    for tree, values in seen.items():
        starting, wall, cpu = (statistics.median(v[i] for v in values) for i in range(3))
        print(f"{tree}: starting {starting:.2f} s, wall {wall:.2f} s, CPU {cpu:.2f} s")


if __name__ == "__main__":
    main()
