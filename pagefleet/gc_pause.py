"""Python's cyclic garbage collector held off while a block builds a large, acyclic heap.

Completion parses chunk results into plain dicts and lists (1.5 MB of layout JSON per 400
pages) and keeps them while the job's results land; the renderer builds its analysis of them.
None of that forms reference cycles, but every collection the allocations trigger walks all
of it: a quarter of completion's CPU on a 400-page job, two fifths on a 2,000-page one.
Reference counting still frees whatever the block drops; the collector runs again after it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """``with paused_gc():`` the collector is off; on again when the last of any blocks that
    overlap (threads, nesting) ends, if it was on when the first began."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
