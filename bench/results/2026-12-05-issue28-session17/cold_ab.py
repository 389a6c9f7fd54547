"""Cold `pagefleet run` of two trees on the shared corpus, with `xargs -P 2` beside them:

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session17/cold_ab.py TREE_A N

N rotations of A B X (B A X every other one), each measured as bench/pipeline/cold.py does (the
whole process tree's CPU, this process a subreaper). A is ``python -m cli run`` from TREE_A (a
`git archive` of the older commit), first on PYTHONPATH; B is this checkout's console script;
X is the bench's xargs baseline. One JSON line a run on stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.pipeline.cold import become_subreaper, measure
from bench.pipeline.models import ColdRun
from bench.pipeline.standalone import xargs_command

FILES = sorted(Path("/work/shared/corpus/real").glob("*.pdf"))


def run(kind: str, tree_a: str) -> ColdRun:
    folder = Path(tempfile.mkdtemp(prefix="cold-ab-"))
    inputs, out = folder / "in", folder / "out"
    inputs.mkdir()
    for i, path in enumerate(FILES):
        (inputs / f"{i:03d}-{path.name}").symlink_to(path)
    args = ["run", str(inputs), "--workers", "2", "--out", str(out)]
    try:
        if kind == "A":
            os.environ["PYTHONPATH"] = tree_a
            try:
                return measure([sys.executable, "-m", "cli", *args], cwd=Path(tree_a))
            finally:
                del os.environ["PYTHONPATH"]
        if kind == "B":
            return measure([str(Path(sys.executable).with_name("pagefleet")), *args])
        stdin = b"".join(str(p).encode() + b"\0" for p in FILES)
        return measure(["bash", "-c", xargs_command(2)], stdin=stdin)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    tree_a, rounds = sys.argv[1], int(sys.argv[2])
    become_subreaper()
    for i in range(rounds):
        for kind in ("A", "B", "X") if i % 2 == 0 else ("B", "A", "X"):
            r = run(kind, tree_a)
            line = {
                "round": i,
                "kind": kind,
                "wall": round(r.wall_s, 2),
                "reaped": round(r.reaped_s, 2),
                "cpu": round(r.cpu_s, 2),
                "summary": r.summary,
                "load": os.getloadavg()[0],
            }
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
