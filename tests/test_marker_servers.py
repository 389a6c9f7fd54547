"""The model servers surya spawns for marker: warmed when the converter is built, their logs in
the runner's stderr, a hung one killed and started again, and its chunk converted once more.

Without marker: a fake server shaped like surya-ocr 0.22.1's batch service (run as ``python -m
tests.test_marker_servers`` as surya runs ``python -m surya.<model>.server``), and a fake
client that attaches or spawns it as surya's does, through the same sentinel, lock and log
files under ``~/.cache/datalab/surya`` (``HOME`` is each test's own directory).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

ROOT = Path(__file__).resolve().parent.parent
WEDGE = "FAKE_SURYA_WEDGE"  # a file: the next request wedges the server's batch thread


def serve() -> None:
    """surya/common/batch_service/server.py:124-193 in miniature: ``/health`` and ``/v1/models``
    from the HTTP threads (:139-147), ``/v1/infer`` waiting on the one batch thread (:149-170),
    which a wedge leaves stuck for good while ``/health`` stays green."""
    parser = argparse.ArgumentParser()
    for flag in ("--host", "--checkpoint", "--backend"):
        parser.add_argument(flag)
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    wedged = threading.Event()

    def say(message: str) -> None:  # surya/logging.py:14-15's format, to the log file
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [INFO] surya: {message}", flush=True)

    class Handler(BaseHTTPRequestHandler):
        def reply(self, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/health":
                self.reply({"status": "ok"})
            else:
                self.reply({"data": [{"id": args.checkpoint}]})

        def do_POST(self) -> None:
            items = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["items"]
            wedge = Path(os.environ[WEDGE])
            if wedge.exists():
                wedge.unlink()
                say("batch thread wedged")
                wedged.set()
            if wedged.is_set():
                threading.Event().wait()  # as a batch stuck on the GPU: no reply, ever
            say(f"infer {len(items)} items")
            result = (
                {"label": "good", "score": 0.9}
                if args.backend == "ocr_error"
                else {"bboxes": [], "image_bbox": [0, 0, 64, 64], "error": False}
            )
            self.reply({"results": [result] * len(items)})

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer((args.host, args.port), Handler)
    say(f"{args.backend} server listening on http://{args.host}:{args.port}")
    httpd.serve_forever()


if __name__ == "__main__":
    serve()
    sys.exit()

from pagefleet.settings import load_settings  # noqa: E402 - the fake server needs none of these
from runner.conversion import ConversionProcess  # noqa: E402
from runner.converters import marker_servers  # noqa: E402
from runner.converters.marker_servers import (  # noqa: E402
    FAST_LAYOUT,
    OCR_ERROR,
    LogForwarder,
    ModelServerError,
    ModelServers,
    Server,
    read_sentinel,
    servers_in_use,
)


def _get(url: str, timeout_s: float, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=timeout_s) as r:
        return json.loads(r.read())


class FakeClient:
    """surya's BatchServiceClient with attach_or_spawn, in miniature: attach to the server the
    sentinel names if ``/health`` answers (surya/inference/backends/spawn.py:240-259); else,
    under the flock on the lock file (:267-276, filelock), spawn ``python -m <module> --host
    --port --checkpoint`` in its own session, appending to ``<backend>_server.log``
    (surya/common/batch_service/client.py:47-73), write the sentinel (spawn.py:299-315) and
    await ``/health`` (:339-351); POST ``/v1/infer``, and on a transport error attach or spawn
    again and retry once (client.py:119-143)."""

    spawned: ClassVar[list[subprocess.Popen[bytes]]] = []

    def __init__(self, server: Server) -> None:
        self.server = server

    def __call__(self, items: list[Any]) -> list[Any]:
        for attempt in range(2):
            port = self._attach_or_spawn()
            body = {"items": [str(item) for item in items], "params": {}}
            try:
                reply = _get(f"http://127.0.0.1:{port}/v1/infer", 600, body)
                return list(reply["results"])
            except (urllib.error.URLError, OSError):
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _healthy(self, port: int) -> bool:
        try:
            return bool(_get(f"http://127.0.0.1:{port}/health", 1)["status"] == "ok")
        except (urllib.error.URLError, OSError):
            return False

    def _attach_or_spawn(self) -> int:
        sentinel = read_sentinel(self.server)
        if sentinel and self._healthy(sentinel["port"]):
            return int(sentinel["port"])
        fd = os.open(self.server.lock(), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            sentinel = read_sentinel(self.server)
            if sentinel and self._healthy(sentinel["port"]):
                return int(sentinel["port"])
            port = _free_port()
            command = [sys.executable, "-m", "tests.test_marker_servers", "--host", "127.0.0.1"]
            command += ["--port", str(port), "--checkpoint", "fake/model"]
            command += ["--backend", self.server.backend]
            with open(self.server.log(), "ab") as log_file:
                process = subprocess.Popen(
                    command, cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            FakeClient.spawned.append(process)
            self.server.sentinel().write_text(json.dumps({"port": port, "pid": process.pid}))
            deadline = time.monotonic() + 10
            while not self._healthy(port):
                assert process.poll() is None, self.server.log().read_text()
                assert time.monotonic() < deadline, "the fake server did not start"
                time.sleep(0.02)
            return port
        finally:
            os.close(fd)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fake_models() -> dict[str, Any]:
    """marker.models.create_model_dict()'s two batch-service clients (marker/models.py:53,60)."""
    return {
        OCR_ERROR.model: FakeClient(OCR_ERROR),
        FAST_LAYOUT.model: lambda images: FakeClient(FAST_LAYOUT)(["page"] * len(images)),
    }


@pytest.fixture
def surya_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME of its own (its ~/.cache/datalab/surya), the wedge file's path, and every fake
    server killed afterwards."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(WEDGE, str(tmp_path / "wedge"))
    marker_servers.cache_dir().mkdir(parents=True)
    yield marker_servers.cache_dir()
    for server in (OCR_ERROR, FAST_LAYOUT):  # spawned by a conversion process, too
        if (sentinel := read_sentinel(server)) is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(sentinel["pid"], signal.SIGKILL)
    for process in FakeClient.spawned:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    FakeClient.spawned.clear()


def _settings(**overrides: Any) -> Any:
    # A 2 s chunk budget: a probe gets a fifth of it.
    return load_settings(converter="marker", convert_timeout_s=2, **overrides)


def _pid_gone(pid: int, deadline_s: float = 10) -> bool:
    """Await the process's end (killed, it may stay a zombie of its spawner until reaped)."""
    import psutil

    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


# --- which servers, and warm-up ---


def test_the_servers_are_those_marker_calls() -> None:
    """marker/builders/line.py:200-206 skips OCR-error detection without OCR;
    marker/builders/layout.py:88-93 takes the rf-detr layout in fast mode or without OCR."""
    names = {}
    for mode in ("balanced", "fast"):
        for off in (False, True):
            settings = load_settings(marker_mode=mode, marker_disable_ocr=off)
            names[mode, off] = [server.backend for server in servers_in_use(settings)]
    assert names == {
        ("balanced", False): ["ocr_error"],
        ("fast", False): ["ocr_error", "fast_layout"],
        ("balanced", True): ["fast_layout"],
        ("fast", True): ["fast_layout"],
    }


def test_warm_up_starts_each_server_before_the_first_chunk(surya_home: Path) -> None:
    """surya spawns a server on a client's first request (client.py:75-81,119-131), so the
    first chunk would pay for its start: the warm-up makes that request as the converter is
    built. A second conversion process attaches to the same servers."""
    models = fake_models()
    servers = ModelServers(servers_in_use(_settings(marker_mode="fast")), models, _settings())
    servers.start()
    assert servers.restarted == []
    first = {s.backend: read_sentinel(s) for s in (OCR_ERROR, FAST_LAYOUT)}
    assert all(first.values())
    for server in (OCR_ERROR, FAST_LAYOUT):
        assert "infer 1 items" in server.log().read_text()

    again = ModelServers(servers_in_use(_settings(marker_mode="fast")), fake_models(), _settings())
    again.start()
    assert again.restarted == []
    assert {s.backend: read_sentinel(s) for s in (OCR_ERROR, FAST_LAYOUT)} == first


def test_a_server_that_answers_health_but_no_request_is_killed_and_started_again(
    surya_home: Path, tmp_path: Path
) -> None:
    """A batch stuck on the GPU leaves /health green (server.py:139-147) while every request
    waits (server.py:164-166), and surya's client attaches to it again (spawn.py:240-259): the
    probe's request does not complete, so the server is killed and its sentinel deleted under
    surya's lock, and marker's next request spawns a fresh one."""
    settings = _settings()
    ModelServers([OCR_ERROR], fake_models(), settings).start()
    hung = read_sentinel(OCR_ERROR)
    assert hung is not None
    (tmp_path / "wedge").touch()

    servers = ModelServers([OCR_ERROR], fake_models(), settings)
    started = time.monotonic()
    servers.start()
    assert servers.restarted == ["ocr_error"]
    assert time.monotonic() - started < 5  # a probe of 0.4 s, then a fresh start
    assert _pid_gone(hung["pid"])
    fresh = read_sentinel(OCR_ERROR)
    assert fresh is not None and fresh["pid"] != hung["pid"]
    assert "batch thread wedged" in OCR_ERROR.log().read_text()


def test_only_the_process_serving_on_the_sentinel_s_port_is_killed(surya_home: Path) -> None:
    """A sentinel outlives its server (spawn.py:98-105 reads whatever is there), and its pid may
    have gone to another process: only one started with ``--port <its port>`` (client.py:48-61)
    is killed."""
    ModelServers([OCR_ERROR], fake_models(), _settings()).start()
    sentinel = read_sentinel(OCR_ERROR)
    assert sentinel is not None
    assert marker_servers._serves_on(sentinel["pid"], sentinel["port"])
    assert not marker_servers._serves_on(sentinel["pid"], sentinel["port"] + 1)
    assert not marker_servers._serves_on(os.getpid(), sentinel["port"])


def test_a_server_that_never_answers_its_warm_up_fails_the_start(surya_home: Path) -> None:
    """surya waits for /health up to its start limit, then its request up to 600 s
    (spawn.py:339-351, client.py:103): the warm-up gives up after the start limit and a probe,
    so the conversion process fails to start instead of taking a chunk."""
    release = threading.Event()
    models = {OCR_ERROR.model: lambda texts: release.wait()}
    settings = _settings(marker_server_startup_timeout_s=0.2)
    try:
        with pytest.raises(ModelServerError, match=r"ocr_error server did not answer .* 0\.6 s"):
            ModelServers([OCR_ERROR], models, settings).start()
    finally:
        release.set()


def test_a_server_that_fails_to_start_fails_the_start_with_surya_s_reason(
    surya_home: Path,
) -> None:
    """surya raises SpawnError with the server's last log lines (spawn.py:339-351)."""

    def spawn_fails(texts: list[str]) -> None:
        raise RuntimeError("ocr_error server failed to become healthy\n--- logs ---\nCUDA OOM")

    with pytest.raises(ModelServerError, match=r"(?s)failed to start: .*CUDA OOM"):
        ModelServers([OCR_ERROR], {OCR_ERROR.model: spawn_fails}, _settings()).start()


def test_a_server_that_exits_while_starting_fails_the_start_at_once(surya_home: Path) -> None:
    """surya writes the sentinel, then polls /health for the whole start limit without looking
    at the process (spawn.py:299-351): a server that dies as it loads would hold the start for
    300 s. The warm-up sees the sentinel's process gone and fails the start then."""
    release = threading.Event()

    def spawns_a_server_that_dies(texts: list[str]) -> None:
        with open(OCR_ERROR.log(), "ab") as log_file:
            process = subprocess.Popen(
                [sys.executable, "-c", "raise SystemExit('no weights in the cache')"],
                stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        OCR_ERROR.sentinel().write_text(json.dumps({"port": _free_port(), "pid": process.pid}))
        release.wait()  # surya's wait_for_health, which never sees the process end

    servers = ModelServers(
        [OCR_ERROR],
        {OCR_ERROR.model: spawns_a_server_that_dies},
        _settings(marker_server_startup_timeout_s=120),
    )
    started = time.monotonic()
    try:
        with pytest.raises(ModelServerError, match=r"ocr_error server \(pid \d+\) exited while"):
            servers.start()
    finally:
        release.set()
    assert time.monotonic() - started < 60  # not the start limit


def test_an_old_sentinel_of_a_dead_server_does_not_fail_the_start(surya_home: Path) -> None:
    """A sentinel left by a server that died before this start names a process that is gone;
    surya replaces such a server (spawn.py:276-299), so the warm-up waits for the new one."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    OCR_ERROR.sentinel().write_text(json.dumps({"port": _free_port(), "pid": dead.pid}))
    ModelServers([OCR_ERROR], fake_models(), _settings()).start()
    sentinel = read_sentinel(OCR_ERROR)
    assert sentinel is not None and sentinel["pid"] != dead.pid


# --- the servers' logs ---


def test_server_log_lines_are_forwarded_tagged_and_bounded(surya_home: Path) -> None:
    """surya appends a server's stdout and stderr to ~/.cache/datalab/surya/<backend>_server.log
    (client.py:63-70); each new line reaches the stream with the server's name, a line longer
    than LINE_MAX is cut, and a line still being written waits for its end."""
    out = io.StringIO()
    forwarder = LogForwarder([OCR_ERROR, FAST_LAYOUT], out)
    assert forwarder.poll() == 0  # nothing spawned yet
    with open(OCR_ERROR.log(), "ab") as log_file:
        log_file.write(b"loading weights\n" + b"x" * (marker_servers.LINE_MAX + 10) + b"\nhalf a")
    FAST_LAYOUT.log().write_bytes(b"layout \xff ready\n")
    assert forwarder.poll() == 3
    with open(OCR_ERROR.log(), "ab") as log_file:
        log_file.write(b" line\n")
    assert forwarder.poll() == 1
    forwarder.close()
    assert out.getvalue().splitlines() == [
        "ocr_error_server | loading weights",
        "ocr_error_server | " + "x" * marker_servers.LINE_MAX + " [cut]",
        "fast_layout_server | layout \ufffd ready",
        "ocr_error_server | half a line",
    ]


def test_one_process_forwards_a_log_and_the_next_goes_on_where_it_stopped(
    surya_home: Path,
) -> None:
    """Every worker's conversion process attaches to the one server (spawn.py:240-259), so its
    log is copied by the holder of its forwarding lock alone; when that process ends, another
    takes the lock and goes on from the offset it left, so no line is lost or copied twice."""
    first_out, second_out = io.StringIO(), io.StringIO()
    first, second = LogForwarder([OCR_ERROR], first_out), LogForwarder([OCR_ERROR], second_out)
    OCR_ERROR.log().write_bytes(b"one\ntwo\n")
    assert (first.poll(), second.poll()) == (2, 0)
    with open(OCR_ERROR.log(), "ab") as log_file:
        log_file.write(b"three\n")
    first.close()  # its process ended
    assert second.poll() == 1
    second.close()
    assert first_out.getvalue() == "ocr_error_server | one\nocr_error_server | two\n"
    assert second_out.getvalue() == "ocr_error_server | three\n"


def test_the_forwarder_thread_copies_a_spawned_server_s_log(
    surya_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(marker_servers, "FORWARD_POLL_S", 0.02)
    out = io.StringIO()
    forwarder = LogForwarder([OCR_ERROR], out)
    forwarder.start()
    try:
        ModelServers([OCR_ERROR], fake_models(), _settings()).start()
        deadline = time.monotonic() + 10
        while "infer 1 items" not in out.getvalue():
            assert time.monotonic() < deadline, out.getvalue()
            time.sleep(0.02)
    finally:
        forwarder.close()
    assert "ocr_error_server | " in out.getvalue()
    assert "ocr_error server listening on http://127.0.0.1:" in out.getvalue()


# --- through the conversion process ---

FAKE_MARKER = {
    "marker/__init__.py": "",
    "marker/converters/__init__.py": "",
    "marker/converters/pdf.py": "from tests.test_marker_servers import FakePdfConverter as "
    "PdfConverter  # noqa: F401\n",
    "marker/models.py": "from tests.test_marker_servers import fake_models as create_model_dict"
    "  # noqa: F401\n",
    "marker/settings.py": "import types\nsettings = types.SimpleNamespace(OUTPUT_IMAGE_FORMAT="
    "'JPEG')\n",
    "marker_pdf-2.0.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: marker-pdf\n"
    "Version: 2.0.0\n",
}


class FakePdfConverter:
    """marker's PdfConverter, called as MarkerConverter calls it (build_document, then its
    renderer): one OCR-error request per chunk as the document is built
    (marker/builders/line.py:249-263), then one page of Markdown."""

    renderer = "MarkdownRenderer"

    def __init__(self, artifact_dict: dict[str, Any], config: dict[str, Any]) -> None:
        self.ocr_error = artifact_dict[OCR_ERROR.model]

    def build_document(self, path: str) -> Any:
        import types

        self.ocr_error(["the page's text layer"])
        return types.SimpleNamespace(
            pages=[types.SimpleNamespace(page_id=0, children=[], structure=[])]
        )

    def resolve_dependencies(self, renderer: str) -> Any:
        import types

        return lambda document: types.SimpleNamespace(
            markdown="{0}" + "-" * 48 + "\n\nconverted\n",
            images={},
            metadata={"page_stats": [{"page_id": 0, "text_extraction_method": "pdftext"}]},
        )


def test_a_chunk_that_timed_out_on_a_hung_server_is_converted_again(
    surya_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server wedges during a chunk; the chunk runs out of its 2 s; the conversion process
    is restarted (as for any timeout) and, as it starts, finds the server hung, kills it and
    warms a fresh one; the worker is told and converts the chunk again, which is done."""
    fake = tmp_path / "fake-marker"
    for name, text in FAKE_MARKER.items():
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_text(text)
    monkeypatch.syspath_prepend(str(fake))  # the spawned child gets the parent's sys.path
    process = ConversionProcess(_settings())

    async def convert() -> bytes:
        await process.start()
        assert process.restarted_servers == []
        hung = read_sentinel(OCR_ERROR)
        (tmp_path / "wedge").touch()
        try:
            return await process.convert(tmp_path / "chunk.pdf", 7, tmp_path)
        finally:
            process.stop()
            assert hung is not None and _pid_gone(hung["pid"])

    with caplog.at_level(logging.WARNING, logger="pagefleet.conversion"):
        pages = json.loads(asyncio.run(convert()))
    structure = {"headings": [], "heading_lines": []}  # a page without blocks
    assert pages == [{"number": 7, "markdown": "converted", "structure": structure, "ocr": False}]
    assert process.server_restarts == {"ocr_error": 1}
    assert "model servers found hung and restarted: ocr_error" in caplog.text
    assert "converting it again" in caplog.text
