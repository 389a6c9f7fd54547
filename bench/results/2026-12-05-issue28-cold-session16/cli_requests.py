"""The requests `pagefleet run` makes from its own process, by thread and operation, and that
process's CPU by thread role (each thread's own clock, no profiler).

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-cold-session16/cli_requests.py \
        FOLDER [--workers 2]

Run from a tree's root (``cd TREE && PYTHONPATH=. python .../cli_requests.py``) to count that
tree's. "main" is the command's own thread (uploads, the record watcher, the downloads);
"stack" the embedded stack's threads in this process (the event source mappings' polls and
deletes, the janitor); the server's request threads are counted under "server".
"""

from __future__ import annotations

import collections
import json
import resource
import shutil
import sys
import tempfile
import threading
import time

import botocore.client

requests: collections.Counter[tuple[str, str]] = collections.Counter()
cpu: collections.defaultdict[str, float] = collections.defaultdict(float)
lock = threading.Lock()


def _role(name: str) -> str:
    if name.startswith("Thread") or "process_request" in name:
        return "server"
    return "stack" if name != "MainThread" else "main"


_api_call = getattr(botocore.client.BaseClient, "_make_api_call")  # noqa: B009


def _counted(self: object, operation_name: str, api_params: dict[str, object]) -> object:
    with lock:
        requests[(_role(threading.current_thread().name), operation_name)] += 1
    return _api_call(self, operation_name, api_params)


setattr(botocore.client.BaseClient, "_make_api_call", _counted)  # noqa: B010
_run = threading.Thread.run


def _timed(self: threading.Thread) -> None:
    try:
        _run(self)
    finally:
        with lock:
            cpu[_role(self.name)] += time.thread_time()


threading.Thread.run = _timed  # type: ignore[method-assign]


def main() -> int:
    from cli import main as cli_main

    out = tempfile.mkdtemp(prefix="cold28-requests-")
    try:
        code = cli_main(["run", *sys.argv[1:], "--out", out])
    finally:
        shutil.rmtree(out, ignore_errors=True)
    cpu["main"] = time.thread_time()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "exit": code,
                "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                # Threads still running at the exit (kept-alive server connections) are not
                # in "server": the process's figure holds them.
                "thread_cpu_s": {k: round(v, 3) for k, v in sorted(cpu.items())},
                "requests": {f"{role} {op}": n for (role, op), n in sorted(requests.items())},
                "main_requests": sum(n for (role, _), n in requests.items() if role == "main"),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
