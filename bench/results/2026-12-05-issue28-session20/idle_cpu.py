"""What an embedded stack spends while it waits for work: CPU seconds of each of its processes
over 30 idle seconds, after one warm-up round of three shared PDFs.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session20/idle_cpu.py \
        /work/shared/corpus/real
"""

import sys
import time
from pathlib import Path

import psutil

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.warm import warm_stack

IDLE_S = 30


def cpu_by_process() -> dict[tuple[int, str], float]:
    me = psutil.Process()
    found = {}
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            found[(proc.pid, " ".join(proc.cmdline()[:4])[-60:])] = times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return found


def main() -> None:
    docs = collect_documents(BenchConfig(inputs=[Path(sys.argv[1])]))[:3]
    with warm_stack(docs, "idle", timeout_s=120):
        before = cpu_by_process()
        time.sleep(IDLE_S)  # the idle time itself is what is measured
        after = cpu_by_process()
    total = 0.0
    for key in sorted(after, key=lambda k: before.get(k, 0.0) - after[k]):
        spent = after[key] - before.get(key, 0.0)
        total += spent
        print(f"{spent:6.3f} CPU s  pid {key[0]:>7}  {key[1]}")
    print(f"{total:6.3f} CPU s in {IDLE_S} idle seconds, all processes")


if __name__ == "__main__":
    main()
