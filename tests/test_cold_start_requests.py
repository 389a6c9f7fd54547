"""What a cold `pagefleet run` spends outside conversion (issue 28): the service models each
process reads once (pagefleet/aws.py, embedded/template.py) and the record watcher's and the
download's requests (pagefleet/submission.py, the record write count of embedded/server.py).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import botocore.loaders
import botocore.session
import pytest

from embedded.environment import Environment, EnvironmentSpec, FakeLambdaContext
from embedded.provision import create_stack
from embedded.server import record_writes
from pagefleet import aws, keys
from pagefleet.models import JobRecord, Source
from pagefleet.outbox import publish
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import (
    Progress,
    StillConverting,
    Submission,
    await_records,
    put_upload,
)

_sessions = itertools.count()


@pytest.fixture
def bucket(settings: Settings) -> Bucket:
    stack = create_stack(settings)
    return Bucket(stack.s3, settings.bucket)


@pytest.fixture
def model_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The data files botocore's loaders read (and parse) from now on."""
    reads: list[str] = []
    load_file = botocore.loaders.JSONFileLoader.load_file

    def spy(self: Any, file_path: str) -> Any:
        reads.append(file_path)
        return load_file(self, file_path)

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", spy)
    yield reads


def _new_session() -> Any:
    """A session as pagefleet.aws.client makes, for AWS variables no other test has."""
    return aws._session((("AWS_PAGEFLEET_TEST", str(next(_sessions))),))


def test_every_session_of_a_process_reads_each_service_model_once(
    model_reads: list[str],
) -> None:
    """botocore's sessions each read and parse the S3 model, its endpoint ruleset and the list
    of services (botocore/session.py: a ``data_loader`` per session); pagefleet.aws's share one
    loader, which keeps what it read (botocore/loaders.py, ``instance_cache``). The clients are
    botocore's own: the same operations as a plain session's."""
    aws.warm_data_loader(("s3",))
    model_reads.clear()
    first = _new_session().client("s3", region_name="us-east-1")
    second = _new_session().client("s3", region_name="eu-west-1")
    assert model_reads == []
    plain = botocore.session.Session().create_client("s3", region_name="us-east-1")
    assert model_reads  # a session of its own reads them again
    for client in (first, second):
        assert client.meta.service_model.operation_names == plain.meta.service_model.operation_names
        assert client.meta.service_model is not plain.meta.service_model
    assert second.meta.region_name == "eu-west-1"


def count_model_reads(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Run in a Lambda environment: the model files its first S3 and SQS clients read."""
    reads: list[str] = []
    load_file = botocore.loaders.JSONFileLoader.load_file

    def spy(self: Any, file_path: str) -> Any:
        reads.append(file_path)
        return load_file(self, file_path)

    botocore.loaders.JSONFileLoader.load_file = spy  # type: ignore[method-assign]
    try:
        settings = Settings(endpoint_url="http://127.0.0.1:9", region="eu-west-1")
        aws.client("s3", settings)
        aws.client("sqs", settings)
    finally:
        botocore.loaders.JSONFileLoader.load_file = load_file  # type: ignore[method-assign]
    return {"reads": reads}


def test_an_environment_builds_its_clients_from_the_models_its_template_read() -> None:
    """The environments' template reads the S3 and SQS models last (embedded/template.py), so
    an environment forked from it, a cold start, reads none of them to make its clients."""
    spec = EnvironmentSpec(
        "tests.test_cold_start_requests:count_model_reads",
        env={"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"},
    )
    environment = Environment("fn[0]", spec)
    try:
        reply = environment({"Records": []}, FakeLambdaContext("fn"))
    finally:
        environment.stop()
    assert reply == {"reads": []}


def _record(rel: str, n: int = 0) -> JobRecord:
    source = Source(bucket="b", key=keys.inbox_key(rel), etag=f"e{n}", event_time=f"t{n}")
    return JobRecord(status="done", job_id=source.job_id, source=source, pages=1)


def _spied(bucket: Bucket, calls: list[tuple[str, str]]) -> None:
    """Each request ``bucket`` makes, as (method, key or prefix), in ``calls``."""
    for name in ("head", "get", "list_keys", "put"):
        method = getattr(bucket, name)

        def spy(key: str, *args: Any, _name: str = name, _method: Any = method, **kw: Any) -> Any:
            calls.append((_name, key))
            return _method(key, *args, **kw)

        setattr(bucket, name, spy)


def test_the_embedded_server_counts_the_writes_that_may_make_a_record(bucket: Bucket) -> None:
    """Counted once applied: a PUT, a copy or a DELETE of a .json key under outbox/, and any
    POST (a multipart upload completes by one); not a read, nor a write elsewhere, nor a
    job's Markdown and pictures, which it publishes before its record."""
    bucket.put("jobs/j/a.png", b"a")
    before = record_writes()
    bucket.put("inbox/w/doc.pdf", b"%PDF")
    bucket.put("jobs/j/b.json", b"{}")
    bucket.put("outbox/w/doc.md", b"# doc")
    bucket.s3.copy_object(
        Bucket=bucket.name,
        Key="outbox/w/doc.assets/a.png",
        CopySource=f"{bucket.name}/jobs/j/a.png",
    )
    bucket.list_keys(keys.OUTBOX)
    assert bucket.head("outbox/w/none.json") is None
    assert record_writes() == before
    bucket.put("outbox/w/doc.json", b"{}")
    assert record_writes() == before + 1
    bucket.s3.copy_object(
        Bucket=bucket.name, Key="outbox/w/copy.json", CopySource=f"{bucket.name}/jobs/j/b.json"
    )
    bucket.get("outbox/w/doc.json")
    assert record_writes() == before + 2
    bucket.s3.delete_objects(Bucket=bucket.name, Delete={"Objects": [{"Key": "jobs/j/b.png"}]})
    bucket.s3.delete_object(Bucket=bucket.name, Key="outbox/w/doc.json")
    assert record_writes() == before + 4


def test_a_record_write_ends_the_wait_for_it_and_nothing_else_does(bucket: Bucket) -> None:
    """RecordWrites.wait returns at once on a count that moved, waits out its timeout while
    the count stands, and is woken by a record's write from another thread."""
    count = record_writes()
    record_writes.wait(count - 1, timeout_s=60)  # moved already: no wait at all
    started = time.monotonic()
    record_writes.wait(count, timeout_s=0.05)
    assert time.monotonic() - started >= 0.05
    writer = threading.Thread(target=bucket.put, args=("outbox/w/woken.json", b"{}"))
    started = time.monotonic()
    writer.start()
    record_writes.wait(count, timeout_s=60)
    assert time.monotonic() - started < 30  # woken, not timed out
    writer.join()
    assert record_writes() == count + 1


def test_a_look_reads_nothing_while_no_record_was_written(bucket: Bucket) -> None:
    """await_records with the server's count: a look reads the bucket only when a write that
    may have made a record was applied since the count it last looked at, and finds the same
    records as a look every time."""
    rels = ["watched/a", "watched/b"]
    publish(bucket, rels[0], _record(rels[0]), "# a")
    calls: list[tuple[str, str]] = []
    _spied(bucket, calls)
    looks: list[list[tuple[str, str]]] = []

    def on_look(records: dict[str, JobRecord]) -> None:
        looks.append(list(calls))
        calls.clear()
        if len(looks) == 3:  # two looks on the same count; then the second record lands
            publish(bucket, rels[1], _record(rels[1], 1), "# b")
            calls.clear()  # the publishing's own requests

    records = await_records(
        bucket, rels, on_look=on_look, interval_s=0, record_writes=record_writes, timeout_s=60
    )
    assert sorted(records) == rels
    first, second, third, fourth = looks
    assert ("get", keys.outbox_record(rels[0])) in first
    assert second == third == []
    assert fourth == [("head", keys.outbox_record(rels[1])), ("get", keys.outbox_record(rels[1]))]


def test_a_record_the_watch_read_is_downloaded_without_reading_it_again(
    bucket: Bucket, tmp_path: Path
) -> None:
    """The record as Submission.wait read it is the one written, at the key it was found at:
    no HEAD to place it, no second GET; its Markdown and assets as before."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "doc.pdf").write_bytes(b"%PDF-1.4 not a real one")
    submission = Submission.upload(bucket, tmp_path / "in", prefix="dl/", new_bucket=True)
    upload = submission.uploads["dl/doc"]
    source = Source(bucket=bucket.name, key=upload.key, etag="e", event_time="t")
    record = JobRecord(
        status="done",
        job_id=source.job_id,
        source=source,
        pages=1,
        markdown=keys.outbox_markdown("dl/doc"),
    )
    publish(bucket, "dl/doc", record, "# doc", {"page-00001-picture-0.png": b"png"})
    submission.wait(Progress(documents=1), lambda: None, interval_s=0, timeout_s=60)
    calls: list[tuple[str, str]] = []
    _spied(bucket, calls)
    record_key = keys.outbox_record("dl/doc")
    assert submission.record_key("dl/doc") == record_key
    path = submission.download_document("dl/doc", tmp_path / "out")
    assert not [call for call in calls if call[0] == "head" or call[1] == record_key]
    assert path.read_bytes() == bucket.get(record_key)
    assert (tmp_path / "out" / "dl" / "doc.md").read_bytes() == b"# doc"
    assert (tmp_path / "out" / "dl" / "doc.assets" / "page-00001-picture-0.png").read_bytes() == (
        b"png"
    )


def test_an_upload_into_a_new_bucket_is_one_put(bucket: Bucket) -> None:
    """``pagefleet run``'s own server holds no earlier record of any name: nothing is looked
    up before the PUT (put_upload reads the record names otherwise)."""
    calls: list[tuple[str, str]] = []
    _spied(bucket, calls)
    uploaded = put_upload(bucket, "fresh/a", b"%PDF-1.4", new_bucket=True)
    assert calls == [("put", keys.inbox_key("fresh/a"))]
    assert uploaded.replaces is None and uploaded.key == keys.inbox_key("fresh/a")


@pytest.mark.parametrize("chunk_pages", [True, False])
def test_a_wait_counts_converted_chunks_only_for_a_bar_drawn_as_it_goes(
    bucket: Bucket, tmp_path: Path, chunk_pages: bool
) -> None:
    """Submission.wait(chunk_pages=False), as `pagefleet run` waits where its bar is printed
    once, at the end: no LIST of jobs/ for the pages of the documents still converting."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "doc.pdf").write_bytes(b"%PDF-1.4 not a real one")
    submission = Submission.upload(bucket, tmp_path / "in", prefix="bar/", new_bucket=True)
    calls: list[tuple[str, str]] = []
    _spied(bucket, calls)
    with pytest.raises(StillConverting):  # no stack here: one look, then the timeout
        submission.wait(Progress(documents=1), lambda: None, timeout_s=0, chunk_pages=chunk_pages)
    assert (("list_keys", keys.JOBS) in calls) is chunk_pages


def test_a_folder_is_uploaded_largest_file_first(bucket: Bucket, tmp_path: Path) -> None:
    """The largest files, most of a batch's work, are split first, so that none converts
    alone at the end of the batch (Submission.upload)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name, size in [("a", 10), ("b", 3000), ("c", 200)]:
        (folder / f"{name}.pdf").write_bytes(b"%PDF-1.4\n" + b"%" * size)
    calls: list[tuple[str, str]] = []
    _spied(bucket, calls)
    Submission.upload(bucket, folder, prefix="order/", new_bucket=True)
    puts = [key for method, key in calls if method == "put"]
    assert puts == [keys.inbox_key(f"order/{name}") for name in ("b", "c", "a")]
