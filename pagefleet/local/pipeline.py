"""The whole pipeline on one machine: moto, the stack, the handlers and the runner supervisor.

The handlers run in this process behind :class:`Dispatcher` threads, as Lambda would run them;
the runners run as ``python -m runner``, exactly the command the ECS task runs.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from pagefleet.local.dispatch import Dispatcher
from pagefleet.local.provision import Stack, create_stack
from pagefleet.local.server import MotoServer
from pagefleet.settings import Settings, settings_env
from runner.health import RunnerHealth

# The handlers' JSON logs and EMF metrics belong in CloudWatch, not in a terminal.
QUIET_HANDLERS = {"POWERTOOLS_LOG_LEVEL": "WARNING", "POWERTOOLS_METRICS_DISABLED": "true"}
# A short long-poll lets the local stack stop within seconds: an idle worker finishes its poll
# (and releases anything it brings) before it exits.
LOCAL_POLL_WAIT_S = 2


class LocalPipeline:
    def __init__(
        self,
        settings: Settings,
        *,
        workers: int | None = None,
        runner_env: dict[str, str] | None = None,
        server: MotoServer | None = None,
        log_file: str | None = None,
        start_runners: bool = True,
        stack: Stack | None = None,
    ) -> None:
        self.settings = settings.model_copy(
            update={"poll_wait_s": min(settings.poll_wait_s, LOCAL_POLL_WAIT_S)}
        )
        self.workers = workers
        self.runner_env = runner_env or {}
        self._own_server = server is None
        self.server = server or MotoServer()
        self.log_file = log_file
        self._start_runners = start_runners
        self.stack = stack  # given: resources made elsewhere (Terraform), not provisioned
        self.dispatcher: Dispatcher | None = None
        self.runner: subprocess.Popen[bytes] | None = None
        self._runner_tmp: Path | None = None
        self._health_file: Path | None = None
        self._saved_env: dict[str, str | None] = {}

    def start(self) -> Stack:
        url = self.server.start() if self._own_server else self.server.url
        self.settings = self.settings.model_copy(update={"endpoint_url": url})
        if self.stack is None:
            self.stack = create_stack(self.settings)
        self._set_env({**settings_env(self.settings), **QUIET_HANDLERS})
        if self._start_runners:
            self.start_runners()
        self.dispatcher = self._dispatcher(self.stack)
        self.dispatcher.start()
        return self.stack

    def _dispatcher(self, stack: Stack) -> Dispatcher:
        # Imported here: the handlers read their settings from the environment set above.
        from handlers import completion, splitter

        dispatcher = Dispatcher(stack.sqs, self.settings.region)
        dispatcher.add(
            "splitter",
            stack.queue_urls["ingest"],
            stack.queue_arns["ingest"],
            splitter.lambda_handler,
        )
        dispatcher.add(
            "completion",
            stack.queue_urls["completion"],
            stack.queue_arns["completion"],
            completion.lambda_handler,
        )
        dispatcher.add(
            "upload-dead-letters",
            stack.dlq_urls["ingest"],
            stack.dlq_arns["ingest"],
            splitter.dead_letter_handler,
        )
        dispatcher.add(
            "chunk-dead-letters",
            stack.dlq_urls["chunks"],
            stack.dlq_arns["chunks"],
            completion.dead_letter_handler,
        )
        return dispatcher

    def start_runners(self) -> None:
        assert self.stack is not None
        # The runner's own TMPDIR: its state folder and chunk folders go with it, and its health
        # file lands in it, where wait_ready reads how many workers are warm.
        self._runner_tmp = Path(tempfile.mkdtemp(prefix="pagefleet-local-runner-"))
        env = {
            **os.environ,
            **settings_env(self.settings),
            "TMPDIR": str(self._runner_tmp),
            "PAGEFLEET_HEALTH_FILE": str(self._runner_tmp / "health.json"),
            **self.runner_env,
        }
        if self.workers:
            env["PAGEFLEET_WORKERS"] = str(self.workers)
        self._health_file = Path(env["PAGEFLEET_HEALTH_FILE"])
        log = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL  # noqa: SIM115
        self.runner = subprocess.Popen(
            [sys.executable, "-m", "runner"],
            env=env,
            stdout=log,
            stderr=log,
        )

    def health(self) -> RunnerHealth | None:
        """What the runner's supervisor last wrote to its health file (runner/health.py): per
        worker, its pid, the chunks it holds and whether it is warm (it has built its converter
        and opened the chunks queue); None before the first write."""
        return RunnerHealth.read(self._health_file) if self._health_file else None

    def ready_workers(self) -> int:
        health = self.health()
        return health.ready_workers if health else 0

    def wait_ready(self, workers: int | None = None, timeout_s: float = 120) -> None:
        """Return once ``workers`` runner workers (default: as many as were asked for) are
        warm, so that what is timed next leaves process start-up out."""
        expected = workers or self.workers or self.settings.workers or os.cpu_count() or 1
        deadline = time.monotonic() + timeout_s
        while self.ready_workers() < expected:
            if self.runner is None or self.runner.poll() is not None:
                raise RuntimeError("the runner is not running")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.ready_workers()} of {expected} workers ready")
            time.sleep(0.05)  # a file written by another process: nothing to await

    def stop_runners(self, timeout_s: float = 60) -> int | None:
        if self.runner is None:
            return None
        self.runner.send_signal(signal.SIGTERM)
        try:
            return self.runner.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.runner.kill()
            return self.runner.wait()
        finally:
            self.runner = None
            self._health_file = None
            if self._runner_tmp is not None:
                shutil.rmtree(self._runner_tmp, ignore_errors=True)
                self._runner_tmp = None

    def stop(self) -> None:
        self.stop_runners()
        if self.dispatcher is not None:
            self.dispatcher.stop()
        self._restore_env()
        if self._own_server:
            self.server.stop()

    def _set_env(self, values: dict[str, str]) -> None:
        for name, value in values.items():
            self._saved_env.setdefault(name, os.environ.get(name))
            os.environ[name] = value

    def _restore_env(self) -> None:
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env.clear()

    def __enter__(self) -> LocalPipeline:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
