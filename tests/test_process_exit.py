"""pagefleet/process_exit.py: a process ended without the interpreter's teardown still leaves
its output, its log files and its exit code as a normal exit would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent(
    """
    import logging, logging.handlers, sys
    from pagefleet.process_exit import exit_process

    # Holds its records until it is flushed or closed, as logging's shutdown does.
    handler = logging.handlers.MemoryHandler(100, target=logging.FileHandler(sys.argv[1]))
    logging.getLogger().addHandler(handler)
    logging.getLogger().warning("logged last")
    sys.stdout.write("printed, no newline")
    sys.stderr.write("to stderr")
    exit_process(3)
    """
)


def test_an_ended_process_leaves_its_output_its_logs_and_its_code(tmp_path: Path) -> None:
    log_file = tmp_path / "run.log"
    # Buffered standard streams (no -u, a pipe each): what a command's caller reads.
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(log_file)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        timeout=120,
    )
    assert done.returncode == 3
    assert done.stdout == "printed, no newline"
    assert done.stderr == "to stderr"
    assert log_file.read_text() == "logged last\n"
