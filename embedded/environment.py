"""A Lambda execution environment, locally: a process that imports one handler once and runs one
invocation at a time, for as long as it lives.

Lambda runs concurrent invocations of a function in separate environments, so a handler's
module-level objects (powertools' batch processor, its metrics set, cached clients) belong to one
invocation at a time; threads in one process would share them. Each environment here is a
``python -m embedded.environment MODULE:FUNCTION`` child:

- its standard input takes one JSON line per invocation (the event and the context's fields);
- its standard output returns one JSON line per invocation (the handler's reply, or its error);
- whatever the function prints or logs (powertools' JSON logs, EMF metric lines, tracebacks) goes
  to its standard error, which the embedded stack routes as CloudWatch Logs would be
  (:mod:`embedded.logs`).

An invocation that runs past the function's timeout, or an environment that dies, fails the
whole batch, as on AWS; the next invocation starts a fresh environment (a cold start).
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
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
        self.proc: subprocess.Popen[bytes] | None = None
        self._ready = False
        self.cold_starts = 0
        self.invocations = 0

    def start(self) -> None:
        """Start the process (importing the handler happens in the background)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "embedded.environment", self.spec.handler],
            env={**os.environ, **self.spec.env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if self.spec.attach_logs else None,
            # Its own session: a terminal's Ctrl-C reaches the embedded stack only, which drains.
            start_new_session=True,
        )
        if self.spec.attach_logs is not None:
            assert self.proc.stderr is not None
            self.spec.attach_logs(self.name, self.proc.stderr)
        self._ready = False
        self.cold_starts += 1

    def __call__(self, event: dict[str, Any], context: FakeLambdaContext) -> dict[str, Any] | None:
        self.start()
        assert self.proc is not None and self.proc.stdin is not None
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
        assert self.proc is not None and self.proc.stdout is not None
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
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()
        self._close_pipes()
        self.proc = None

    def _close_pipes(self) -> None:
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()


# --- the child ----------------------------------------------------------------------------------


def _load(target: str) -> Callable[[dict[str, Any], Any], Any]:
    module_name, _, function = target.partition(":")
    handler: Callable[[dict[str, Any], Any], Any] = getattr(
        importlib.import_module(module_name), function
    )
    return handler


def main(argv: list[str]) -> int:
    # The reply channel is the original standard output; everything the function writes, to
    # fd 1 or sys.stdout, joins its logs on standard error.
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the embedded stack decides when to stop
    handler = _load(argv[0])
    replies.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        context = FakeLambdaContext(**request["context"])
        try:
            reply = {"response": handler(request["event"], context)}
        except Exception as exc:  # the whole batch fails, as when a Lambda function raises
            traceback.print_exc()
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stderr.flush()
        replies.write(json.dumps(reply, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
