"""Peak RSS of this process."""

from __future__ import annotations

from pathlib import Path


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM) in MiB.

    Not ``getrusage().ru_maxrss``: Linux carries that over ``fork`` + ``exec``, so a child
    of a big harness would report the harness's peak as its own.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (not Linux?)")
