"""Cold `pagefleet run` from two trees, alternating (A B B A A B ...), CPU of each whole tree.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-cold-session16/startup_pairs.py \
        --a /tmp/cold28/main --b . --pairs 3 FOLDER

Each run is ``python -m cli run FOLDER --workers W --out TMP`` from the tree's root (its own
``cli``, ``embedded``, ``pagefleet`` and ``runner`` come first on ``sys.path``), measured by
``bench.pipeline.cold.measure`` (this process a subreaper: every descendant's CPU counted).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.pipeline.cold import become_subreaper, measure


def one(tree: Path, folder: Path, workers: int) -> dict[str, float]:
    out = Path(tempfile.mkdtemp(prefix="cold28-out-"))
    try:
        argv = [sys.executable, "-m", "cli", "run", str(folder), "--workers", str(workers)]
        run = measure([*argv, "--out", str(out)], cwd=tree)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"cpu_s": round(run.user_s + run.sys_s, 3), "wall_s": run.wall_s, "load": run.load}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--a", type=Path, required=True)
    parser.add_argument("--b", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    become_subreaper()
    runs: dict[str, list[dict[str, float]]] = {"A": [], "B": []}
    for i in range(args.pairs):
        order = ("A", "B") if i % 2 == 0 else ("B", "A")
        for name in order:
            tree = (args.a if name == "A" else args.b).resolve()
            result = one(tree, args.folder.resolve(), args.workers)
            runs[name].append(result)
            print(json.dumps({"pair": i + 1, "tree": name, **result}), flush=True)
    for name, results in runs.items():
        cpu = [r["cpu_s"] for r in results]
        print(f"{name}: CPU s {cpu}, median {statistics.median(cpu):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
