"""The model servers surya spawns for marker: warm before the first chunk, their logs in ours, a
hung one killed so that surya starts it again.

What surya-ocr 0.22.1 does with them (read from its source):

- The OCR-error model, and in fast mode or without OCR the rf-detr layout model, run in a
  batch-service server per machine. The first client spawns ``python -m <server module> --host
  H --port P --checkpoint C`` in a session of its own, stdout and stderr appended to
  ``~/.cache/datalab/surya/<backend>_server.log`` (surya/common/batch_service/client.py:47-73),
  and only on its first request, not when marker builds its models (client.py:75-81,119-131).
- Spawning holds an flock on ``<backend>_server.lock`` while it writes the sentinel
  ``<backend>_server.json`` (``port``, ``pid``) and waits for ``/health``
  (surya/inference/backends/spawn.py:267-351); any client attaches to the server its sentinel
  names if that answers ``/health`` (spawn.py:240-259).
- ``/health`` is answered by the HTTP threads while one batch thread runs the model
  (surya/common/batch_service/server.py:63-121,139-147), so a batch stuck on the GPU leaves
  ``/health`` green while every request waits: 600 s in the server (server.py:164-166), 600 s in
  the client, which then attaches to the same healthy server and waits again
  (client.py:119-143; surya/settings.py:145).
- The server outlives the process that spawned it (client.py:91-95), so restarting the
  conversion process alone attaches it to the same hung server.

Hence :class:`ModelServers`, built by the conversion process when it starts (after a chunk
timed out too): it probes a running server with one request of its own and, if that does not
complete, kills it and deletes its sentinel under surya's own lock, so the request marker makes
next spawns a fresh one; then it sends each server one request through marker's own clients, so
a cold machine starts them within the start limit rather than inside the first chunk's budget.
A :class:`LogForwarder` copies the servers' log lines into this process's stderr.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import io
import itertools
import json
import logging
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import psutil

if TYPE_CHECKING:
    from pagefleet.settings import Settings

log = logging.getLogger("pagefleet.marker")

# surya/inference/backends/spawn.py:27-38 and client.py:63-65; the host is surya's default
# (surya/settings.py:141,180), which pagefleet never changes.
SURYA_CACHE = "~/.cache/datalab/surya"
HOST = "127.0.0.1"
# One probe item takes milliseconds on a GPU even queued behind every worker's batches; a server
# that has not answered it within a fifth of a chunk's budget (at most this) is not working.
PROBE_MAX_S = 60.0
LOCK_POLL_S = 0.1
FORWARD_POLL_S = 1.0
# How often a warm-up looks whether the server it waits for is still alive.
WATCH_S = 0.5
# Bounds on what the forwarder holds: one read, and one line (a longer one is cut).
READ_MAX = 64 * 1024
LINE_MAX = 4096


class ModelServerError(RuntimeError):
    """A model server marker needs is not there; raised before any chunk is taken."""


def cache_dir() -> Path:
    return Path(SURYA_CACHE).expanduser()


def _blank_page() -> Any:
    from PIL import Image

    return Image.new("RGB", (64, 64), "white")


def _png(image: Any) -> str:
    # surya/common/batch_service/serialize.py:12-16, what the layout client sends per page.
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


@dataclass(frozen=True)
class Server:
    """One of surya's batch-service servers, as marker reaches it."""

    backend: str  # surya's name for its sentinel, lock and log files
    model: str  # the key of its client in marker's create_model_dict()
    warm: Callable[[Any], object]  # one request through that client
    probe: Callable[[], dict[str, Any]]  # one request's body, sent by us

    def sentinel(self) -> Path:
        return cache_dir() / f"{self.backend}_server.json"

    def lock(self) -> Path:
        return cache_dir() / f"{self.backend}_server.lock"

    def log(self) -> Path:
        return cache_dir() / f"{self.backend}_server.log"


# surya/ocr_error/client.py:20-23 (one text per item) and surya/fast_layout/client.py:40-48
# (one page image per item, the threshold and reading-order flag as params).
OCR_ERROR = Server(
    "ocr_error",
    "ocr_error_model",
    warm=lambda model: model(["warm-up"]),
    probe=lambda: {"items": ["warm-up"], "params": {}},
)
FAST_LAYOUT = Server(
    "fast_layout",
    "fast_layout_model",
    warm=lambda model: model([_blank_page()]),
    probe=lambda: {
        "items": [_png(_blank_page())],
        "params": {"threshold": None, "use_order": False},
    },
)


def servers_in_use(settings: Settings) -> list[Server]:
    """The servers marker calls with these settings: the OCR-error model unless OCR is off
    (marker/builders/line.py:200-206), the rf-detr layout in fast mode or without OCR
    (marker/builders/layout.py:88-93)."""
    servers = []
    if not settings.marker_disable_ocr:
        servers.append(OCR_ERROR)
    if settings.marker_mode == "fast" or settings.marker_disable_ocr:
        servers.append(FAST_LAYOUT)
    return servers


def read_sentinel(server: Server) -> dict[str, Any] | None:
    try:
        data = json.loads(server.sentinel().read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _request(url: str, timeout_s: float, body: dict[str, Any] | None = None) -> bool:
    """True if the server answered 200 within ``timeout_s``."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            reply.read()
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):  # refused, reset, or timed out
        return False


@contextlib.contextmanager
def surya_lock(server: Server, deadline_s: float) -> Iterator[None]:
    """Hold the flock surya spawns under (``filelock`` takes ``fcntl.flock`` on this file), so
    no client spawns or replaces the server meanwhile."""
    server.lock().parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(server.lock(), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                # Its holder is spawning a server, which is bounded by surya's start limit.
                if time.monotonic() > deadline:
                    raise ModelServerError(
                        f"surya's {server.lock()} was held for {deadline_s:g} s"
                    ) from None
                time.sleep(LOCK_POLL_S)
        yield
    finally:
        os.close(fd)


def _exited(pid: int) -> bool:
    """Ended, or a zombie its spawner has not reaped (surya's Popen child is reaped only when the
    spawner waits on it, which it does not while it polls ``/health``)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _serves_on(pid: int, port: int) -> bool:
    """The process is a server spawned for this port (client.py:48-61 passes ``--port P``), not
    another that took a dead server's pid."""
    try:
        cmdline = psutil.Process(pid).cmdline()
    except psutil.Error:
        return False
    return ("--port", str(port)) in itertools.pairwise(cmdline)


class ModelServers:
    """The servers one conversion process uses: checked and warmed when it starts."""

    def __init__(self, servers: list[Server], models: dict[str, Any], settings: Settings) -> None:
        self.servers = servers
        self.models = models
        self.startup_s = settings.marker_server_startup_timeout_s
        self.probe_s = min(PROBE_MAX_S, settings.convert_timeout_s / 5)
        self.restarted: list[str] = []

    def start(self) -> None:
        """Kill a hung server, then bring each up with one request; raise
        :class:`ModelServerError` if one does not answer within the start limit."""
        for server in self.servers:
            if self.recover(server):
                self.restarted.append(server.backend)
            self.warm(server)

    def recover(self, server: Server) -> bool:
        """True if the server the sentinel names answers ``/health`` but not a request within
        the probe time, and was killed."""
        sentinel = read_sentinel(server)
        if sentinel is None or not isinstance(port := sentinel.get("port"), int):
            return False
        base = f"http://{HOST}:{port}"
        if not _request(f"{base}/health", self.probe_s):
            return False  # gone or still loading: surya's own attach spawns or waits
        if _request(f"{base}/v1/infer", self.probe_s, server.probe()):
            return False
        pid = sentinel.get("pid")
        log.warning(
            "model server %s (pid %s, port %d) answers /health but not a request in %g s; "
            "killing it so that surya starts it again",
            server.backend,
            pid,
            port,
            self.probe_s,
        )
        with surya_lock(server, self.startup_s):
            if read_sentinel(server) != sentinel:
                return True  # another conversion process replaced it meanwhile
            if isinstance(pid, int) and _serves_on(pid, port):
                # Its own session (client.py:68-70): the group holds whatever it started.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
            server.sentinel().unlink(missing_ok=True)
        return True

    def warm(self, server: Server) -> None:
        """One request through marker's client: spawns or attaches the server, as the first
        chunk would. Run in a thread, as a hung server would hold the call for surya's 600 s."""
        failure: list[BaseException] = []

        def call() -> None:
            try:
                server.warm(self.models[server.model])
            except BaseException as exc:
                failure.append(exc)

        before = read_sentinel(server)
        thread = threading.Thread(target=call, name=f"warm-{server.backend}", daemon=True)
        thread.start()
        deadline = time.monotonic() + self.startup_s + self.probe_s
        while thread.is_alive() and time.monotonic() < deadline:
            thread.join(WATCH_S)
            self._raise_if_it_died_starting(server, before)
        if thread.is_alive():
            raise ModelServerError(
                f"marker's {server.backend} server did not answer a request within "
                f"{self.startup_s + self.probe_s:g} s of being started (its log: {server.log()})"
            )
        if failure:
            raise ModelServerError(
                f"marker's {server.backend} server failed to start: {failure[0]}"
            ) from failure[0]

    @staticmethod
    def _raise_if_it_died_starting(server: Server, before: dict[str, Any] | None) -> None:
        """surya polls ``/health`` of a server it spawned for the whole start limit, even after
        the server has exited (spawn.py:58-66, 339-351: no look at the process), so a server that
        crashes as it loads (no weights, no GPU memory) would hold the start for 300 s. The
        sentinel surya writes before that wait names the process: once it is gone, so is the
        start. Only a sentinel written since the warm-up began counts: an older one may name a
        server that died long ago, which surya replaces."""
        sentinel = read_sentinel(server)
        pid = sentinel.get("pid") if sentinel else None
        if sentinel == before or not isinstance(pid, int) or not _exited(pid):
            return
        raise ModelServerError(
            f"marker's {server.backend} server (pid {pid}) exited while starting "
            f"(its log: {server.log()})"
        )


@dataclass
class _Tail:
    server: Server
    fd: int | None = None  # the forwarding lock, while this process holds it


class LogForwarder:
    """Copies each server's new log lines into ``stream`` (stderr, which reaches CloudWatch),
    tagged with the server's name. Every conversion process on the machine runs one, and the
    one holding the flock on ``<log>.forward`` copies; the offset it reached is kept in that
    file, so the next holder goes on from there when it exits and no line is copied twice."""

    def __init__(self, servers: list[Server], stream: IO[str] | None = None) -> None:
        self.tails = [_Tail(server) for server in servers]
        self._stream = stream
        self._stop = threading.Event()
        self._polling = threading.Lock()  # the thread's polls and a last one by the owner
        self._thread = threading.Thread(target=self._run, name="server-logs", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        for tail in self.tails:
            if tail.fd is not None:
                os.close(tail.fd)
                tail.fd = None

    def _run(self) -> None:
        while not self._stop.wait(FORWARD_POLL_S):
            self.poll()

    def poll(self) -> int:
        """Copy what the logs gained since the last poll; the number of lines copied."""
        copied = 0
        with self._polling:
            for tail in self.tails:
                try:
                    copied += self._copy(tail)
                except OSError as exc:  # a full disk or a vanished cache must not end the thread
                    log.warning("cannot forward the %s server log: %s", tail.server.backend, exc)
        return copied

    def _hold(self, tail: _Tail) -> int | None:
        if tail.fd is None:
            path = Path(f"{tail.server.log()}.forward")
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            tail.fd = fd
        return tail.fd

    def _copy(self, tail: _Tail) -> int:
        fd = self._hold(tail)
        if fd is None:
            return 0  # another process copies this log
        try:
            log_file = open(tail.server.log(), "rb")  # noqa: SIM115 - read in a loop below
        except FileNotFoundError:
            return 0  # not spawned yet
        copied = 0
        with log_file:
            # No offset yet: the log is read from its start, as a new container's logs are new.
            offset = int(os.pread(fd, 32, 0).strip() or 0)
            if os.fstat(log_file.fileno()).st_size < offset:
                offset = 0  # the log was replaced
            log_file.seek(offset)
            while data := log_file.read(READ_MAX):
                end = data.rfind(b"\n") + 1
                if end == 0 and len(data) < READ_MAX:
                    break  # a line still being written
                end = end or len(data)  # one line longer than a read: cut below
                copied += self._write(tail.server, data[:end])
                offset += end
                os.ftruncate(fd, 0)
                os.pwrite(fd, b"%d\n" % offset, 0)
                log_file.seek(offset)
        return copied

    def _write(self, server: Server, data: bytes) -> int:
        stream = self._stream or sys.stderr
        lines = data.decode(errors="replace").splitlines()
        for line in lines:
            cut = " [cut]" if len(line) > LINE_MAX else ""
            stream.write(f"{server.backend}_server | {line[:LINE_MAX]}{cut}\n")
        stream.flush()
        return len(lines)
