"""The cold run a new user times, paired with what they would try first.

``python -m bench.pipeline.cold FOLDER --workers W --repeat N`` runs, N times in turn (A B A B),

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
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.paths import ROOT
from bench.pipeline.standalone import xargs_command

_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
# `pagefleet run`'s last line (cli/embedded_stack.py:run_summary).
_SUMMARY = re.compile(r"in ([\d.]+) s, .*?: ([\d.]+) s starting the stack, ([\d.]+) s converting")


@dataclass
class TreeRun:
    """One command, start to exit: its wall time, and every process of its tree's CPU."""

    command: str
    wall_s: float  # until the command itself exited
    reaped_s: float  # until its last descendant did
    user_s: float
    sys_s: float
    returncode: int
    load: float  # the 1-minute load average when it started
    summary: dict[str, float] | None = None  # pagefleet run's own figures

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


def become_subreaper() -> None:
    """Orphaned descendants come to this process rather than to init (Linux only)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def measure(argv: list[str], *, stdin: bytes | None = None, cwd: Path = ROOT) -> TreeRun:
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
    return TreeRun(
        command=" ".join(argv),
        wall_s=round(wall, 3),
        reaped_s=round(reaped, 3),
        user_s=round(after.ru_utime - before.ru_utime, 3),
        sys_s=round(after.ru_stime - before.ru_stime, 3),
        returncode=code,
        load=load,
        summary=summary,
    )


def pagefleet_argv(folder: Path, workers: int, out: Path) -> list[str]:
    """The console script a user runs, next to this interpreter (``python -m cli`` without)."""
    script = Path(sys.executable).with_name("pagefleet")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "cli"]
    return [*head, "run", str(folder), "--workers", str(workers), "--out", str(out)]


def run_pair(folder: Path, workers: int) -> tuple[TreeRun, TreeRun]:
    """One cold `pagefleet run`, then one `xargs -P W` round over the same PDFs."""
    out = Path(tempfile.mkdtemp(prefix="pagefleet-cold-"))
    try:
        cold = measure(pagefleet_argv(folder, workers, out))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".pdf")
    plain = measure(
        ["bash", "-c", xargs_command(workers)],
        stdin=b"".join(str(p).encode() + b"\0" for p in files),
    )
    return cold, plain


def report(pairs: list[tuple[TreeRun, TreeRun]]) -> str:
    """A Markdown table of the pairs, and the medians of each pair's ratios."""
    lines = [
        "| pair | load | pagefleet run wall s | CPU s | starting s | xargs wall s | CPU s "
        "| CPU ratio | speed (xargs wall / run wall) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for i, (cold, plain) in enumerate(pairs, 1):
        starting = f"{cold.summary['starting_s']:.1f}" if cold.summary else "-"
        lines.append(
            f"| {i} | {cold.load:.1f} | {cold.wall_s:.1f} | {cold.cpu_s:.1f} | {starting} "
            f"| {plain.wall_s:.1f} | {plain.cpu_s:.1f} | {cold.cpu_s / plain.cpu_s:.2f} "
            f"| {plain.wall_s / cold.wall_s:.2f}x |"
        )
    cpu = statistics.median(c.cpu_s / p.cpu_s for c, p in pairs)
    speed = statistics.median(p.wall_s / c.wall_s for c, p in pairs)
    lines.append(
        f"\nmedian: the cold run costs {cpu:.2f}x the CPU of xargs and runs at {speed:.2f}x its "
        "speed (target >= 1.0x; wall figures hold only on an otherwise idle machine)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline.cold", description=__doc__)
    parser.add_argument("folder", type=Path, help="a folder of PDFs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="pairs, each A then B")
    parser.add_argument("--json", type=Path, help="also write each run as a JSON line here")
    args = parser.parse_args(argv)
    become_subreaper()
    folder = args.folder.expanduser().resolve()
    pairs = []
    for _ in range(args.repeat):
        pair = run_pair(folder, args.workers)
        pairs.append(pair)
        for run in pair:
            row = {**asdict(run), "cpu_s": round(run.cpu_s, 3)}
            print(json.dumps(row), flush=True)
            if args.json is not None:
                with args.json.open("a") as out:
                    out.write(json.dumps(row) + "\n")
    print(report(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
