"""Cold `pagefleet run` from two trees, alternating, CPU of the whole tree and of each role.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-cold-session16/by_process.py \
        --a /tmp/cold28/main --b . --pairs 3 FOLDER

As startup_pairs.py, with ``site/`` on each process's PYTHONPATH: its sitecustomize writes each
Python process's own CPU when it ends. The roles: the command's process ("cli", the embedded
moto server's threads included), the Lambda environments' template (the fork server), the
environments (forked from it), the runner's supervisor, its workers, the workers' conversion
children; "unlogged" is the tree's CPU that no line accounts for (processes killed by a signal,
the resource tracker's share is in "other").
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.pipeline.cold import become_subreaper, measure

SITE = Path(__file__).resolve().parent / "site"


def roles(log: Path) -> dict[str, float]:
    rows: list[tuple[int, int, str, float, list[str]]] = []
    for line in log.read_text().splitlines():
        fields = line.split(" ", 4)
        rows.append(
            (
                int(fields[0]),
                int(fields[1]),
                fields[2],
                float(fields[3]),
                ast.literal_eval(fields[4]),
            )
        )
    cli = {pid for pid, _, how, _, argv in rows if how == "exit" and "cli" in " ".join(argv[:1])}
    environments = {pid for pid, _, how, _, argv in rows if how == "_exit" and "cli" in argv[0]}
    templates = {ppid for pid, ppid, *_ in rows if pid in environments}
    workers = {pid for pid, _, _, _, argv in rows if "runner/worker" in argv[0]}
    found: dict[str, float] = collections.defaultdict(float)
    for pid, ppid, _, cpu, argv in rows:
        if pid in cli:
            role = "cli"
        elif pid in environments:
            role = "environments"
        elif pid in templates:
            role = "template"
        elif pid in workers:
            role = "workers"
        elif ppid in workers:
            role = "conversion children"
        elif "runner/__main__" in argv[0]:
            role = "supervisor"
        else:
            role = "other"
        found[role] += cpu
    found["environments (count)"] = len(environments)
    return dict(found)


def one(tree: Path, folder: Path, workers: int) -> dict[str, object]:
    out = Path(tempfile.mkdtemp(prefix="cold28-out-"))
    log = out.parent / (out.name + ".cpu")
    os.environ["COLD28_CPU_LOG"] = str(log)
    os.environ["PYTHONPATH"] = str(SITE)
    try:
        argv = [sys.executable, "-m", "cli", "run", str(folder), "--workers", str(workers)]
        run = measure([*argv, "--out", str(out)], cwd=tree)
        by_role = roles(log)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        log.unlink(missing_ok=True)
    total = run.user_s + run.sys_s
    logged = sum(v for k, v in by_role.items() if "count" not in k)
    return {
        "cpu_s": round(total, 3),
        "wall_s": run.wall_s,
        "load": run.load,
        **{k: round(v, 3) for k, v in sorted(by_role.items())},
        "unlogged": round(total - logged, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--a", type=Path, required=True)
    parser.add_argument("--b", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    become_subreaper()
    runs: dict[str, list[dict[str, object]]] = {"A": [], "B": []}
    for i in range(args.pairs):
        for name in ("A", "B") if i % 2 == 0 else ("B", "A"):
            tree = (args.a if name == "A" else args.b).resolve()
            result = one(tree, args.folder.resolve(), args.workers)
            runs[name].append(result)
            print(json.dumps({"pair": i + 1, "tree": name, **result}), flush=True)
    for name, results in runs.items():
        keys = [k for k in results[0] if k not in ("wall_s", "load")]
        medians = {
            k: round(statistics.median(float(r.get(k, 0.0)) for r in results), 3)  # type: ignore[arg-type]
            for k in keys
        }
        print(f"{name} medians: {json.dumps(medians)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
