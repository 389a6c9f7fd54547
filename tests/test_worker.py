"""One real worker process (`python -m runner.worker`) against moto: drain and release."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from bench.pipeline.synthetic import synthetic_pdf
from embedded.demo import report_pdf
from embedded.pipeline import LocalPipeline
from embedded.provision import create_stack
from embedded.proxy import LoopbackProxy, ProxyHandler
from pagefleet import keys
from pagefleet.aws import async_client
from pagefleet.conversions import conversions, count_conversion
from pagefleet.layout import render_document
from pagefleet.layout.outline import read_outline
from pagefleet.models import (
    ChunkDelivery,
    ChunkMessage,
    ChunkResult,
    ChunkSpec,
    JobManifest,
    JobRecord,
)
from pagefleet.settings import Settings, settings_env
from pagefleet.stack import queue_specs
from pagefleet.storage import AsyncBucket, Bucket
from pagefleet.submission import upload
from rehearsal.iam import IamDouble, iam_double
from runner import worker
from runner.converters.text_layer.page import extract_page
from runner.worker import Worker
from runner.worker_state import CONFIG_ERROR_EXIT, WorkerState
from tests.conftest import fresh_settings, wait_for_record
from tests.hostile_pdfs import dense_text_page


@pytest.fixture(scope="module")
def big_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One chunk (56 pages) that takes a second or more to convert: time to signal mid-chunk,
    which takes the test some 20 ms."""
    return report_pdf(tmp_path_factory.mktemp("big") / "big.pdf", sections=120, seed=3)


@pytest.fixture
def no_runner(moto_server, settings: Settings) -> Iterator[LocalPipeline]:
    settings = settings.model_copy(update={"chunk_pages": 10_000})
    with LocalPipeline(settings, server=moto_server, start_runners=False) as local:
        yield local


@pytest.fixture
def task_role(no_runner: LocalPipeline) -> Iterator[IamDouble]:
    """The stack as the runner's task role sees it on AWS (rehearsal/iam.py)."""
    settings = no_runner.settings
    assert settings.endpoint_url is not None
    with iam_double(settings.endpoint_url, settings.bucket, settings.queue_prefix) as double:
        yield double


def _start_worker(
    local: LocalPipeline, state: Path, as_role: IamDouble | None = None, **overrides: object
) -> subprocess.Popen:
    """``as_role``: the worker goes through the IAM double, signing as the task role."""
    role_env: dict[str, str] = {}
    if as_role is not None:
        overrides["endpoint_url"] = as_role.url
        role_env = as_role.credentials(as_role.role_of("python -m runner"))
    settings = local.settings.model_copy(update=overrides)
    env = {
        **os.environ,
        **settings_env(settings),
        **role_env,
        "PAGEFLEET_WORKER_STATE_FILE": str(state),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "runner.worker"], env=env, stderr=subprocess.PIPE
    )


def _wait_until_holding(state: Path, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    """The worker rewrites its state file when it takes a chunk; watch for held == 1."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "worker exited early"
        if (written := WorkerState.read(state)) is not None and written.held == 1:
            return
        time.sleep(0.02)
    raise TimeoutError("the worker never took the chunk")


def _sigterm_while_holding(
    local: LocalPipeline,
    pdf: Path,
    state: Path,
    rel: str,
    drain_timeout_s: float,
    **overrides: object,
) -> Bucket:
    """Upload ``pdf``, let one worker take its chunk, SIGTERM it; it must exit cleanly."""
    assert local.stack is not None
    bucket = Bucket(local.stack.s3, local.settings.bucket)
    upload(bucket, rel, pdf.read_bytes())
    _sigterm_a_worker_holding(local, state, drain_timeout_s, **overrides)
    return bucket


def _sigterm_a_worker_holding(
    local: LocalPipeline, state: Path, drain_timeout_s: float, **overrides: object
) -> None:
    worker = _start_worker(local, state, None, drain_timeout_s=drain_timeout_s, **overrides)
    _wait_until_holding(state, worker)
    worker.send_signal(signal.SIGTERM)
    _, stderr = worker.communicate(timeout=drain_timeout_s + 30)  # read and closed
    assert worker.returncode == 0, stderr.decode()


class _HeldDownloads(LoopbackProxy):
    """The stack behind a proxy that never answers a download of a chunk PDF: a worker that
    holds a chunk is, until signalled, still fetching it."""

    name = "held-downloads"

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.done = threading.Event()  # set as the test ends: the held requests give up


class _HoldDownloads(ProxyHandler):
    owner: _HeldDownloads

    def _handle(self) -> None:
        body = self._read_body()
        if self.command == "GET" and "/chunks/" in self.path:
            self.owner.done.wait(timeout=120)
            self.close_connection = True  # no reply: the worker that asked is gone
            return
        self._reply(*self._forward(body))


_HeldDownloads.handler = _HoldDownloads


@contextmanager
def _downloads_held(upstream: str) -> Iterator[_HeldDownloads]:
    """A :class:`_HeldDownloads` in front of ``upstream``, serving."""
    proxy = _HeldDownloads(upstream)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.done.set()
        proxy.stop()


def test_sigterm_drains_the_chunk_in_hand(
    no_runner: LocalPipeline, big_pdf: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    bucket = _sigterm_while_holding(no_runner, big_pdf, state, "drained", drain_timeout_s=60)
    record = wait_for_record(bucket, "drained")
    assert record.status == "done" and record.chunks[0].attempts == 1
    final = WorkerState.read(state)
    assert final is not None and (final.held, final.chunks_done) == (0, 1)


def test_sigterm_past_the_drain_deadline_releases_the_chunk(
    no_runner: LocalPipeline, big_pdf: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    bucket = _sigterm_while_holding(no_runner, big_pdf, state, "released", drain_timeout_s=0)
    assert no_runner.stack is not None
    # Released, not lost: visible again at once (not after the 30 s lease), and no result yet.
    sqs, url = no_runner.stack.sqs, no_runner.stack.queue_urls["chunks"]
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    assert len(messages) == 1
    body = json.loads(messages[0]["Body"])
    assert body["chunk"]["index"] == 0
    assert bucket.list_keys(keys.results_prefix(body["job_id"])) == []


def test_releases_use_up_none_of_a_chunks_attempts(
    no_runner: LocalPipeline, big_pdf: Path, tmp_path: Path
) -> None:
    """A release (a drain past its deadline, a scale-in, a Spot interruption) is no attempt: a
    chunk released as often as the redrive allows receives is neither dead-lettered nor short
    of attempts, and its record counts the one conversion."""
    releases = next(s for s in queue_specs(no_runner.settings) if s.role == "chunks")
    state = tmp_path / "state.json"
    # No download of the chunk gets through: each signalled worker is released before its
    # conversion began and counted itself (a signal after that would rightly count one).
    assert no_runner.settings.endpoint_url is not None
    with _downloads_held(no_runner.settings.endpoint_url) as held:
        bucket = _sigterm_while_holding(
            no_runner, big_pdf, state, "released often", drain_timeout_s=0, endpoint_url=held.url
        )
        for _ in range(releases.max_receive_count - 1):
            _sigterm_a_worker_holding(no_runner, state, drain_timeout_s=0, endpoint_url=held.url)
    _burst_worker(no_runner, tmp_path)
    record = wait_for_record(bucket, "released often")
    assert record.status == "done" and record.chunks[0].attempts == 1


def test_a_body_that_is_no_chunk_message_is_left_for_the_dlq(
    no_runner: LocalPipeline, tmp_path: Path
) -> None:
    """A stray body neither crashes the worker nor is deleted: the real chunk beside it is
    converted, and the stray one stays leased, bound for the DLQ after maxReceiveCount."""
    assert no_runner.stack is not None
    sqs, url = no_runner.stack.sqs, no_runner.stack.queue_urls["chunks"]
    sqs.send_message(QueueUrl=url, MessageBody='{"not": "a chunk"}')
    bucket = Bucket(no_runner.stack.s3, no_runner.settings.bucket)
    upload(bucket, "beside-a-stray", report_pdf(tmp_path / "small.pdf", sections=2).read_bytes())
    deadline = time.monotonic() + 60
    # The splitter runs in an environment process of its own: wait for its chunk beside the
    # stray body.
    while _queue_counts(no_runner) != (2, 0):
        assert time.monotonic() < deadline, _queue_counts(no_runner)
        time.sleep(0.05)

    # Burst: it stops once the queue answers empty, so it must not stop at the stray body.
    stderr = _burst_worker(no_runner, tmp_path)
    assert b"not a chunk message, left for the DLQ" in stderr
    assert wait_for_record(bucket, "beside-a-stray").status == "done"
    assert _queue_counts(no_runner) == (0, 1)  # the stray body: leased, not deleted


@pytest.mark.parametrize("marker", ["missing", "broken"])
def test_a_converter_that_cannot_be_imported_stops_the_worker_before_any_chunk(
    settings: Settings, tmp_path: Path, marker: str
) -> None:
    """One line saying what is missing and the fix, and exit 78, which its supervisor does not
    restart (every restart would fail the same way); the chunk waiting is never received."""
    env = {**os.environ, **settings_env(settings.model_copy(update={"converter": "marker"}))}
    said = "converter marker needs marker-pdf"
    if marker == "broken":  # installed, but a module it imports is not
        (tmp_path / "marker").mkdir()
        (tmp_path / "marker" / "__init__.py").write_text("import torch_not_installed\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
        said += ", which cannot be imported (No module named 'torch_not_installed')"
    elif importlib.util.find_spec("marker") is not None:
        pytest.skip("marker-pdf is installed here")
    stack = create_stack(settings, create_bucket=False)
    url = stack.queue_urls["chunks"]
    stack.sqs.send_message(QueueUrl=url, MessageBody='{"a": "chunk"}')
    done = subprocess.run(
        [sys.executable, "-m", "runner.worker"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == CONFIG_ERROR_EXIT
    (line,) = done.stderr.splitlines()
    assert line.endswith(f" ERROR pagefleet.worker {said}: pip install 'pagefleet[marker]'")
    (message,) = stack.sqs.receive_message(
        QueueUrl=url, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    )["Messages"]
    assert message["Attributes"]["ApproximateReceiveCount"] == "1"  # this receive, the first


def _queue_counts(local: LocalPipeline) -> tuple[int, int]:
    """The chunks queue's (visible, in flight) messages."""
    assert local.stack is not None
    attributes = local.stack.sqs.get_queue_attributes(
        QueueUrl=local.stack.queue_urls["chunks"],
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return (
        int(attributes["ApproximateNumberOfMessages"]),
        int(attributes["ApproximateNumberOfMessagesNotVisible"]),
    )


def _split_and_peek(local: LocalPipeline, rel: str, pdf: Path) -> dict:
    """Upload ``pdf`` and wait for its one chunk message; its body, left visible."""
    assert local.stack is not None
    upload(Bucket(local.stack.s3, local.settings.bucket), rel, pdf.read_bytes())
    deadline = time.monotonic() + 60
    while _queue_counts(local) != (1, 0):
        assert time.monotonic() < deadline, _queue_counts(local)
        time.sleep(0.05)
    sqs, url = local.stack.sqs, local.stack.queue_urls["chunks"]
    (message,) = sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"]
    return json.loads(message["Body"])


def _burst_worker(
    local: LocalPipeline, tmp_path: Path, as_role: IamDouble | None = None, **overrides: object
) -> bytes:
    worker = _start_worker(local, tmp_path / "state.json", as_role, burst=True, **overrides)
    _, stderr = worker.communicate(timeout=60)
    assert worker.returncode == 0, stderr.decode()
    return stderr


def test_a_late_repeat_of_an_ended_jobs_chunk_is_dropped(
    no_runner: LocalPipeline, tmp_path: Path
) -> None:
    """The job ended and its files were removed (the lifecycle rule; the janitor locally); a
    repeated chunk message arrives after that: the worker drops it instead of failing on the
    missing chunk PDF until the message reaches the DLQ."""
    assert no_runner.stack is not None
    bucket = Bucket(no_runner.stack.s3, no_runner.settings.bucket)
    body = _split_and_peek(no_runner, "ended", report_pdf(tmp_path / "a.pdf", sections=2))
    _burst_worker(no_runner, tmp_path)
    assert wait_for_record(bucket, "ended").status == "done"

    for key in bucket.list_keys(keys.job_prefix(body["job_id"])):
        bucket.delete(key)
    no_runner.stack.sqs.send_message(
        QueueUrl=no_runner.stack.queue_urls["chunks"], MessageBody=json.dumps(body)
    )
    stderr = _burst_worker(no_runner, tmp_path)
    assert b"the job has ended; message dropped" in stderr
    assert _queue_counts(no_runner) == (0, 0)
    assert bucket.list_keys(keys.job_prefix(body["job_id"])) == []  # nothing written back


def test_attempts_count_conversions_not_deliveries(
    no_runner: LocalPipeline, tmp_path: Path
) -> None:
    """A chunk delivered and let go unconverted (released on drain, or held by a worker that
    died before it began) was not attempted: the record counts the one conversion that ran."""
    assert no_runner.stack is not None
    bucket = Bucket(no_runner.stack.s3, no_runner.settings.bucket)
    body = _split_and_peek(no_runner, "redelivered", report_pdf(tmp_path / "a.pdf", sections=2))
    sqs, url = no_runner.stack.sqs, no_runner.stack.queue_urls["chunks"]
    for _ in range(2):  # two more deliveries that convert nothing, released at once
        assert sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"]
    _burst_worker(no_runner, tmp_path)  # the fourth delivery: the one conversion
    record = wait_for_record(bucket, "redelivered")
    assert record.status == "done"
    assert [c.attempts for c in record.chunks] == [1]
    counter = bucket.get(keys.chunk_conversions(body["job_id"], body["chunk"]["index"]))
    assert json.loads(counter) == {"conversions": 1}


@pytest.mark.parametrize("before", [0, 1])
def test_a_result_looks_at_the_count_again_only_where_a_twin_may_have_begun(
    no_runner: LocalPipeline, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: int
) -> None:
    """A chunk on its first delivery, converted within that first lease, had no twin: its
    result carries its own count, with no request to read the counter again. One delivered
    ``before`` (let go unconverted) may have a conversion under way elsewhere: it looks."""
    assert no_runner.stack is not None
    bucket = Bucket(no_runner.stack.s3, no_runner.settings.bucket)
    upload(bucket, "looked", report_pdf(tmp_path / "a.pdf", sections=2).read_bytes())
    deadline = time.monotonic() + 60
    while _queue_counts(no_runner) != (1, 0):  # its one chunk, not received yet
        assert time.monotonic() < deadline, _queue_counts(no_runner)
        time.sleep(0.05)
    sqs, url = no_runner.stack.sqs, no_runner.stack.queue_urls["chunks"]
    for _ in range(before):
        assert sqs.receive_message(QueueUrl=url, VisibilityTimeout=0)["Messages"]
    looks: list[int] = []

    async def counted(bucket: AsyncBucket, job_id: str, index: int) -> int:
        looks.append(index)
        return await conversions(bucket, job_id, index)

    monkeypatch.setattr(worker, "conversions", counted)
    asyncio.run(Worker(no_runner.function_settings.model_copy(update={"burst": True})).run())
    record = wait_for_record(bucket, "looked")
    assert record.status == "done" and [c.attempts for c in record.chunks] == [1]
    assert looks == [0] * before


def test_only_a_first_delivery_within_its_first_lease_is_known_to_be_alone() -> None:
    message = ChunkMessage(
        job_id="job",
        bucket="b",
        chunk=ChunkSpec(index=0, first_page=1, last_page=2),
        chunk_count=1,
        sent_at=0,
    )
    now = time.monotonic()

    def delivery(**fields: object) -> ChunkDelivery:
        given = {"receive_count": 1, "leased_at": now, **fields}
        return ChunkDelivery(receipt="r", message=message, **given)  # type: ignore[arg-type]

    assert delivery().first_and_held(60)
    assert not delivery(leased_at=now - 61).first_and_held(60)  # the lease may have lapsed
    assert not delivery(receive_count=2).first_and_held(60)  # delivered before
    assert not delivery(prior_attempts=1).first_and_held(60)  # released before
    assert not ChunkDelivery(receipt="r", message=message, receive_count=1).first_and_held(60)


def test_conversions_that_start_at_once_each_count(settings: Settings) -> None:
    """Two workers holding one chunk after a lapsed lease both convert it: both count, and the
    later result says two."""
    create_stack(settings)

    async def race() -> tuple[list[int], int]:
        async with async_client("s3", settings) as s3:
            bucket = AsyncBucket(s3, settings.bucket)
            counts = await asyncio.gather(*(count_conversion(bucket, "job", 3) for _ in range(3)))
            return sorted(counts), await conversions(bucket, "job", 3)

    assert asyncio.run(race()) == ([1, 2, 3], 3)


def test_a_late_chunk_under_the_task_roles_permissions_is_dropped_not_a_crash(
    no_runner: LocalPipeline, task_role: IamDouble, tmp_path: Path
) -> None:
    """On AWS the task role may read chunk PDFs but not list the bucket, so S3 answers a chunk
    PDF that is gone 403, not 404: that too is a missing chunk, and the message is dropped
    instead of crashing every worker that takes it until maxReceiveCount."""
    assert no_runner.stack is not None
    bucket = Bucket(no_runner.stack.s3, no_runner.settings.bucket)
    body = _split_and_peek(no_runner, "ended late", report_pdf(tmp_path / "a.pdf", sections=2))
    _burst_worker(no_runner, tmp_path, task_role)
    assert wait_for_record(bucket, "ended late").status == "done"
    assert task_role.denials() == []  # the role holds all a conversion needs

    for key in bucket.list_keys(keys.job_prefix(body["job_id"])):
        bucket.delete(key)
    no_runner.stack.sqs.send_message(
        QueueUrl=no_runner.stack.queue_urls["chunks"], MessageBody=json.dumps(body)
    )
    stderr = _burst_worker(no_runner, tmp_path, task_role)
    assert b"the job has ended; message dropped" in stderr
    assert ("runner", "s3:GetObject", "missing as 403") in task_role.seen
    assert _queue_counts(no_runner) == (0, 0)


def test_a_chunk_pdf_missing_from_an_open_job_ends_it_with_a_record(
    no_runner: LocalPipeline, task_role: IamDouble, tmp_path: Path
) -> None:
    """Under the task role's permissions, as on AWS: the job's manifest tells an open job from
    one that ended, so the role may read it."""
    assert no_runner.stack is not None
    bucket = Bucket(no_runner.stack.s3, no_runner.settings.bucket)
    body = _split_and_peek(no_runner, "lost-chunk", report_pdf(tmp_path / "a.pdf", sections=2))
    bucket.delete(keys.chunk_pdf(body["job_id"], body["chunk"]["index"]))
    _burst_worker(no_runner, tmp_path, task_role, max_attempts=1)
    record = wait_for_record(bucket, "lost-chunk")
    assert record.status == "failed"
    error = record.chunks[0].error
    assert error is not None and error.code == "convert_error"
    assert "is gone from the bucket" in error.message
    assert task_role.denials() == []


def test_the_next_chunk_converts_while_the_last_result_is_still_being_written(
    moto_server, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing a result and deleting its message are round trips the converter does not wait
    on: here the first result's write holds until the second chunk's conversion has begun,
    which a worker that wrote before taking the next chunk would never reach."""
    settings = settings.model_copy(update={"chunk_pages": 1})
    began: list[int] = []
    second_began = asyncio.Event()

    class Watching(Worker):
        async def _convert(
            self, bucket: AsyncBucket, message: ChunkMessage
        ) -> tuple[ChunkResult, bytes, dict[str, bytes]]:
            began.append(message.chunk.index)
            if len(began) == 2:
                second_began.set()
            return await super()._convert(bucket, message)

    write_result = worker.write_result_async

    async def held_write(
        bucket: AsyncBucket, result: ChunkResult, pages_json: bytes, inline: dict[str, bytes]
    ) -> None:
        if result.chunk.index == began[0]:
            await asyncio.wait_for(second_began.wait(), 20)
        await write_result(bucket, result, pages_json, inline)

    monkeypatch.setattr(worker, "write_result_async", held_write)

    async def burst() -> None:
        await Watching(local.function_settings.model_copy(update={"burst": True})).run()

    with LocalPipeline(settings, server=moto_server, start_runners=False) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, local.settings.bucket)
        upload(bucket, "two", synthetic_pdf(tmp_path / "two.pdf", 2).read_bytes())
        deadline = time.monotonic() + 60
        while _queue_counts(local) != (2, 0):
            assert time.monotonic() < deadline, _queue_counts(local)
            time.sleep(0.05)
        asyncio.run(burst())
        record = wait_for_record(bucket, "two")
    assert record.status == "done" and sorted(began) == [0, 1]
    assert _queue_counts(local) == (0, 0)


# A page of a million characters: the text layer's conversion child, which idles at 60-90 MB
# and stays there on the report's pages, passes this within a second or two of starting on it
# and grows on for seconds, to some 400 MB: the memory watchdog stops it however loaded the
# machine, and nothing else comes near it.
DENSE_PAGE = 7
MEMORY_MB = 160


@pytest.fixture(scope="module")
def dense_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12-page report with a page of a million characters inserted as page 7."""
    folder = tmp_path_factory.mktemp("dense")
    report = pdfium.PdfDocument(report_pdf(folder / "report.pdf", sections=24, seed=4))
    dense = pdfium.PdfDocument(dense_text_page(1_000_000))
    doc = pdfium.PdfDocument.new()
    try:
        doc.import_pages(report, list(range(DENSE_PAGE - 1)))
        doc.import_pages(dense)
        doc.import_pages(report, list(range(DENSE_PAGE - 1, len(report))))
        path = folder / "dense.pdf"
        doc.save(path)
    finally:
        for pdf in (doc, dense, report):
            pdf.close()
    return path


@pytest.fixture(scope="module")
def split_job(moto_server, dense_pdf: Path) -> Iterator[tuple[LocalPipeline, Bucket, JobRecord]]:
    """The dense document converted by a runner whose conversions may take MEMORY_MB, in
    chunks of 8 text pages' estimate (the splitter's sample counts the dense page in its mean,
    so no chunk is cut around it)."""
    settings = fresh_settings(moto_server).model_copy(
        update={"chunk_pages": 8, "convert_memory_mb": MEMORY_MB, "max_attempts": 1}
    )
    with LocalPipeline(settings, workers=1, server=moto_server) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, local.settings.bucket)
        upload(bucket, "dense", dense_pdf.read_bytes())
        yield local, bucket, wait_for_record(bucket, "dense")


def test_a_page_past_the_memory_budget_costs_only_itself(
    split_job: tuple[LocalPipeline, Bucket, JobRecord], dense_pdf: Path
) -> None:
    _, bucket, record = split_job
    assert record.status == "partial"
    # The record names the lost page and no other; its ranges cover the document once, in order.
    failed = [(c.first_page, c.last_page, c.error.code) for c in record.chunks if c.error]
    assert failed == [(DENSE_PAGE, DENSE_PAGE, "memory")]
    pages = [page for c in record.chunks for page in range(c.first_page, c.last_page + 1)]
    assert pages == list(range(1, record.pages + 1))
    # The planned chunk holding it was split in halves, and the half holding it again, down to
    # the page.
    manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(record.job_id)))
    (planned,) = [c for c in manifest.chunks if c.first_page <= DENSE_PAGE <= c.last_page]
    assert planned.pages >= 4
    chunk, splits = planned, 0
    while chunk.pages > 1:
        result = ChunkResult.model_validate_json(
            bucket.get(keys.chunk_result(record.job_id, chunk.index))
        )
        assert result.status == "split" and result.error and result.error.code == "memory"
        (chunk,) = [h for h in result.halves if h.first_page <= DENSE_PAGE <= h.last_page]
        splits += 1
    assert splits >= 2
    # What converted is the whole document's conversion in one process, less that page
    # (rule 5): each side of it as a document of its own, the note naming the page between.
    doc = pdfium.PdfDocument(dense_pdf)
    try:
        before, after = (
            [extract_page(doc, i, i + 1, "auto", 0) for i in pages]
            for pages in (range(DENSE_PAGE - 1), range(DENSE_PAGE, len(doc)))
        )
    finally:
        doc.close()
    outline = read_outline(dense_pdf)
    note = (
        f"> **pagefleet:** page {DENSE_PAGE} could not be converted (memory: conversion grew "
        f"past {MEMORY_MB} MB and was stopped).\n"
    )
    expected = "\n".join(
        [
            render_document(before, outline),
            note,
            render_document(after, outline),
        ]
    )
    assert bucket.get(keys.outbox_markdown("dense")).decode() == expected


def test_a_redelivered_split_chunk_is_dropped_not_split_again(
    split_job: tuple[LocalPipeline, Bucket, JobRecord], tmp_path: Path
) -> None:
    """The lease of a chunk its worker split ran out before the delete: the chunk comes back,
    and is neither converted nor split again (rule 1), since its halves were sent before its
    split result was written."""
    local, bucket, record = split_job
    local.stop_runners()
    assert local.stack is not None
    sqs, url = local.stack.sqs, local.stack.queue_urls["chunks"]
    manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(record.job_id)))
    (planned,) = [c for c in manifest.chunks if c.first_page <= DENSE_PAGE <= c.last_page]
    written = bucket.list_etags(keys.job_prefix(record.job_id))
    message = ChunkMessage(
        job_id=record.job_id,
        bucket=bucket.name,
        chunk=planned,
        chunk_count=len(manifest.chunks),
        sent_at=time.time(),
    )
    sqs.send_message(QueueUrl=url, MessageBody=message.model_dump_json())
    # Received once and let go: the next receipt is its second, as after a lapsed lease.
    received = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5, VisibilityTimeout=0)
    assert len(received["Messages"]) == 1
    stderr = _burst_worker(local, tmp_path)
    assert b"was split already; message dropped" in stderr
    assert _queue_counts(local) == (0, 0)  # no half sent again
    assert bucket.list_etags(keys.job_prefix(record.job_id)) == written  # nothing rewritten
