"""The splitter on what goes wrong with inputs (rules 3 and 4): every upload gets a record with
a stable code, whatever the PDF library, the key or S3 does. Against a real moto server, with
no runners: the split is what is under test."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from embedded.demo import report_pdf
from embedded.provision import Stack, create_stack
from pagefleet import keys, splitting
from pagefleet.layout.outline import MAX_TITLE_CHARS, outline_budget, read_outline
from pagefleet.models import ChunkResult, JobManifest, JobRecord, Source
from pagefleet.queues import Queue
from pagefleet.settings import Settings
from pagefleet.splitting import record_dead_upload, split_upload
from pagefleet.status import job_status
from pagefleet.storage import Bucket
from pagefleet.submission import upload
from tests.conftest import corpus_dir
from tests.hostile_pdfs import outline_bomb, page_tree_loop, shared_image_pages


@pytest.fixture
def stack(settings: Settings) -> Stack:
    return create_stack(settings.model_copy(update={"chunk_pages": 1}))


@pytest.fixture
def bucket(stack: Stack) -> Bucket:
    return Bucket(stack.s3, stack.settings.bucket)


def _split(stack: Stack, bucket: Bucket, key: str) -> tuple[str, Source]:
    head = bucket.head(key)
    source = Source(
        bucket=bucket.name,
        key=key,
        etag=head["ETag"].strip('"') if head else "gone",
        version_id=head.get("VersionId") if head else None,
        event_time="2026-12-01T10:00:00.000Z",
    )
    chunks = Queue.named(stack.sqs, f"{stack.settings.queue_prefix}-chunks")
    return split_upload(source, bucket, chunks, stack.settings), source


def _record(bucket: Bucket, rel: str) -> JobRecord:
    return JobRecord.model_validate_json(bucket.get(keys.outbox_record(rel)))


def test_a_page_tree_that_cannot_be_cut_fails_the_job_as_malformed(
    stack: Stack, bucket: Bucket
) -> None:
    # PDFium opens it and counts its pages, then refuses to copy the looping node.
    key = upload(bucket, "loop", page_tree_loop(good_pages=0))
    assert _split(stack, bucket, key)[0] == "failed"
    record = _record(bucket, "loop")
    assert record.status == "failed" and record.error is not None
    assert record.error.code == "malformed" and "cannot be read" in record.error.message


def test_pages_that_can_be_cut_still_convert_beside_one_that_cannot(
    stack: Stack, bucket: Bucket
) -> None:
    key = upload(bucket, "mostly", page_tree_loop(good_pages=11))
    outcome, source = _split(stack, bucket, key)
    assert outcome == "split"
    manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(source.job_id)))
    assert len(manifest.chunks) == 12
    # The eleven good pages are announced; the twelfth is recorded as failed, so the job can end.
    [failed_key] = bucket.list_keys(keys.results_prefix(source.job_id))
    failed = ChunkResult.model_validate_json(bucket.get(failed_key))
    assert failed.chunk.first_page == 12 and failed.status == "failed"
    assert failed.error is not None and failed.error.code == "malformed"
    depth = stack.sqs.get_queue_attributes(
        QueueUrl=stack.queue_urls["chunks"], AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]["ApproximateNumberOfMessages"]
    assert int(depth) == 11


def test_the_first_chunks_are_announced_as_soon_as_each_lane_has_one(
    stack: Stack, bucket: Bucket
) -> None:
    batches: list[int] = []

    class Recording(Queue):
        def send_all(self, bodies: Sequence[str]) -> None:
            batches.append(len(bodies))
            super().send_all(bodies)

    settings = stack.settings.model_copy(update={"fleet_lanes": 2})
    key = upload(bucket, "mostly", page_tree_loop(good_pages=11))
    source = Source(bucket=bucket.name, key=key, etag=bucket.head(key)["ETag"].strip('"'))
    chunks = Recording.named(stack.sqs, f"{settings.queue_prefix}-chunks")
    assert split_upload(source, bucket, chunks, settings) == "split"
    # Two lanes start on chunks 1-2 while 3-12 are cut; the twelfth cannot be, and is not sent.
    assert batches == [2, 9]


def test_an_input_deleted_before_its_split_gets_a_record(stack: Stack, bucket: Bucket) -> None:
    key = upload(bucket, "vanished", b"%PDF-1.4 whatever")
    head = bucket.head(key)
    bucket.delete(key)
    assert head is not None
    source = Source(bucket=bucket.name, key=key, etag=head["ETag"].strip('"'), event_time="t")
    chunks = Queue.named(stack.sqs, f"{stack.settings.queue_prefix}-chunks")
    assert split_upload(source, bucket, chunks, stack.settings) == "failed"
    record = _record(bucket, "vanished")
    assert record.error is not None and record.error.code == "input_gone"


def test_a_repeated_event_sends_nothing_again_and_only_it_looks_for_the_marker(
    stack: Stack, bucket: Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule 1: the event of an upload split already, delivered again, is skipped, even once
    the upload is gone, and records nothing. The first delivery spends no request looking for
    the marker that ends repeats; a repeat finds it when it meets the job's manifest."""
    looked: list[str] = []
    head = bucket.head
    monkeypatch.setattr(bucket, "head", lambda key: looked.append(key) or head(key))
    key = upload(bucket, "again", report_pdf(tmp_path / "a.pdf", sections=3).read_bytes())
    looked.clear()
    outcome, source = _split(stack, bucket, key)  # _split's own HEAD of the upload first
    assert outcome == "split" and looked == [key]

    def sent() -> int:
        return int(
            stack.sqs.get_queue_attributes(
                QueueUrl=stack.queue_urls["chunks"], AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]["ApproximateNumberOfMessages"]
        )

    messages = sent()
    assert messages > 1
    chunks = Queue.named(stack.sqs, f"{stack.settings.queue_prefix}-chunks")
    looked.clear()
    assert split_upload(source, bucket, chunks, stack.settings) == "skipped"
    assert looked == [keys.sent_marker(source.job_id)]
    bucket.delete(key)
    assert split_upload(source, bucket, chunks, stack.settings) == "skipped"
    assert sent() == messages
    assert bucket.head(keys.outbox_record("again")) is None  # no failed record: the job stands


@pytest.mark.parametrize(
    "rel", ["a/../x", "a/./x", "a//x", "deep/" + "n" * 1000, "ü" * 480], ids=len
)
def test_an_input_whose_outbox_keys_would_be_unsafe_is_refused_with_a_findable_record(
    stack: Stack, bucket: Bucket, rel: str
) -> None:
    key = f"{keys.INBOX}{rel}.pdf"
    if len(key.encode()) > keys.MAX_KEY_BYTES:
        pytest.skip("S3 itself refuses this input key")
    bucket.put(key, b"%PDF-1.4 whatever")
    assert _split(stack, bucket, key)[0] == "failed"
    record_key = keys.outbox_record(rel)
    assert record_key.startswith(keys.REFUSED) and len(record_key) < 100
    record = _record(bucket, rel)
    assert record.error is not None and record.error.code == "bad_key"
    assert record.source.key == key
    assert bucket.list_keys(keys.OUTBOX) == [record_key]  # nothing at the unsafe names


def test_a_long_but_safe_name_is_accepted() -> None:
    rel = "n" * (keys.MAX_KEY_BYTES - len("outbox/.assets/") - keys.ASSET_NAME_BYTES)
    assert keys.key_problem(rel) is None
    assert keys.key_problem(rel + "n") is not None


def test_an_upload_whose_event_reached_the_dlq_gets_a_failed_record(
    stack: Stack, bucket: Bucket, tmp_path: Path
) -> None:
    key = upload(bucket, "poison", report_pdf(tmp_path / "p.pdf", sections=1).read_bytes())
    head = bucket.head(key)
    assert head is not None
    source = Source(bucket=bucket.name, key=key, etag=head["ETag"].strip('"'), event_time="t")
    assert record_dead_upload(source, bucket, receive_count=5) == "failed"
    record = _record(bucket, "poison")
    assert record.error is not None and record.error.code == "dead_letter"
    assert "5 times" in record.error.message
    # An upload that was split after all is left to finish.
    split = upload(bucket, "split-anyway", (tmp_path / "p.pdf").read_bytes())
    outcome, split_source = _split(stack, bucket, split)
    assert outcome == "split"
    assert record_dead_upload(split_source, bucket, receive_count=5) == "skipped"
    assert bucket.head(keys.outbox_record("split-anyway")) is None


def test_every_hostile_pdf_of_the_corpus_gets_a_job_or_a_coded_record(
    stack: Stack, bucket: Bucket
) -> None:
    for path in sorted(corpus_dir("bad").glob("*.pdf")):
        key = upload(bucket, f"bad/{path.stem}", path.read_bytes())
        outcome, source = _split(stack, bucket, key)
        if outcome == "split":
            manifest = json.loads(bucket.get(keys.manifest(source.job_id)))
            assert manifest["pages"] >= 1, path.name
        else:
            record = _record(bucket, f"bad/{path.stem}")
            assert record.error is not None and record.error.code, path.name


@pytest.mark.parametrize(("bookmarks", "title_bytes"), [(1000, 50_000), (2000, 100_000)])
def test_an_outline_bomb_makes_a_manifest_of_a_few_times_its_file(
    stack: Stack,
    bucket: Bucket,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    bookmarks: int,
    title_bytes: int,
) -> None:
    # Bookmarks sharing one title object: 175 KB that named 50 MB of titles (a 50 MB manifest;
    # 2,000 x 100 KB took 647 MB and 10 s). What is read of the titles is counted, not RSS.
    pdf = outline_bomb(bookmarks, title_bytes)
    read: list[int] = []
    get_title = pdfium.PdfBookmark.get_title

    def counted(item: pdfium.PdfBookmark) -> str:
        title = get_title(item)
        read.append(len(title))
        return title

    monkeypatch.setattr(pdfium.PdfBookmark, "get_title", counted)
    outcome, source = _split(stack, bucket, upload(bucket, "bomb", pdf))
    assert outcome == "split"
    body = bucket.get(keys.manifest(source.job_id))
    assert len(body) <= 2 * len(pdf)
    assert sum(read) <= outline_budget(len(pdf)) < 4 * len(pdf)
    outline = JobManifest.model_validate_json(body).outline
    assert outline and all(len(entry["title"]) <= MAX_TITLE_CHARS for entry in outline)
    # The whole document read in one process has the same outline (rule 5).
    path = tmp_path / "bomb.pdf"
    path.write_bytes(pdf)
    assert read_outline(path) == outline


def test_a_manifest_past_its_limit_fails_the_job_with_nothing_stored_or_sent(
    stack: Stack, bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    for limit in (
        "MANIFEST_FLOOR_BYTES",
        "MANIFEST_BYTES_PER_PAGE",
        "MANIFEST_BYTES_PER_UPLOAD_BYTE",
    ):
        monkeypatch.setattr(splitting, limit, 0)  # so that any manifest is over it
    outcome, source = _split(stack, bucket, upload(bucket, "over", page_tree_loop(good_pages=3)))
    assert outcome == "failed"
    record = _record(bucket, "over")
    assert record.error is not None and record.error.code == "too_large"
    assert "bytes" in record.error.message
    assert bucket.list_keys(keys.job_prefix(source.job_id)) == []
    assert _chunks_queued(stack) == 0


def test_chunks_that_copy_a_shared_image_stay_within_a_multiple_of_the_upload(
    stack: Stack, bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 64 one-page chunks of a 78 KB file each copy its 64 KB image: 4.3 MB, 55x the upload.
    # Without the floor (64 MiB, for real documents' fonts) a small file shows the limit.
    monkeypatch.setattr(splitting, "CHUNKS_FLOOR_BYTES", 0)
    pdf = shared_image_pages(64, 64 * 1024)
    outcome, source = _split(stack, bucket, upload(bucket, "shared", pdf))
    assert outcome == "split"
    stored = [
        len(bucket.get(key)) for key in bucket.list_keys(keys.job_prefix(source.job_id) + "chunks/")
    ]
    assert 0 < sum(stored) <= splitting.CHUNKS_BYTES_PER_UPLOAD_BYTE * len(pdf)
    assert _chunks_queued(stack) == len(stored)
    # The pages past the limit are recorded as failed, so the job still ends (partial).
    results = [
        ChunkResult.model_validate_json(bucket.get(key))
        for key in bucket.list_keys(keys.results_prefix(source.job_id))
    ]
    assert len(results) + len(stored) == 64
    assert {(r.status, r.error.code if r.error else None) for r in results} == {
        ("failed", "too_large")
    }


def _chunks_queued(stack: Stack) -> int:
    attributes = stack.sqs.get_queue_attributes(
        QueueUrl=stack.queue_urls["chunks"], AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def test_no_upload_reaches_the_record_of_a_refused_name(stack: Stack, bucket: Bucket) -> None:
    refused = f"{keys.INBOX}a/../x.pdf"
    bucket.put(refused, b"%PDF-1.4 whatever")
    assert _split(stack, bucket, refused)[0] == "failed"
    record_key = keys.outbox_record("a/../x")
    # Uploading inbox/_refused/<hash>.pdf once wrote outbox/_refused/<hash>.json.
    forger = keys.inbox_key(record_key[len(keys.OUTBOX) : -len(".json")])
    bucket.put(forger, b"not a pdf")
    assert _split(stack, bucket, forger)[0] == "failed"
    assert _record(bucket, "a/../x").source.key == refused
    assert _record(bucket, keys.rel_of(forger)).source.key == forger  # at a name of its own
    job = job_status(bucket, keys.document_named(refused))
    assert job is not None and job.record is not None and job.record.source.key == refused
