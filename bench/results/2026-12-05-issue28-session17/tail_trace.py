"""Timestamps of a `pagefleet run`'s start-up and stop, its process's own steps:

    T0=$(date +%s.%N) PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-session17/tail_trace.py run /work/shared/corpus/real \
        --workers 2 --out /tmp/out 2> trace.txt

Each line on stderr is "[seconds since T0] > step" or "< step" (the step returned), a record
write the embedded server counted, or a look of the record watcher. The job's end
(``finished_at`` in pagefleet.log) and the runner's stop (its ``signal`` event) are in the log.
The command ends as `pagefleet` does (pagefleet/process_exit.py).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from typing import Any

import embedded.dispatch as dispatch
import embedded.pipeline as pipeline
import embedded.server as server
import pagefleet.submission as submission
from embedded.janitor import Janitor

T0 = float(os.environ.get("T0", time.time()))


def mark(step: str) -> None:
    print(f"[{time.time() - T0:7.3f}] {step}", file=sys.__stderr__, flush=True)


def wrap(owner: Any, attr: str, label: str | None = None) -> None:
    inner = getattr(owner, attr)

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        mark(f"> {label or attr}")
        try:
            return inner(*args, **kwargs)
        finally:
            mark(f"< {label or attr}")

    setattr(owner, attr, timed)


for owner, attr, label in [
    (server.MotoServer, "start", "server.start"),
    (pipeline, "create_stack", None),
    (pipeline.LocalPipeline, "start_runners", None),
    (dispatch.Dispatcher, "start", "dispatcher.start"),
    (pipeline.LocalPipeline, "wait_ready", None),
    (submission.Submission, "upload", "upload"),
    (submission.Submission, "download_document", None),
    (pipeline.LocalPipeline, "begin_stop", None),
    (pipeline.LocalPipeline, "stop_runners", None),
    (dispatch.Dispatcher, "stop", "dispatcher.stop"),
    (pipeline.LocalPipeline, "stop", None),
    (Janitor, "stop", "janitor.stop"),
    (server.BackgroundServer, "stop", "server.stop"),
]:
    wrap(owner, attr, label)

_await_records = submission.await_records


def _watched(*args: Any, **kwargs: Any) -> Any:
    on_look = kwargs.get("on_look")

    def look(records: Any) -> None:
        mark(f"look found {len(records)}")
        if on_look is not None:
            on_look(records)

    return _await_records(*args, **{**kwargs, "on_look": look})


submission.await_records = _watched
_applied = server.RecordWrites.applied


def _counted(self: server.RecordWrites, environ: dict[str, Any]) -> None:
    before = self()
    _applied(self, environ)
    if self() != before:
        mark(f"record write {environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO')}")


server.RecordWrites.applied = _counted  # type: ignore[method-assign]

if __name__ == "__main__":
    from cli import main
    from pagefleet.process_exit import exit_process

    try:
        code = main(sys.argv[1:])
    finally:
        mark("main returned")
    exit_process(code)
