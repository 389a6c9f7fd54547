"""Ending a process that has closed what it owns, without the interpreter's teardown.

After its last line, Python frees every module and object one by one before the process ends:
0.1-0.3 s of CPU for a process that made boto3 clients, on the path of everything that waits
for it (``pagefleet run``'s own exit: ~0.28 s, most of it with the embedded server's imports;
a runner worker's: ~0.14 s, which its supervisor and the command wait for in turn). The kernel
reclaims all of it at once. The callers here end this way once everything that teardown would
close is closed: their child processes stopped, their log handlers flushed (below).

``atexit`` callbacks do not run. Those these processes register are logging's (done here),
multiprocessing's (which stops children the callers have stopped, or which end with their
parent: embedded/environment.py), pypdfium2's library release and certifi's cleanup, neither
of which leaves anything behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import NoReturn


def exit_process(code: int) -> NoReturn:
    """Flush the log handlers and the standard streams, then end the process with ``code``."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a reader gone: nothing left to flush to
            stream.flush()
    os._exit(code)
