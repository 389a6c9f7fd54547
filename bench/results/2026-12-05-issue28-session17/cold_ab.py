"""Cold pagefleet run, tree A (python -m cli, PYTHONPATH=A) vs tree B (main's console script),
with xargs -P 2 beside them: A B X rotations, each measured as bench.pipeline.cold does."""
import os, shutil, sys, tempfile, json
from pathlib import Path
from bench.pipeline.cold import become_subreaper, measure
from bench.pipeline.standalone import xargs_command

A = sys.argv[1]; rounds = int(sys.argv[2])
files = sorted(Path("/work/shared/corpus/real").glob("*.pdf"))
become_subreaper()
def run(kind):
    folder = Path(tempfile.mkdtemp(prefix="cold-ab-")); inputs, out = folder / "in", folder / "out"; inputs.mkdir()
    for i, p in enumerate(files): (inputs / f"{i:03d}-{p.name}").symlink_to(p)
    try:
        if kind == "A":
            os.environ["PYTHONPATH"] = A
            r = measure([sys.executable, "-m", "cli", "run", str(inputs), "--workers", "2", "--out", str(out)], cwd=Path(A))
            del os.environ["PYTHONPATH"]
        elif kind == "B":
            r = measure([str(Path(sys.executable).with_name("pagefleet")), "run", str(inputs), "--workers", "2", "--out", str(out)])
        else:
            r = measure(["bash", "-c", xargs_command(2)], stdin=b"".join(str(p).encode() + b"\0" for p in files))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return r
for i in range(rounds):
    order = ["A", "B", "X"] if i % 2 == 0 else ["B", "A", "X"]
    for k in order:
        r = run(k)
        print(json.dumps({"round": i, "kind": k, "wall": round(r.wall_s, 2), "reaped": round(r.reaped_s, 2), "cpu": round(r.user_s + r.sys_s, 2), "summary": r.summary, "load": os.getloadavg()[0]}), flush=True)
