"""`pagefleet run` end to end, as `make run` calls it (a subprocess, its own moto server)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3
import psutil
import pytest

from embedded.demo import report_pdf
from pagefleet.aws import FAKE_CREDENTIALS
from tests.conftest import outlived


def test_run_converts_a_folder_and_mirrors_its_layout(tmp_path: Path) -> None:
    inbox = tmp_path / "in"
    report_pdf(inbox / "one.pdf", sections=12, seed=1)
    report_pdf(inbox / "nested" / "two words.PDF", sections=3, seed=2)
    (inbox / "nested" / "broken.pdf").write_bytes(b"not a pdf at all")
    out = tmp_path / "out"
    started = time.time()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "run",
            str(inbox),
            "--out",
            str(out),
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    waited = time.time() - started
    assert done.returncode == 1, done.stderr  # one document failed
    assert "broken" in done.stdout and "not_pdf" in done.stdout  # the table, for `>`
    # The summary, beside the progress: the whole wait, start-up included, then its parts.
    summary = re.search(
        r"pages in 3 documents in ([\d.]+) s, [\d.]+ pages/s: ([\d.]+) s starting the stack, "
        r"([\d.]+) s converting",
        " ".join(done.stderr.split()),  # the terminal's width wraps it
    )
    assert summary is not None, done.stderr
    total, starting, converting = (float(x) for x in summary.groups())
    assert starting + converting - 0.2 <= total <= waited + 0.1
    for rel in ("one", "nested/two words"):
        record = json.loads((out / f"{rel}.json").read_text())
        assert record["status"] == "done"
        assert (out / f"{rel}.md").read_text().strip()
    assert json.loads((out / "nested/broken.json").read_text())["error"]["code"] == "not_pdf"
    assert not (out / "nested/broken.md").exists()


def test_run_without_input_converts_the_demo_set(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "run", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(p.read_text()) for p in tmp_path.rglob("*.json")]
    assert len(records) == 3 and {r["status"] for r in records} == {"done"}


def _up(*args: str, env: dict[str, str] | None = None, stderr: Path) -> subprocess.Popen[str]:
    with stderr.open("w") as sink:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "cli", "up", *args],
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
            env={**os.environ, **(env or {})},
        )


def _banner(proc: subprocess.Popen[str]) -> tuple[str, str, list[str]]:
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]
    match = re.search(r"endpoint (\S+), bucket (\S+)", lines[0])
    assert match, lines
    while not lines[-1].startswith("Ctrl-C"):
        lines.append(proc.stdout.readline())
        assert lines[-1], lines
    return match.group(1), match.group(2), lines


def _s3(url: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


def test_up_keeps_a_stack_running_for_the_aws_tools(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    proc = _up("--workers", "1", "--port", "0", "--out", str(mirror), stderr=tmp_path / "stderr")
    try:
        url, bucket, banner = _banner(proc)
        s3 = _s3(url)
        s3.upload_file(str(report_pdf(tmp_path / "a.pdf", sections=3)), bucket, "inbox/a.pdf")
        waiter = s3.get_waiter("object_exists")
        waiter.wait(
            Bucket=bucket, Key="outbox/a.json", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300}
        )
        record = json.loads(s3.get_object(Bucket=bucket, Key="outbox/a.json")["Body"].read())
        assert record["status"] == "done"
        markdown = s3.get_object(Bucket=bucket, Key="outbox/a.md")["Body"].read().decode()
        # The banner's export lines, as printed, are all another shell needs.
        exported = dict(
            pair.split("=", 1)
            for line in banner
            if line.strip().startswith("export ")
            for pair in line.split()[1:]
        )
        status = subprocess.run(
            [sys.executable, "-m", "cli", "status", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": os.environ["PATH"], **exported},
        )
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["finished"]["done"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    assert proc.stdout is not None
    said = proc.stdout.read()
    assert "drained" in said and "bucket and queues go with it now" in said, said
    assert json.loads((mirror / "a.json").read_text())["status"] == "done"
    assert (mirror / "a.md").read_text() == markdown
    # Quiet: the handlers' metrics and the runner's info lines stay off the terminal.
    assert (tmp_path / "stderr").read_text() == ""


def test_a_second_up_on_a_port_in_use_is_refused(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _up("--port", str(port), stderr=tmp_path / "stderr")
        proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert (tmp_path / "stderr").read_text() == (
        f"pagefleet: port {port} is in use: is another `pagefleet up` running? (--port N picks "
        "another, --port 0 any free one)\n"
    )


def test_up_on_an_endpoint_logs_a_killed_worker_and_drains_on_sigterm(
    moto_server, settings, tmp_path: Path
) -> None:
    s3 = _s3(moto_server.url)
    s3.create_bucket(Bucket=settings.bucket)  # found and used; the queues are created
    env = {
        "PAGEFLEET_ENDPOINT_URL": moto_server.url,
        "PAGEFLEET_BUCKET": settings.bucket,
        "PAGEFLEET_QUEUE_PREFIX": settings.queue_prefix,
        # The killed worker's last long poll goes on without it, on the server as on SQS, and
        # takes the chunk if it lands meanwhile: in flight, to no one, until its lease ends. A
        # short lease brings it back within the drain, for the worker that is left.
        "PAGEFLEET_VISIBILITY_TIMEOUT_S": "10",
        "PAGEFLEET_HEARTBEAT_S": "2",
    }
    log = tmp_path / "up.log"
    proc = _up("--workers", "2", "--log-file", str(log), env=env, stderr=tmp_path / "stderr")
    try:
        url, bucket, banner = _banner(proc)
        assert (url, bucket) == (moto_server.url, settings.bucket)
        assert f"found s3://{settings.bucket}; created {settings.queue_prefix}-ingest" in "".join(
            banner
        )
        workers = _runner_workers(proc.pid, 2)
        os.kill(workers[0].pid, signal.SIGKILL)
        pdf = report_pdf(tmp_path / "b.pdf", sections=16, seed=4)
        s3.upload_file(str(pdf), bucket, "inbox/in flight.pdf")
        deadline = time.monotonic() + 60
        while not s3.list_objects_v2(Bucket=bucket, Prefix="jobs/").get("KeyCount"):
            assert time.monotonic() < deadline, "never split"
            time.sleep(0.05)  # another process's bucket: nothing to await but a look
        proc.send_signal(signal.SIGTERM)  # the job is split, its chunks are in flight
        assert proc.wait(90) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.stdout is not None and "drained in" in proc.stdout.read()
    # The stop waited for the job: its record is there, on the server that outlives `up`.
    record = json.loads(s3.get_object(Bucket=bucket, Key="outbox/in flight.json")["Body"].read())
    assert record["status"] == "done"
    # The killed worker left a trace on the terminal; the log file has everything.
    stderr = (tmp_path / "stderr").read_text()
    assert re.search(rf"worker_exited .*pid={workers[0].pid} exit_code=-9", stderr), stderr
    assert "_aws" not in stderr
    logged = log.read_text()
    assert '"event":"worker_exited"' in logged and '"_aws"' in logged  # runner + EMF lines
    assert "[completion[0]]" in logged


def test_a_killed_up_leaves_no_process_behind(moto_server, settings, tmp_path: Path) -> None:
    """kill -9 of `up` reaches none of its children (each in a session of its own): the runner
    sees its parent's end of its standard input close and drains, the handlers' environments
    see theirs close and exit, and nothing is left to run beside the next `up`."""
    env = {
        "PAGEFLEET_ENDPOINT_URL": moto_server.url,
        "PAGEFLEET_BUCKET": settings.bucket,
        "PAGEFLEET_QUEUE_PREFIX": settings.queue_prefix,
    }
    proc = _up("--workers", "2", env=env, stderr=tmp_path / "stderr")
    children: list[psutil.Process] = []
    try:
        _banner(proc)
        workers = _runner_workers(proc.pid, 2)
        deadline = time.monotonic() + 60
        while not all(w.children() for w in workers):  # each worker's conversion process
            assert time.monotonic() < deadline, "the workers never started converting"
            time.sleep(0.05)  # processes another process starts: nothing to await
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.kill()
        proc.wait()
        assert outlived(children, 60) == []
    finally:
        proc.kill()
        proc.communicate()
        for child in children:  # what outlived `up`, should this fail
            with contextlib.suppress(psutil.Error):
                child.kill()


def test_a_terminated_run_leaves_no_process_behind(tmp_path: Path) -> None:
    """SIGTERM of `run` (left to its default: it ends at once) takes its embedded server with
    it: its runner sees its standard input close and, nothing answering at the endpoint, kills
    its workers mid-chunk rather than drain them; the handlers' environments end too."""
    inbox = tmp_path / "in"
    for seed in range(4):  # a chunk each, of a second or more
        report_pdf(inbox / f"r{seed}.pdf", sections=120, seed=seed)
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path),  # where the runner's health file lands
        "PAGEFLEET_CHUNK_PAGES": "10000",
        "PAGEFLEET_FLEET_LANES": "1",
    }
    cmd = [sys.executable, "-m", "cli", "run", str(inbox), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(
        [*cmd, "--workers", "2"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 60
        while not _holding(tmp_path):
            assert proc.poll() is None and time.monotonic() < deadline, "no chunk was taken"
            time.sleep(0.02)  # a file another process writes: nothing to await
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.terminate()
        proc.wait()
        assert outlived(children, 10) == []
    finally:
        proc.kill()
        proc.wait()
        for child in children:  # what outlived `run`, should this fail
            with contextlib.suppress(psutil.Error):
                child.kill()


def _holding(tmp: Path) -> bool:
    """Whether the runner's health file says a worker holds a chunk."""
    for path in tmp.glob("pagefleet-local-runner-*/health.json"):
        with contextlib.suppress(FileNotFoundError):  # the runner's own TMPDIR, gone at its end
            return any(worker["held"] for worker in json.loads(path.read_text())["workers"])
    return False


def test_settings_that_cannot_hold_a_lease_are_refused_by_up(tmp_path: Path) -> None:
    proc = _up(env={"PAGEFLEET_VISIBILITY_TIMEOUT_S": "5"}, stderr=tmp_path / "stderr")
    proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert (tmp_path / "stderr").read_text().splitlines() == [
        "pagefleet: settings refused: PAGEFLEET_HEARTBEAT_S (20) must be at most half of "
        "PAGEFLEET_VISIBILITY_TIMEOUT_S (5), or a chunk's lease lapses before the heartbeat "
        "extends it"
    ]


def _runner_workers(up_pid: int, count: int, timeout_s: float = 60) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        workers = [
            p
            for p in psutil.Process(up_pid).children(recursive=True)
            if "runner.worker" in " ".join(p.cmdline())
        ]
        if len(workers) >= count:
            return workers
        time.sleep(0.05)  # processes another process starts: nothing to await
    raise TimeoutError("the runner's workers did not start")


def test_run_with_a_converter_that_is_not_installed_stops_once_with_the_fix(
    tmp_path: Path,
) -> None:
    if importlib.util.find_spec("marker") is not None:
        pytest.skip("marker-pdf is installed in this environment")
    report_pdf(tmp_path / "in" / "a.pdf", sections=1)
    done = subprocess.run(
        [sys.executable, "-m", "cli", "run", str(tmp_path / "in"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PAGEFLEET_CONVERTER": "marker"},
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "pagefleet: the runner stopped: converter marker needs marker-pdf: "
        "pip install 'pagefleet[marker]'"
    )
