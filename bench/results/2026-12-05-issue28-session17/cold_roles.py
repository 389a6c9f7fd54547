"""CPU by process kind of one cold `pagefleet run` over the shared corpus (psutil, every 50 ms;
a process's CPU as last seen, so up to 50 ms of each is missed):

    .venv/bin/python bench/results/2026-12-05-issue28-session17/cold_roles.py .venv/bin/pagefleet
"""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
import tempfile
import time

import psutil


def kind_of(proc: psutil.Process) -> str:
    """What ``proc`` is, from its command line and its parent's; "?" where it cannot tell."""
    try:
        command = " ".join(proc.cmdline())
    except psutil.Error:
        return "?"
    if not command:
        return "?"  # ending: its command line is gone
    try:
        parent = proc.parent()
        parent_command = " ".join(parent.cmdline()) if parent is not None else ""
    except psutil.Error:
        parent_command = ""
    if "runner.worker" in parent_command and "runner.worker" not in command:
        return "resource tracker" if "resource_tracker" in command else "conversion child"
    if "runner.worker" in command:
        return "worker"
    if "-m runner" in command:
        return "supervisor"
    if "forkserver" in command:
        return "forkserver (template + envs)"
    if "pagefleet" in command and "run" in command:
        return "cli"
    return command[:60]


def main() -> None:
    out = tempfile.mkdtemp()
    command = [sys.argv[1], "run", "/work/shared/corpus/real", "--workers", "2", "--out", out]
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = psutil.Process(run.pid)
    cpu: dict[int, float] = {}
    kinds: dict[int, str] = {}
    while run.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            procs = []
        for proc in procs:
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            cpu[proc.pid] = times.user + times.system
            # At each look: a spawned process shows its parent's command at first.
            if (kind := kind_of(proc)) != "?":
                kinds[proc.pid] = kind
        time.sleep(0.05)
    total: collections.defaultdict[str, float] = collections.defaultdict(float)
    count: collections.Counter[str] = collections.Counter()
    for pid, seconds in cpu.items():
        total[kinds.get(pid, "?")] += seconds
        count[kinds.get(pid, "?")] += 1
    for kind, seconds in sorted(total.items(), key=lambda item: -item[1]):
        print(f"{seconds:7.2f} s  {count[kind]:3d} procs  {kind}")
    print(f"{sum(total.values()):7.2f} s total (seen)")
    shutil.rmtree(out)


if __name__ == "__main__":
    main()
