"""Each Python process's own CPU at its end, one line to $COLD28_CPU_LOG (by_process.py sets it):
atexit for a process that returns, and os._exit for a forked one (multiprocessing's children,
the Lambda environments). A process killed by a signal writes nothing."""

import atexit
import os
import resource
import sys

_LOG = os.environ.get("COLD28_CPU_LOG")


def _write(how: str) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    line = f"{os.getpid()} {os.getppid()} {how} {usage.ru_utime + usage.ru_stime:.3f} {sys.argv!r}"
    with open(_LOG, "a") as log:  # type: ignore[arg-type]
        log.write(line + "\n")


if _LOG:
    atexit.register(_write, "exit")
    _exit = os._exit

    def _logged_exit(code: int) -> None:
        try:
            _write("_exit")
        finally:
            _exit(code)

    os._exit = _logged_exit  # type: ignore[assignment]
