"""The cold run a new user times, paired with what they would try first.

``python -m bench.pipeline.cold FOLDER --workers W --repeat N`` (or ``scripts/bench ... --cold
N``) runs, N times in turn (A B A B),

- A: ``pagefleet run FOLDER --workers W --out TMP``, from a fresh interpreter: the stack's
  start-up, the conversion, the stop and the downloads, as the command's user waits for them;
- B: ``printf '%s\\0' FOLDER/*.pdf | xargs -0 -n 1 -P W python -m bench.pipeline.plain
  --ocr-threads T`` (:func:`bench.pipeline.standalone.xargs_command`, the bench's own baseline),

and reports for each its wall time and the CPU seconds of its whole process tree. Pairing puts
the host's drift over minutes on both sides of each ratio; the CPU seconds are the figure a
loaded machine leaves least skewed (the report gives the load average beside them).

The whole tree: this process is made a child subreaper (``PR_SET_CHILD_SUBREAPER``, prctl(2)),
so a descendant whose parent never waits for it (the Lambda environments' fork server, which
reaps the environments itself, is not waited for by multiprocessing) is handed to this process
when its parent ends, and waiting for every child until none is left adds each process's CPU
to ``RUSAGE_CHILDREN`` exactly once: what ``/usr/bin/time`` reports for a command whose every
process is waited for, and more than it reports for ``pagefleet run``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.paths import ROOT
from bench.pipeline.models import ColdPair, ColdRun, Target
from bench.pipeline.standalone import xargs_command
from pagefleet.submission import find_pdfs

_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
# `pagefleet run`'s last line (cli/embedded_stack.py:run_summary).
_SUMMARY = re.compile(r"in ([\d.]+) s, .*?: ([\d.]+) s starting the stack, ([\d.]+) s converting")


def become_subreaper() -> None:
    """Orphaned descendants come to this process rather than to init (Linux only)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def measure(argv: list[str], *, stdin: bytes | None = None, cwd: Path = ROOT) -> ColdRun:
    """Run ``argv`` and wait for it and every descendant; call :func:`become_subreaper` first.
    Its output goes to a file (a pipe would keep a lingering descendant's writes waiting)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            proc.stdin.close()
        code = proc.wait()
        wall = time.perf_counter() - started
        while True:  # the orphans handed to this process, until none is left
            try:
                os.wait()
            except ChildProcessError:
                break
        reaped = time.perf_counter() - started
        output.seek(0)
        text = output.read().decode(errors="replace")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise RuntimeError(f"{argv[:3]} exited {code}: {text[-2000:]}")
    found = _SUMMARY.search(" ".join(text.split()))
    summary = None
    if found:
        total, starting, converting = (float(v) for v in found.groups())
        summary = {"total_s": total, "starting_s": starting, "converting_s": converting}
    return ColdRun(
        command=" ".join(argv),
        wall_s=round(wall, 3),
        reaped_s=round(reaped, 3),
        user_s=round(after.ru_utime - before.ru_utime, 3),
        sys_s=round(after.ru_stime - before.ru_stime, 3),
        load=round(load, 2),
        summary=summary,
    )


def pagefleet_argv(folder: Path, workers: int, out: Path) -> list[str]:
    """The console script a user runs, next to this interpreter (``python -m cli`` without)."""
    script = Path(sys.executable).with_name("pagefleet")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "cli"]
    return [*head, "run", str(folder), "--workers", str(workers), "--out", str(out)]


def run_pair(files: list[Path], workers: int) -> ColdPair:
    """One cold `pagefleet run` over ``files`` (a folder of links to them), then one
    ``xargs -P W`` round over the same files."""
    folder = Path(tempfile.mkdtemp(prefix="pagefleet-cold-"))
    inputs, out = folder / "in", folder / "out"
    inputs.mkdir()
    for i, path in enumerate(files):  # numbered: two inputs may share a name
        (inputs / f"{i:03d}-{path.name}").symlink_to(path.resolve())
    try:
        run = measure(pagefleet_argv(inputs, workers, out))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    plain = measure(
        ["bash", "-c", xargs_command(workers)],
        stdin=b"".join(str(p).encode() + b"\0" for p in files),
    )
    return ColdPair(workers=workers, run=run, xargs=plain)


def cold_pairs(files: list[Path], workers: list[int], repeat: int) -> list[ColdPair]:
    """``repeat`` pairs at each W, A B A B, measured by a process of their own: a subreaper
    waits for every child it has, and the caller's own (a bench's fork server) never end."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as lines:
        for w in workers:
            subprocess.run(
                [
                    *(sys.executable, "-m", "bench.pipeline.cold", *map(str, files)),
                    *("--workers", str(w), "--repeat", str(repeat), "--json", lines.name),
                ],
                cwd=ROOT,
                check=True,
                stdout=subprocess.DEVNULL,
            )
        text = Path(lines.name).read_text()
    return [ColdPair.model_validate_json(line) for line in text.splitlines() if line]


def report(pairs: list[ColdPair]) -> list[str]:
    """The pairs as a Markdown table, and the medians of their ratios at each W."""
    lines = [
        "| W | load | pagefleet run wall s | its CPU s | starting s | xargs wall s | its CPU s "
        "| CPU ratio | speed over xargs |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for pair in pairs:
        run, plain = pair.run, pair.xargs
        starting = f"{run.summary['starting_s']:.1f}" if run.summary else "-"
        lines.append(
            f"| {pair.workers} | {run.load:.1f} | {run.wall_s:.1f} | {run.cpu_s:.1f} | {starting} "
            f"| {plain.wall_s:.1f} | {plain.cpu_s:.1f} | {pair.cpu_ratio:.2f} "
            f"| {pair.speedup:.2f}x |"
        )
    lines.append("")
    for workers, at in _by_workers(pairs).items():
        cpu = statistics.median(p.cpu_ratio for p in at)
        lines.append(
            f"W = {workers}, medians of {len(at)} pairs: the cold run costs {cpu:.2f}x the CPU "
            f"of xargs and runs at {_speedup(at):.2f}x its speed (wall figures hold only on an "
            "otherwise idle machine)."
        )
    return lines


def report_section(pairs: list[ColdPair] | None) -> list[str]:
    """The bench report's section (``scripts/bench --cold N``)."""
    if not pairs:
        return []
    return [
        "## What a new user times: a cold `pagefleet run` against `xargs -P W`",
        "",
        "Each pair: `pagefleet run` from a fresh interpreter to its exit (the stack's start-up "
        "and stop counted; `starting` is its own summary line's), then `xargs -P W` over the "
        "same files; CPU seconds of each whole process tree (bench/pipeline/cold.py).",
        "",
        *report(pairs),
        "",
    ]


def cold_targets(pairs: list[ColdPair] | None) -> list[Target]:
    """Issue 28's: the cold run at least as fast as xargs, start-up counted."""
    return [
        Target(
            name=f"cold pagefleet run over xargs -P {workers}, start-up counted",
            target=">= 1.0x (median of the pairs)",
            value=round(_speedup(at), 4),
            met=_speedup(at) >= 1.0,
        )
        for workers, at in _by_workers(pairs or []).items()
    ]


def _by_workers(pairs: list[ColdPair]) -> dict[int, list[ColdPair]]:
    return {w: [p for p in pairs if p.workers == w] for w in sorted({p.workers for p in pairs})}


def _speedup(pairs: list[ColdPair]) -> float:
    return statistics.median(p.speedup for p in pairs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline.cold", description=__doc__)
    parser.add_argument("inputs", nargs="+", type=Path, help="PDFs or folders of PDFs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="pairs, each A then B")
    parser.add_argument("--json", type=Path, help="also write each pair as a JSON line here")
    args = parser.parse_args(argv)
    files = [p for root in args.inputs for p in find_pdfs(root.expanduser().resolve())]
    become_subreaper()
    pairs = []
    for _ in range(args.repeat):
        pair = run_pair(files, args.workers)
        pairs.append(pair)
        print(pair.model_dump_json(), flush=True)
        if args.json is not None:
            with args.json.open("a") as out:
                out.write(pair.model_dump_json() + "\n")
    print("\n".join(report(pairs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
