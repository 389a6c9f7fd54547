"""Medians of ``tail-probe.txt`` (session 14's ``tail_probe.py``, runs of both trees in turn),
per run of the probe: the completion wait, the assembly and the tail (their sum), and the runs
whose tail is over 0.15 s.

    python3 bench/results/2026-12-05-issue28-tail-session15/tail_summary.py \
        bench/results/2026-12-05-issue28-tail-session15/tail-probe.txt
"""

import re
import statistics
import sys
from pathlib import Path


def main() -> None:
    runs: dict[str, list[tuple[float, float]]] = {}
    side = ""
    for line in Path(sys.argv[1]).read_text().splitlines():
        if line.startswith("== ") and not line.startswith("== end"):
            side = " ".join(line.split()[1:4])
            runs[side] = []
        elif line.startswith("run "):
            _, wait, assemble = map(float, re.findall(r"([\d.]+) s", line))
            runs[side].append((wait, assemble))
    print("| probe | wait median (max) s | assemble median s | tail median (max) s | over 0.15 s |")
    print("|---|---|---|---|---|")
    for side, found in runs.items():
        waits = [w for w, _ in found]
        tails = [w + a for w, a in found]
        print(
            f"| {side} | {statistics.median(waits):.3f} ({max(waits):.3f}) "
            f"| {statistics.median(a for _, a in found):.3f} "
            f"| {statistics.median(tails):.3f} ({max(tails):.3f}) "
            f"| {sum(t > 0.15 for t in tails)} of {len(tails)} |"
        )


if __name__ == "__main__":
    main()
