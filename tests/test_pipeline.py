"""The whole flow on a real moto server: upload to inbox/, Markdown and a record in outbox/."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from embedded import MotoServer
from embedded.demo import report_pdf
from embedded.pipeline import (
    CONCURRENCY,
    FUNCTIONS,
    LocalPipeline,
    RunnerFailed,
    default_concurrency,
)
from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.completion import complete_job
from pagefleet.models import ChunkMessage, ChunkSpec, JobManifest, JobRecord, Source
from pagefleet.settings import Settings
from pagefleet.stack import notification_configuration, queue_specs
from pagefleet.status import job_status, jobs_finished
from pagefleet.storage import Bucket
from pagefleet.submission import Upload, await_records, upload
from rehearsal.iam import IamDouble, iam_double
from runner.converters.text_layer import convert_document
from tests import layout_pdfs
from tests.conftest import corpus_dir, wait_for_record

ERROR_CODES = {
    "not_pdf",
    "empty",
    "encrypted",
    "no_pages",
    "too_many_pages",
    "too_large",
    "malformed",
    "timeout",
    "memory",
    "convert_error",
    "dead_letter",
    "all_chunks_failed",
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated report of about 20 pages: several chunks at 4 pages each."""
    return report_pdf(tmp_path_factory.mktemp("pdfs") / "report.pdf", sections=40, seed=11)


def test_generated_document_is_chunked_and_equals_the_whole_document_run(
    bucket: Bucket, report: Path
) -> None:
    upload(bucket, "reports/report", report.read_bytes())
    record = wait_for_record(bucket, "reports/report")
    assert record.status == "done"
    assert len(record.chunks) > 3
    assert [c.first_page for c in record.chunks] == sorted(c.first_page for c in record.chunks)
    assert record.chunks[-1].last_page == record.pages
    markdown = bucket.get(keys.outbox_markdown("reports/report")).decode()
    assert markdown == convert_document(report)  # rule 5, byte for byte


def test_keys_with_spaces_plus_unicode_and_folders_round_trip(bucket: Bucket, report: Path) -> None:
    data = report.read_bytes()
    rels = ["a b/c+d/ünï cödé", "deep/er/still/Upper", "plain"]
    for rel, suffix in zip(rels, [".pdf", ".PDF", ".Pdf"], strict=True):
        upload(bucket, rel, data, suffix)
    for rel in rels:
        record = wait_for_record(bucket, rel)
        assert record.status == "done"
        assert record.markdown == keys.outbox_markdown(rel)
        assert bucket.head(keys.outbox_markdown(rel)) is not None
        assert record.source.key.startswith(f"inbox/{rel}.")


def test_bad_input_gets_a_clear_record_and_stays(pipeline: LocalPipeline, bucket: Bucket) -> None:
    expected = {
        "empty-0-bytes": "empty",
        "not-a-pdf-text": "not_pdf",
        "zero-pages": "no_pages",
        "encrypted-aes128-open-password": "encrypted",
        "truncated-mid-object": "malformed",
    }
    files = sorted(corpus_dir("bad").glob("*.pdf"))
    for path in files:
        upload(bucket, f"bad/{path.stem}", path.read_bytes())
    for path in files:
        record = wait_for_record(bucket, f"bad/{path.stem}")
        assert bucket.head(f"inbox/bad/{path.stem}.pdf") is not None  # input left alone
        if path.stem in expected:
            assert record.status == "failed"
            assert record.error is not None and record.error.code == expected[path.stem]
            assert record.error.message
        elif record.status != "done":
            codes = {c.error.code for c in record.chunks if c.error}
            assert codes <= ERROR_CODES, codes
    # No crash loop: the runner is still up, and nothing is left on any queue.
    assert pipeline.runner is not None and pipeline.runner.poll() is None


def _short_report(folder: Path) -> Path:
    return report_pdf(folder / "short.pdf", sections=2, seed=11)


def _one_page_scan(folder: Path) -> Path:
    return layout_pdfs.scanned(folder, ["Sediment settles slowly"])


@pytest.mark.parametrize(
    ("budget", "document", "code"),
    [
        # No conversion ends within a millisecond: every page of the chunk is tried (its halves
        # down to the page: 2n - 1 conversions), so the document is a short one.
        ({"convert_timeout_s": 0.001}, _short_report, "timeout"),
        # The watchdog samples the child's RSS every 0.2 s, and a text-layer page converts in
        # less at a few MB over the idle child's ~55: only a conversion that stays past the
        # smallest budget (64 MB) is certain to be caught. OCR does: ~540 MB for ~1.5 s.
        ({"convert_memory_mb": 64}, _one_page_scan, "memory"),
    ],
)
def test_conversion_past_its_budget_is_stopped_and_recorded(
    moto_server,
    settings: Settings,
    tmp_path: Path,
    budget: dict,
    document: Callable[[Path], Path],
    code: str,
) -> None:
    settings = settings.model_copy(update={**budget, "max_attempts": 1, "chunk_pages": 100})
    with LocalPipeline(settings, workers=1, server=moto_server) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        upload(bucket, "slow", document(tmp_path).read_bytes())
        record = wait_for_record(bucket, "slow")
        assert record.status == "failed"
        assert [c.error.code for c in record.chunks if c.error] == [code]
        assert record.error is not None and record.error.code == "all_chunks_failed"
        assert local.runner is not None and local.runner.poll() is None


def _s3_event(record_source) -> str:
    """The notification S3 sent for an upload, rebuilt from what the job record kept."""
    return json.dumps(
        {
            "Records": [
                {
                    "eventVersion": "2.1",
                    "eventSource": "aws:s3",
                    "eventName": "ObjectCreated:Put",
                    "eventTime": record_source.event_time,
                    "awsRegion": "us-east-1",
                    "s3": {
                        "bucket": {"name": record_source.bucket},
                        "object": {
                            "key": record_source.key.replace(" ", "+"),
                            "eTag": record_source.etag,
                            "size": record_source.size,
                        },
                    },
                }
            ]
        }
    )


def test_duplicates_make_one_job_and_one_final_write(
    pipeline: LocalPipeline, bucket: Bucket, report: Path
) -> None:
    assert pipeline.stack is not None
    sqs, urls = pipeline.stack.sqs, pipeline.stack.queue_urls
    upload(bucket, "dup me", report.read_bytes())
    record = wait_for_record(bucket, "dup me")
    md_before = bucket.head(keys.outbox_markdown("dup me"))
    manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(record.job_id)))

    def jobs() -> set[str]:
        return {k.split("/")[1] for k in bucket.list_keys(keys.JOBS)}

    jobs_before = jobs()
    assert record.job_id in jobs_before
    # The same S3 event, delivered again, is the same job: nothing new is split or sent.
    sqs.send_message(QueueUrl=urls["ingest"], MessageBody=_s3_event(record.source))
    # The same chunk message, delivered again, converts to the same result.
    chunk = manifest.chunks[1]
    result_before = json.loads(bucket.get(keys.chunk_result(record.job_id, chunk.index)))
    message = {
        "job_id": record.job_id,
        "bucket": bucket.name,
        "chunk": chunk.model_dump(),
        "chunk_count": len(manifest.chunks),
        "sent_at": time.time(),
    }
    sqs.send_message(QueueUrl=urls["chunks"], MessageBody=json.dumps(message))
    _wait_queues_empty(sqs, [urls["ingest"], urls["chunks"], urls["completion"]])

    assert jobs() == jobs_before  # the stack is shared: other tests' jobs are there too
    result_after = json.loads(bucket.get(keys.chunk_result(record.job_id, chunk.index)))
    assert result_after["pages"] == result_before["pages"]
    assert bucket.head(keys.outbox_markdown("dup me"))["ETag"] == md_before["ETag"]

    # Completions racing on a finished job: the outbox objects were each written once.
    outcomes: list[str] = []
    threads = [
        threading.Thread(target=lambda: outcomes.append(complete_job(bucket, record.job_id)))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(outcomes) == {"already"}
    for key in (keys.outbox_markdown("dup me"), keys.outbox_record("dup me")):
        versions = bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=key)["Versions"]
        assert len([v for v in versions if v["Key"] == key]) == 1


def test_racing_completions_write_the_outbox_once(bucket: Bucket, report: Path) -> None:
    upload(bucket, "race", report.read_bytes())
    record = wait_for_record(bucket, "race")
    # Take the published objects away and let six completions race to publish them again.
    for key in (keys.outbox_markdown("race"), keys.outbox_record("race")):
        for v in bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=key)["Versions"]:
            bucket.s3.delete_object(Bucket=bucket.name, Key=key, VersionId=v["VersionId"])
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def complete() -> None:
        barrier.wait()
        outcomes.append(complete_job(bucket, record.job_id))

    threads = [threading.Thread(target=complete) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "published" in outcomes
    for key in (keys.outbox_markdown("race"), keys.outbox_record("race")):
        versions = bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=key)["Versions"]
        assert len([v for v in versions if v["Key"] == key]) == 1, key


def _wait_queues_empty(sqs, urls: list[str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    while any(
        int(v)
        for url in urls
        for v in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"].values()
    ):
        if time.monotonic() > deadline:
            raise TimeoutError("queues did not drain")
        time.sleep(0.1)


def test_worker_killed_mid_chunk_is_redone_after_its_lease(
    moto_server, settings: Settings, tmp_path: Path
) -> None:
    # One chunk of about 60 pages: a couple of seconds of conversion, time to kill it mid-way.
    big = report_pdf(tmp_path / "big.pdf", sections=120, seed=5)
    settings = settings.model_copy(
        update={"chunk_pages": 1000, "visibility_timeout_s": 5, "heartbeat_s": 1}
    )
    with LocalPipeline(settings, workers=1, server=moto_server) as local:
        assert local.stack is not None and local.runner is not None
        local.wait_ready()
        bucket = Bucket(local.stack.s3, settings.bucket)
        upload(bucket, "killed", big.read_bytes())
        _wait_for_conversion(bucket)  # the worker holds the chunk and converts it
        for proc in psutil.Process(local.runner.pid).children():
            os.killpg(proc.pid, signal.SIGKILL)  # the worker and its conversion process
        record = wait_for_record(bucket, "killed")
    assert record.status == "done"
    # The lease ran out and the chunk came back: two conversions, the killed one included.
    assert record.chunks[0].attempts == 2
    assert bucket.get(keys.outbox_markdown("killed")).decode() == convert_document(big)


def _wait_for_conversion(bucket: Bucket, timeout_s: float = 60) -> None:
    """Until a worker has begun converting a chunk: it counts the conversion as it starts."""
    deadline = time.monotonic() + timeout_s
    while not any("/conversions/" in key for key in bucket.list_keys(keys.JOBS)):
        assert time.monotonic() < deadline, "no worker began a conversion"
        time.sleep(0.02)  # another process's write: nothing to await but a look


def test_a_chunk_in_the_dead_letter_queue_is_recorded_and_the_job_ends_partial(
    moto_server, settings: Settings, report: Path
) -> None:
    with LocalPipeline(settings, workers=2, server=moto_server, start_runners=False) as local:
        assert local.stack is not None
        sqs, stack = local.stack.sqs, local.stack
        bucket = Bucket(stack.s3, settings.bucket)
        upload(bucket, "holed", report.read_bytes())
        messages: list[dict] = []
        while len(messages) < 2:  # the splitter sends them as soon as it has run
            messages += sqs.receive_message(
                QueueUrl=stack.queue_urls["chunks"], MaxNumberOfMessages=10, WaitTimeSeconds=1
            ).get("Messages", [])
        victim = next(m for m in messages if json.loads(m["Body"])["chunk"]["index"] == 1)
        # What SQS's redrive does after maxReceiveCount deliveries (exercised for real in
        # test_dispatch.py), done at once: the message moves to the DLQ.
        sqs.send_message(QueueUrl=stack.dlq_urls["chunks"], MessageBody=victim["Body"])
        sqs.delete_message(
            QueueUrl=stack.queue_urls["chunks"], ReceiptHandle=victim["ReceiptHandle"]
        )
        for m in messages:
            if m is not victim:
                sqs.change_message_visibility(
                    QueueUrl=stack.queue_urls["chunks"],
                    ReceiptHandle=m["ReceiptHandle"],
                    VisibilityTimeout=0,
                )
        local.start_runners()
        record = wait_for_record(bucket, "holed")
    assert record.status == "partial"
    failed = [c for c in record.chunks if c.status == "failed"]
    assert [c.index for c in failed] == [1]
    assert failed[0].error is not None and failed[0].error.code == "dead_letter"
    # The DLQ tells how often the message was received, not that a runner died on it: this one
    # was moved there by another consumer of the queue.
    assert "died" not in failed[0].error.message
    assert "received" in failed[0].error.message
    markdown = bucket.get(keys.outbox_markdown("holed")).decode()
    first, last = failed[0].first_page, failed[0].last_page
    assert f"pages {first}–{last} could not be converted" in markdown
    assert len(markdown) > 1000  # the other chunks are all there


def test_an_input_deleted_after_its_split_still_converts_from_the_chunks(
    moto_server, settings: Settings, report: Path
) -> None:
    with LocalPipeline(settings, workers=2, server=moto_server, start_runners=False) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        key = upload(bucket, "deleted later", report.read_bytes())
        while not [k for k in bucket.list_keys(keys.JOBS) if k.endswith("/sent")]:
            time.sleep(0.05)  # S3 offers nothing to await: the splitter's marker ends the split
        bucket.delete(key)
        local.start_runners()
        record = wait_for_record(bucket, "deleted later")
    assert record.status == "done"  # the chunk PDFs are the job's own copy of the input
    assert bucket.get(keys.outbox_markdown("deleted later")).decode() == convert_document(report)


def test_a_poison_upload_whose_event_reaches_the_ingest_dlq_gets_a_failed_record(
    pipeline: LocalPipeline, bucket: Bucket, report: Path
) -> None:
    stack = pipeline.stack
    assert stack is not None
    # An upload the splitter failed on maxReceiveCount times: its event goes where SQS's
    # redrive puts it, the ingest DLQ.
    event = _dead_upload_event(pipeline, bucket, "poison", report.read_bytes())
    stack.sqs.send_message(QueueUrl=stack.dlq_urls["ingest"], MessageBody=event)
    record = wait_for_record(bucket, "poison")
    assert record.status == "failed"
    assert record.error is not None and record.error.code == "dead_letter"
    assert bucket.head(keys.inbox_key("poison")) is not None  # the input stays


def _dead_upload_event(local: LocalPipeline, bucket: Bucket, rel: str, data: bytes) -> str:
    """Upload ``data`` as ``rel`` with the notifications off; the event S3 would have sent."""
    key = keys.inbox_key(rel)
    _without_notifications(local, lambda: upload(bucket, rel, data))
    head = bucket.head(key)
    assert head is not None
    source = Source(
        bucket=bucket.name,
        key=key,
        etag=head["ETag"].strip('"'),
        version_id=head.get("VersionId"),
        event_time="2026-12-01T10:00:00.000Z",
    )
    return _s3_event(source)


def test_uploads_whose_names_once_collided_each_keep_their_own_outputs(
    bucket: Bucket, tmp_path: Path
) -> None:
    data = report_pdf(tmp_path / "one.pdf", sections=1, seed=3).read_bytes()
    uploads = [
        ("x/a.assets/child", ".pdf"),  # in what becomes the next one's assets folder
        ("x/a", ".pdf"),
        ("x/Case", ".pdf"),
        ("x/Case", ".PDF"),  # the same name but for the letter case of .pdf
    ]
    for done, (rel, suffix) in enumerate(uploads):
        key = upload(bucket, rel, data, suffix)
        if done < 3:
            wait_for_record(bucket, rel)
        else:  # awaited where its own record is, not where the other key's is
            await_records(bucket, [rel], uploads={rel: Upload(key)}, timeout_s=120)
        # Each earlier upload still has its record, at once.
        for earlier, _ in uploads[:done]:
            assert await_records(bucket, [earlier], timeout_s=0)[earlier].source.key != key
    for rel, suffix in uploads:
        key = keys.inbox_key(rel, suffix)
        job = job_status(bucket, keys.document_named(key))
        assert job is not None and job.record is not None, key
        assert job.record.source.key == key and job.record.status == "done"
        assert job.record.markdown is not None and bucket.head(job.record.markdown) is not None
    finished = {record.source.key for record in jobs_finished(bucket)}
    assert {keys.inbox_key(rel, suffix) for rel, suffix in uploads} <= finished


def test_an_upload_named_only_pdf_gets_a_record(pipeline: LocalPipeline, bucket: Bucket) -> None:
    assert pipeline.stack is not None
    bucket.put("inbox/.pdf", b"%PDF-1.4 no name")  # the notification rules announce it
    _wait_queues_empty(pipeline.stack.sqs, [pipeline.stack.queue_urls["ingest"]])
    record = JobRecord.model_validate_json(bucket.get(keys.outbox_record("")))
    assert record.source.key == "inbox/.pdf"
    assert record.error is not None and record.error.code == "bad_key"


def test_a_runner_that_cannot_run_stops_the_stack_with_its_reason(
    moto_server: MotoServer, settings: Settings
) -> None:
    """`pagefleet run` waits for warm workers, `pagefleet up` for a signal: either gets the
    runner's reason (here a converter that is not installed, and the fix) as soon as the
    runner exits, rather than waiting for ever on a runner that is gone."""
    if importlib.util.find_spec("marker") is not None:
        pytest.skip("marker-pdf is installed here")
    local = LocalPipeline(
        settings.model_copy(update={"converter": "marker"}),
        server=moto_server,
        stack=create_stack(settings, create_bucket=False),
        start_runners=False,
    )
    said = "converter marker needs marker-pdf: pip install 'pagefleet[marker]'"
    try:
        local.start_runners()  # what start() does, without the functions this needs none of
        stop = threading.Event()
        with pytest.raises(RunnerFailed) as failed:
            local.wait(stop)
        assert str(failed.value) == said and stop.is_set()
        with pytest.raises(RunnerFailed, match=re.escape(said)):
            local.wait_ready()
    finally:
        local.stop()


def test_every_dlq_has_a_consumer() -> None:
    """Rule 3: what lands in a DLQ nothing reads is never seen again."""
    consumed = {role for role, dead_letters, _, _ in FUNCTIONS.values() if dead_letters}
    assert consumed == {spec.role for spec in queue_specs(Settings())}


def _without_notifications(local: LocalPipeline, write: Callable[[], None]) -> None:
    """``write`` with the bucket's notifications off: what SQS's redrive leaves behind, a
    message in a DLQ, is then sent there by hand, not raced by a live delivery."""
    stack = local.stack
    assert stack is not None
    name = local.settings.bucket
    stack.s3.put_bucket_notification_configuration(Bucket=name, NotificationConfiguration={})
    try:
        write()
    finally:
        stack.s3.put_bucket_notification_configuration(
            Bucket=name, NotificationConfiguration=notification_configuration(stack.queue_arns)
        )


def _result_event(bucket: str, key: str) -> str:
    source = Source(bucket=bucket, key=key, etag="0", event_time="2026-12-01T10:00:00.000Z")
    return _s3_event(source)


def test_a_job_whose_completion_reaches_the_dlq_gets_a_failed_record(
    pipeline: LocalPipeline, bucket: Bucket
) -> None:
    stack = pipeline.stack
    assert stack is not None
    manifest = _job(bucket, "completion poison")
    result = keys.chunk_result(manifest.job_id, 0)
    _without_notifications(pipeline, lambda: bucket.put(result, b"no completion can read this"))
    # Its completion failed maxReceiveCount times (the garbage result), so its event is here.
    stack.sqs.send_message(
        QueueUrl=stack.dlq_urls["completion"], MessageBody=_result_event(bucket.name, result)
    )
    record = wait_for_record(bucket, "completion poison")
    assert record.status == "failed" and record.job_id == manifest.job_id
    assert record.error is not None and record.error.code == "dead_letter"
    assert "completion step failed" in record.error.message


def test_what_names_no_job_in_the_completion_dlq_is_consumed_not_left(
    pipeline: LocalPipeline, bucket: Bucket
) -> None:
    """A body that is no S3 event, a result of a job with no manifest, a key that is no chunk
    result's: nothing to record, so the consumer reports each (an error log and a metric) and
    takes it off the DLQ, where it would otherwise sit unseen until its retention ran out."""
    stack = pipeline.stack
    assert stack is not None
    url = stack.dlq_urls["completion"]
    for body in (
        "not an S3 event",
        _result_event(bucket.name, keys.chunk_result("no-such-job", 0)),
        _result_event(bucket.name, "jobs/x/results/²³.result.json"),
        _result_event(bucket.name, "outbox/a user's.json"),
    ):
        stack.sqs.send_message(QueueUrl=url, MessageBody=body)
    _wait_queues_empty(stack.sqs, [url])


@pytest.fixture
def double(moto_server, settings: Settings) -> Iterator[IamDouble]:
    with iam_double(moto_server.url, settings.bucket, settings.queue_prefix) as running:
        yield running


def test_every_function_and_the_runner_under_its_own_terraform_role(
    moto_server, settings: Settings, double: IamDouble, report: Path
) -> None:
    """Each function and the runner signs as its own role, through the IAM double, which
    answers as AWS answers those roles (rehearsal/iam.py: Terraform's planned policies):
    an upload converts, and each DLQ's consumer does its work, with nothing denied."""
    with LocalPipeline(
        settings,
        workers=1,
        server=moto_server,
        functions_endpoint_url=double.url,
        function_env=lambda entry_point: double.credentials(double.role_of(entry_point)),
        runner_env=double.credentials(double.role_of("python -m runner")),
    ) as local:
        stack = local.stack
        assert stack is not None
        bucket = Bucket(stack.s3, settings.bucket)
        upload(bucket, "as roles", report.read_bytes())
        assert wait_for_record(bucket, "as roles").status == "done"

        # What the three DLQs hold, written first: the writes made with the bucket's
        # notifications off come before any message is sent, since a handler's write that
        # landed while they were off would never be announced (the dead chunk's result was,
        # once, and its job never ended).
        dead = _job(bucket, "dead chunk")  # a chunk of a job that never converted it
        poisoned = _job(bucket, "dead completion")  # a job whose result no completion can read
        result = keys.chunk_result(poisoned.job_id, 0)
        _without_notifications(local, lambda: bucket.put(result, b"unreadable"))
        event = _dead_upload_event(local, bucket, "dead upload", report.read_bytes())
        message = ChunkMessage(
            job_id=dead.job_id,
            bucket=bucket.name,
            chunk=dead.chunks[0],
            chunk_count=1,
            sent_at=time.time(),
        )
        stack.sqs.send_message(
            QueueUrl=stack.dlq_urls["chunks"], MessageBody=message.model_dump_json()
        )
        stack.sqs.send_message(
            QueueUrl=stack.dlq_urls["completion"],
            MessageBody=_result_event(bucket.name, result),
        )
        # The upload the splitter failed on.
        stack.sqs.send_message(QueueUrl=stack.dlq_urls["ingest"], MessageBody=event)

        records = await_records(
            bucket, ["dead chunk", "dead completion", "dead upload"], timeout_s=120
        )
    assert {rel: r.status for rel, r in records.items()} == dict.fromkeys(records, "failed")
    assert all(r.error is not None for r in records.values())
    assert double.denials() == []
    roles = {role for role, _, _ in double.seen}
    assert roles == set(double.roles), f"unused: {set(double.roles) - roles}"


def _job(bucket: Bucket, rel: str) -> JobManifest:
    """The manifest of a one-page job split without a chunk PDF, written to ``bucket``."""
    source = Source(
        bucket=bucket.name, key=keys.inbox_key(rel), etag="1", event_time="2026-12-01T10:00:00Z"
    )
    manifest = JobManifest(
        job_id=source.job_id,
        rel=rel,
        source=source,
        pages=1,
        chunks=[ChunkSpec(index=0, first_page=1, last_page=1)],
        created_at=time.time(),
        split_s=0.0,
    )
    bucket.put(keys.manifest(source.job_id), manifest.model_dump_json().encode())
    return manifest


def test_functions_never_get_more_environments_than_the_machine_has_cores() -> None:
    """More environments than cores only contend (each also costs a start); a larger machine
    keeps the Lambda-like concurrency, and an explicit one is taken as given."""
    assert default_concurrency(2) == {
        "splitter": 2,
        "completion": 2,
        "upload-dead-letters": 1,
        "chunk-dead-letters": 1,
        "completion-dead-letters": 1,
    }
    assert default_concurrency(1) == dict.fromkeys(CONCURRENCY, 1)
    assert default_concurrency(64) == CONCURRENCY
    pipeline = LocalPipeline(Settings(bucket="b"), concurrency={"splitter": 6})
    assert pipeline.concurrency["splitter"] == 6
    assert pipeline.concurrency["completion"] == default_concurrency()["completion"]
