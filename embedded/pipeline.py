"""The whole pipeline on one machine: moto, the stack, the handlers and the runner supervisor.

The handlers run as Lambda runs them: event source mappings (:class:`Dispatcher`) poll the
queues here and invoke each function in execution environments of its own, processes that
import the handler once (:mod:`embedded.environment`), several at once under a backlog.
The runners run as ``python -m runner``, exactly the command the ECS task runs. Their logs,
and the environments', go through one :class:`LogRouter`.

The moto server is this process's own, one given (tests share one), or none: with
``settings.endpoint_url`` set and no server given, the pipeline runs against that endpoint and
uses the stack it finds there, creating only what is missing.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from embedded.dispatch import Dispatcher, EnvironmentSpec
from embedded.janitor import Janitor
from embedded.logs import RUNNER, LogRouter
from embedded.poller_sqs import PollerSQS
from embedded.provision import Stack, create_stack, open_stack
from embedded.server import MotoServer, StopOnExit
from pagefleet import aws
from pagefleet.queues import queue_depth
from pagefleet.settings import Settings, settings_env
from pagefleet.stack import BATCH_SIZES, HANDLER_TIMEOUT_S
from runner.health import RunnerHealth

log = logging.getLogger(__name__)

# Against an endpoint of another process, a short long-poll lets the local stack stop within a
# second: an idle worker finishes its poll (and releases anything it brings) before it exits,
# so an idle worker polls once a second. With the moto server in this process the pollers keep
# the settings' long poll (20 s, as Lambda's event source mappings and the runners on AWS
# poll), and a stop ends the polls waiting on its queues at once (MotoServer.release_polls):
# an idle stack no longer costs the server a request a second per poller.
LOCAL_POLL_WAIT_S = 1
# Concurrent environments per function at most (Lambda scales an SQS mapping up with the
# backlog); the dead-letter consumers see a trickle. Never more than the machine's cores
# (default_concurrency): an environment's work is CPU (pdfium, the renderer, the requests the
# server in this process answers), so more only contend, and each costs a start.
CONCURRENCY = {
    "splitter": 4,
    "completion": 3,
    "upload-dead-letters": 1,
    "chunk-dead-letters": 1,
    "completion-dead-letters": 1,
}
# name: (queue role, whether it consumes that role's DLQ, entry point, Terraform's key for the
# function). Every DLQ has one (rule 3), as on AWS (terraform/modules/functions).
FUNCTIONS = {
    "splitter": ("ingest", False, "handlers.splitter:lambda_handler", "splitter"),
    "completion": ("completion", False, "handlers.completion:lambda_handler", "completion"),
    "upload-dead-letters": (
        "ingest",
        True,
        "handlers.splitter:dead_letter_handler",
        "upload_dead_letter",
    ),
    "chunk-dead-letters": (
        "chunks",
        True,
        "handlers.completion:dead_letter_handler",
        "dead_letter",
    ),
    "completion-dead-letters": (
        "completion",
        True,
        "handlers.completion:completion_dead_letter_handler",
        "completion_dead_letter",
    ),
}


def default_concurrency(cores: int | None = None) -> dict[str, int]:
    """:data:`CONCURRENCY` on a machine of ``cores`` (this one's by default)."""
    cores = cores or os.cpu_count() or 1
    return {name: min(most, cores) for name, most in CONCURRENCY.items()}


class RunnerFailed(RuntimeError):
    """The runner stopped on its own, so nothing converts what is uploaded; the message says
    why (a configuration error, as the supervisor wrote it in its health file, with the fix)."""


@dataclass
class DrainReport:
    drained: bool
    seconds: float
    uploads_waiting: int  # in the ingest queue, never split
    chunks_left: int  # on the chunks queue, converting or waiting
    completions_left: int


class LocalPipeline(StopOnExit):
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
        logs: LogRouter | None = None,
        keep_jobs_s: float | None = None,
        functions_endpoint_url: str | None = None,
        concurrency: dict[str, int] | None = None,
        function_env: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        """``keep_jobs_s``: delete each job's internals this long after it ended (the janitor;
        None keeps them, as tests that read them need). ``functions_endpoint_url``: the endpoint
        the handlers and runners use, when it is not the stack's (a fault-injecting proxy).
        ``function_env``: more environment for each function, by its entry point (its own
        credentials, as each Lambda has its own role)."""
        self.workers = workers
        self.runner_env = runner_env or {}
        self.external = server is None and settings.endpoint_url is not None
        self._own_server = server is None and not self.external
        self.server = server or (None if self.external else MotoServer())
        # The polls of a proxy in between (functions_endpoint_url) cannot be released.
        releasable = self.server is not None and functions_endpoint_url is None
        self.settings = settings.model_copy(
            update={
                "poll_wait_s": settings.poll_wait_s
                if releasable
                else min(settings.poll_wait_s, LOCAL_POLL_WAIT_S)
            }
        )
        self._own_logs = logs is None
        self.logs = logs or LogRouter(log_file=log_file)
        self._start_runners = start_runners
        self.stack = stack  # given: resources made elsewhere (Terraform), not provisioned
        self.keep_jobs_s = keep_jobs_s
        self.functions_endpoint_url = functions_endpoint_url
        self.concurrency = {**default_concurrency(), **(concurrency or {})}
        self.function_env = function_env
        self.dispatcher: Dispatcher | None = None
        self.janitor: Janitor | None = None
        self.runner: subprocess.Popen[bytes] | None = None
        self._stopping: threading.Thread | None = None  # begin_stop's
        self._runner_tmp: Path | None = None
        self._health_file: Path | None = None
        self._waiting_lock = threading.Lock()
        self._waiting: list[threading.Event] = []  # woken when the runner exits (wait())
        self._runner_exited = False

    @property
    def function_settings(self) -> Settings:
        """What the handlers and the runner are configured with."""
        url = self.functions_endpoint_url or self.settings.endpoint_url
        return self.settings.model_copy(update={"endpoint_url": url})

    def start(self) -> Stack:
        if self.server is not None:
            url = self.server.start() if self._own_server else self.server.url
            self.settings = self.settings.model_copy(update={"endpoint_url": url})
        else:
            aws.use_fake_credentials()  # a moto-like endpoint takes any; real ones are kept
        if self.stack is None:
            self.stack = open_stack(self.settings) if self.external else create_stack(self.settings)
        self.dispatcher = dispatcher = Dispatcher(
            # Lambda's pollers run on AWS's hosts, not ours: with moto in this process, their
            # stand-in reads its queues directly (embedded/poller_sqs.py), not over HTTP.
            PollerSQS(self.settings.region) if self.server is not None else self.stack.sqs,
            self.settings.region,
            wait_s=self.settings.poll_wait_s,
            release=self._release_polls,
        )
        if self.keep_jobs_s is not None:
            self.janitor = Janitor(
                self.stack.s3,
                self.settings.bucket,
                grace_s=self.keep_jobs_s,
                busy=dispatcher.backlogged,
            )
            self.janitor.start()
        if self._start_runners:
            self.start_runners()
        self._map_functions(dispatcher, self.stack)
        dispatcher.start()
        return self.stack

    def _release_polls(self, queue_urls: list[str]) -> None:
        if self.server is not None:
            self.server.release_polls(self.settings.region, queue_urls)

    def _function_env(self) -> dict[str, str]:
        chatty = self.logs.verbose or self.logs.log_file is not None
        return {
            **settings_env(self.function_settings),
            "PYTHONUNBUFFERED": "1",
            "POWERTOOLS_LOG_LEVEL": "INFO" if chatty else "WARNING",
            # Metrics on: powertools then flushes (and clears) them after every invocation. Off,
            # it keeps every value and prints them anyway at 100 (its overflow path ignores the
            # switch): the long EMF arrays. The lines go where CloudWatch Logs would be.
            "POWERTOOLS_METRICS_DISABLED": "false",
            "POWERTOOLS_DEV": "false",
        }

    def _map_functions(self, dispatcher: Dispatcher, stack: Stack) -> None:
        env = self._function_env()
        for name, (role, dead_letters, handler, key) in FUNCTIONS.items():
            own = self.function_env(handler) if self.function_env else {}
            spec = EnvironmentSpec(
                handler=handler,
                env={**env, **own},
                timeout_s=HANDLER_TIMEOUT_S,
                attach_logs=self.logs.attach,
            )
            urls, arns = (
                (stack.dlq_urls, stack.dlq_arns)
                if dead_letters
                else (
                    stack.queue_urls,
                    stack.queue_arns,
                )
            )
            observer = None
            if self.janitor is not None and name == "completion":
                observer = self.janitor.observe
            dispatcher.add(
                name,
                urls[role],
                arns[role],
                spec,
                BATCH_SIZES[key],
                concurrency=self.concurrency.get(name, 1),
                observer=observer,
                # A dead letter is rare: its function starts on the first one rather than
                # costing every stack a process (~0.6 CPU s of imports) it may never use.
                warm=not dead_letters,
            )

    def start_runners(self) -> None:
        assert self.stack is not None
        # The runner's own TMPDIR: its state folder and chunk folders go with it, and its health
        # file lands in it, where wait_ready reads how many workers are warm.
        self._runner_tmp = Path(tempfile.mkdtemp(prefix="pagefleet-local-runner-"))
        env = {
            **os.environ,
            **settings_env(self.function_settings),
            "PYTHONUNBUFFERED": "1",
            "TMPDIR": str(self._runner_tmp),
            "PAGEFLEET_HEALTH_FILE": str(self._runner_tmp / "health.json"),
            # Its standard input is a pipe only this process writes to: it ends when this
            # process does, however it ends, and the runner then drains and stops (at once if
            # nothing answers at its endpoint: this process's embedded server went with it).
            "PAGEFLEET_PARENT_FD": "0",
            **self.runner_env,
        }
        if self.workers:
            env["PAGEFLEET_WORKERS"] = str(self.workers)
        self._health_file = Path(env["PAGEFLEET_HEALTH_FILE"])
        self.runner = subprocess.Popen(
            [sys.executable, "-m", "runner"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own session: a terminal's Ctrl-C reaches this process, which decides.
            start_new_session=True,
        )
        assert self.runner.stdout is not None
        self.logs.attach(RUNNER, self.runner.stdout)
        with self._waiting_lock:
            self._runner_exited = False
        threading.Thread(
            target=self._watch_runner, args=(self.runner,), name="runner-exit", daemon=True
        ).start()

    def _watch_runner(self, runner: subprocess.Popen[bytes]) -> None:
        runner.wait()
        with self._waiting_lock:
            if runner is not self.runner:
                return  # stopped by stop_runners (and perhaps replaced since): no failure
            self._runner_exited = True
            for stop in self._waiting:
                stop.set()

    def wait(self, stop: threading.Event) -> None:
        """Block until ``stop`` is set (a signal handler's event); raise :class:`RunnerFailed`
        as soon as the runner stops on its own, setting ``stop`` too: the stack must stop."""
        with self._waiting_lock:
            if self._runner_exited:
                stop.set()
            self._waiting.append(stop)
        try:
            stop.wait()
        finally:
            with self._waiting_lock:
                self._waiting.remove(stop)
        if (failure := self.runner_failure()) is not None:
            raise failure

    def runner_failure(self) -> RunnerFailed | None:
        """Why the runner exited, if it did on its own (not by stop_runners)."""
        if self.runner is None or (code := self.runner.poll()) is None:
            return None
        health = self.health()
        if health is not None and health.error is not None:
            return RunnerFailed(health.error)
        return RunnerFailed(f"the runner exited with code {code}; its log says why")

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
            if self.runner is None:
                raise RunnerFailed("the runner is not running")
            if (failure := self.runner_failure()) is not None:
                raise failure
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.ready_workers()} of {expected} workers ready")
            time.sleep(0.05)  # a file written by another process: nothing to await

    # --- stopping ---

    def in_flight(self) -> DrainReport:
        """What is on the queues now, and whether nothing is (no invocation running either)."""
        assert self.stack is not None
        counts = {
            role: sum(queue_depth(self.stack.sqs, self.stack.queue_urls[role]))
            for role in ("ingest", "chunks", "completion")
        }
        busy = self.dispatcher.busy() if self.dispatcher else 0
        return DrainReport(
            drained=counts["chunks"] == 0 and counts["completion"] == 0 and busy == 0,
            seconds=0.0,
            uploads_waiting=counts["ingest"],
            chunks_left=counts["chunks"],
            completions_left=counts["completion"],
        )

    def drain(self, timeout_s: float, hurry: threading.Event | None = None) -> DrainReport:
        """Take no new upload; let the jobs already split finish (their chunks convert, their
        completions publish) for at most ``timeout_s``, or until ``hurry`` is set.

        Uploads not yet split stay on the ingest queue: on a server that outlives this process
        they are split by the next start; the embedded server goes with it.
        """
        started = time.monotonic()
        deadline = started + timeout_s
        if self.dispatcher is not None:
            self.dispatcher.pause("splitter", timeout_s)
        while True:
            report = self.in_flight()
            report.seconds = time.monotonic() - started
            if report.drained or time.monotonic() >= deadline:
                return report
            if self.runner is None or self.runner.poll() is not None:
                return report  # nothing converts what is left
            if hurry is not None and hurry.wait(0.2):
                return report
            if hurry is None:
                time.sleep(0.2)  # queue depths on a server: nothing to await but a look

    def stop_runners(self, timeout_s: float = 60) -> int | None:
        runner, self.runner = self.runner, None  # from now on its exit is no failure
        if runner is None:
            return None
        runner.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                # Idle workers drain once their long poll ends: end it (again and again, as a
                # worker may start its last poll just after a release).
                if self.stack is not None:
                    self._release_polls([self.stack.queue_urls["chunks"]])
                try:
                    return runner.wait(max(0.0, min(0.1, deadline - time.monotonic())))
                except subprocess.TimeoutExpired:
                    if time.monotonic() >= deadline:
                        raise
        except subprocess.TimeoutExpired:
            runner.kill()
            return runner.wait()
        finally:
            if runner.stdin is not None:
                runner.stdin.close()
            self._health_file = None
            if self._runner_tmp is not None:
                shutil.rmtree(self._runner_tmp, ignore_errors=True)
                self._runner_tmp = None

    def begin_stop(self) -> None:
        """Start :meth:`stop` in the background: the functions' pollers and environments and
        the runner wind down while the caller goes on (``pagefleet run`` fetching its last
        outputs); :meth:`stop` waits for them and stops the rest."""
        if self._stopping is None:
            self._stopping = threading.Thread(
                target=self._stop_functions_and_runner, name="stack-stop", daemon=True
            )
            self._stopping.start()

    def _stop_functions_and_runner(self) -> None:
        if self.dispatcher is not None:
            self.dispatcher.stop(wait=False)  # its pollers end their long polls meanwhile
        self.stop_runners()
        if self.dispatcher is not None:
            self.dispatcher.stop()

    def stop(self) -> None:
        """Stop at once (:meth:`drain` first lets the jobs in flight finish)."""
        if self._stopping is None:
            self._stop_functions_and_runner()
        else:
            self._stopping.join()
            self._stopping = None
        if self.janitor is not None:
            self.janitor.stop()
        if self._own_server and self.server is not None:
            self.server.stop()
        if self._own_logs:
            self.logs.close()
        else:
            self.logs.wait()

    def __enter__(self) -> LocalPipeline:
        self.start()
        return self


def terminal_logs(verbose: bool, log_file: str | None, terminal: IO[str] | bool) -> LogRouter:
    """A router for a command: this process's own log records join the stack's."""
    from embedded.logs import RouterHandler

    router = LogRouter(verbose=verbose, log_file=log_file, terminal=terminal)
    handler = RouterHandler(router)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO if (verbose or log_file) else logging.WARNING)
    return router
