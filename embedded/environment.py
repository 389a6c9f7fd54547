"""A Lambda execution environment, locally: a process that imports one handler once and runs one
invocation at a time, for as long as it lives.

Lambda runs concurrent invocations of a function in separate environments, so a handler's
module-level objects (powertools' batch processor, its metrics set, cached clients) belong to one
invocation at a time; threads in one process would share them. Each environment here is a
process of its own:

- it reads one JSON line per invocation (the event and the context's fields) from a pipe;
- it answers one JSON line per invocation (the handler's reply, or its error) on another;
- whatever the function prints or logs (powertools' JSON logs, EMF metric lines, tracebacks) goes
  to its standard error, which the embedded stack routes as CloudWatch Logs would be
  (:mod:`embedded.logs`).

Environments are forked from a template process (multiprocessing's fork server) that has
imported the libraries every handler imports, but no handler: a handler's module reads its
function's environment when it is imported (powertools' ``Logger`` and ``Metrics``), so each
environment takes its environment, then imports its handler. The template also reads the
service models of the S3 and SQS clients every handler makes (embedded/template.py), which each
environment would read and parse again. A cold start costs ~0.07 s of CPU instead of the ~1 s
an interpreter takes to import boto3, powertools, pydantic and the core.
As with any multiprocessing program, a script that starts environments keeps its work under
``if __name__ == "__main__":``, since each forked child imports the script's main module.

An invocation that runs past the function's timeout, or an environment that dies, fails the
whole batch, as on AWS; the next invocation starts a fresh environment (a cold start). An
environment ends with the process that started it, mid-invocation too (:func:`_end_with_parent`).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import IO, Any

# How long a cold start (importing the handler) may take before the environment is given up.
COLD_START_TIMEOUT_S = 120.0


class InvocationError(RuntimeError):
    """The invocation produced no reply: the handler raised, timed out, or its process died."""


@dataclass
class FakeLambdaContext:
    """The attributes powertools reads from a Lambda context."""

    function_name: str
    memory_limit_in_mb: int = 1024
    function_version: str = "$LATEST"
    aws_request_id: str = ""
    deadline_ms: float = 0.0

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        if not self.deadline_ms:
            return 60_000
        return max(0, int(self.deadline_ms - time.time() * 1000))


@dataclass
class EnvironmentSpec:
    """What one function's environments run: ``handler`` is ``module:function``."""

    handler: str
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 60.0
    # Called with each environment's process and its name, to route its logs.
    attach_logs: Callable[[str, IO[bytes]], None] | None = None


class Environment:
    """One execution environment; call it as the handler itself: ``env(event, context)``.

    Not thread-safe: one invocation at a time, as on Lambda (each dispatcher poller owns one).
    """

    def __init__(self, name: str, spec: EnvironmentSpec) -> None:
        self.name = name
        self.spec = spec
        self.proc: ForkedProcess | None = None
        self._ready = False
        self.cold_starts = 0
        self.invocations = 0

    def start(self) -> None:
        """Start the process (importing the handler happens in the background)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self.proc = ForkedProcess.start(
            self.name,
            self.spec.handler,
            {**os.environ, **self.spec.env},
            logs=self.spec.attach_logs is not None,
        )
        if self.spec.attach_logs is not None:
            assert self.proc.stderr is not None
            self.spec.attach_logs(self.name, self.proc.stderr)
        self._ready = False
        self.cold_starts += 1

    def __call__(self, event: dict[str, Any], context: FakeLambdaContext) -> dict[str, Any] | None:
        self.start()
        assert self.proc is not None
        try:
            if not self._ready:
                self._read_line(COLD_START_TIMEOUT_S)  # {"ready": true} once imported
                self._ready = True
            context.deadline_ms = (time.time() + self.spec.timeout_s) * 1000
            request = {"event": event, "context": context.__dict__}
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            reply = self._read_line(self.spec.timeout_s)
        except (OSError, InvocationError) as exc:
            self.kill()
            raise InvocationError(f"{self.name}: {exc}") from exc
        self.invocations += 1
        if "error" in reply:
            raise InvocationError(f"{self.name}: {reply['error']}")
        response: dict[str, Any] | None = reply.get("response")
        return response

    def _read_line(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            raise InvocationError(f"no reply within {timeout_s:.0f} s (the function's timeout)")
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise InvocationError(f"the environment exited ({code}) during the invocation")
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close_pipes()
        self.proc = None

    def stop(self, timeout_s: float = 5.0) -> None:
        """End the environment: closing its input ends its loop between invocations."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self._close_pipes()
        self.proc = None

    def _close_pipes(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):  # a dead reader: nothing left to flush to
                self.proc.stdin.close()
            self.proc.stdout.close()


# --- the process ---------------------------------------------------------------------------------

# What every handler imports; the template imports it once, each environment inherits it.
TEMPLATE_PRELOAD = [
    "embedded.environment",
    "boto3",
    "aws_lambda_powertools.logging",
    "aws_lambda_powertools.metrics",
    "aws_lambda_powertools.utilities.batch",
    "pagefleet.completion",
    "pagefleet.splitting",
    "embedded.template",  # imported last: it reads the clients' service models
]
_template = multiprocessing.get_context("forkserver")
_template.set_forkserver_preload(TEMPLATE_PRELOAD)
_starting = threading.Lock()  # pollers start environments from their own threads
# The read end of a pipe whose write end only this process holds, never sent, never closed: every
# environment gets the read end, and its end of file means this process is gone.
_parent_alive: Connection | None = None


def _alive_pipe() -> Connection:
    global _parent_alive
    if _parent_alive is None:
        read_end, _ = os.pipe()  # the write end stays open until this process ends
        _parent_alive = Connection(read_end, writable=False)
    return _parent_alive


class ForkedProcess:
    """An environment's process: what :class:`Environment` uses of :class:`subprocess.Popen`
    (pipes, ``poll``, ``wait``, ``kill``) for a process forked from the template."""

    def __init__(
        self,
        process: multiprocessing.process.BaseProcess,
        stdin: IO[bytes],
        stdout: IO[bytes],
        stderr: IO[bytes] | None,
    ) -> None:
        self._process = process
        self.pid = process.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr

    @classmethod
    def start(cls, name: str, handler: str, env: dict[str, str], *, logs: bool) -> ForkedProcess:
        """``logs``: the function's output on a pipe of its own (``stderr``); else on ours."""
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        logs_r, logs_w = os.pipe() if logs else (None, os.dup(2))
        theirs = [
            Connection(requests_r, writable=False),
            Connection(replies_w, readable=False),
            Connection(logs_w, readable=False),
        ]
        try:
            with _starting:
                process = _template.Process(
                    target=_serve,
                    args=(handler, env, *theirs, _alive_pipe()),
                    name=name,
                    daemon=True,
                )
                process.start()
        finally:
            for connection in theirs:  # the child has its copies now
                connection.close()
        return cls(
            process,
            os.fdopen(requests_w, "wb"),
            os.fdopen(replies_r, "rb"),
            os.fdopen(logs_r, "rb") if logs_r is not None else None,
        )

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(self._process.name, timeout or 0.0)
        return code

    def kill(self) -> None:
        self._process.kill()


def _load(target: str) -> Callable[[dict[str, Any], Any], Any]:
    module_name, _, function = target.partition(":")
    handler: Callable[[dict[str, Any], Any], Any] = getattr(
        importlib.import_module(module_name), function
    )
    return handler


def _end_with_parent(alive: Connection) -> None:
    """End this process once the process that started it is gone (kill -9 of `pagefleet up`,
    SIGTERM of `pagefleet run`), mid-invocation too: nothing is left to take its reply or delete
    its batch's messages, which come back when their visibility lapses (rule 1)."""
    os.read(alive.fileno(), 1)  # nothing is ever written: this returns at the end of file
    os._exit(1)


def _serve(
    target: str,
    env: dict[str, str],
    requests: Connection,
    replies: Connection,
    logs: Connection,
    alive: Connection,
) -> None:
    """The environment's loop, in the forked process: one reply line per request line."""
    threading.Thread(target=_end_with_parent, args=(alive,), daemon=True).start()
    # Its own session: a terminal's Ctrl-C reaches the embedded stack only, which drains.
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.clear()
    os.environ.update(env)
    # Everything the function writes, to fd 1, fd 2, sys.stdout or sys.stderr, is its logs.
    os.dup2(logs.fileno(), 1)
    os.dup2(logs.fileno(), 2)
    logs.close()
    sys.stdout = sys.stderr
    handler = _load(target)
    with (
        open(os.dup(requests.fileno()), encoding="utf-8") as lines,
        open(os.dup(replies.fileno()), "w", encoding="utf-8", buffering=1) as out,
    ):
        requests.close()
        replies.close()
        out.write(json.dumps({"ready": True}) + "\n")
        for line in lines:
            request = json.loads(line)
            context = FakeLambdaContext(**request["context"])
            try:
                reply = {"response": handler(request["event"], context)}
            except Exception as exc:  # the whole batch fails, as when a Lambda function raises
                traceback.print_exc()
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            sys.stderr.flush()
            out.write(json.dumps(reply, default=str) + "\n")
