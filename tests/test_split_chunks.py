"""A chunk that fails on resources is split in halves, down to the page (issue 30, finding 7):
how halves are named, what a split result must say, and how completion waits for them and
records what they came to. The worker's side, end to end, is in test_worker.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.assembly import LandedChunk, job_record
from pagefleet.chunk_results import failed_result, split_result, write_result
from pagefleet.completion import complete_job
from pagefleet.models import (
    ChunkResult,
    ChunkSpec,
    ErrorInfo,
    JobManifest,
    JobRecord,
    Source,
    chunk_of,
)
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import Submission, Upload
from tests.chunk_results import done_result

UPLOADED = "2026-12-01T10:00:00.000Z"
MEMORY = ErrorInfo(code="memory", message="conversion grew past 160 MB and was stopped")


def _plan(sizes: list[int]) -> list[ChunkSpec]:
    chunks, first = [], 1
    for index, size in enumerate(sizes):
        chunks.append(ChunkSpec(index=index, first_page=first, last_page=first + size - 1))
        first += size
    return chunks


def test_every_half_down_to_the_page_has_an_index_of_its_own() -> None:
    planned = _plan([1, 7, 16, 3, 30])
    seen: dict[int, ChunkSpec] = {}
    todo = list(planned)
    while todo:
        chunk = todo.pop()
        assert chunk.index not in seen
        seen[chunk.index] = chunk
        assert chunk_of(planned, chunk.index) == chunk
        root = planned[chunk.planned_index(len(planned))]
        assert root.first_page <= chunk.first_page <= chunk.last_page <= root.last_page
        if chunk.pages > 1:
            first, second = chunk.halves(len(planned))
            assert (first.first_page, second.last_page) == (chunk.first_page, chunk.last_page)
            assert first.last_page + 1 == second.first_page
            assert chunk.halves(len(planned)) == (first, second)  # the same every time
            todo += [first, second]
    pages = sum(c.pages for c in planned)
    assert len(seen) == 2 * pages - len(planned)  # each page a leaf, each split one more node
    assert chunk_of(planned, max(seen) + 1) is None


def test_a_split_result_names_two_halves_that_split_its_chunk() -> None:
    chunk = ChunkSpec(index=0, first_page=3, last_page=8)
    failed = failed_result("j", chunk, MEMORY, attempts=1)
    split = split_result(failed, chunk.halves(1))
    assert split.status == "split" and [h.pages for h in split.halves] == [3, 3]
    assert ChunkResult.model_validate_json(split.model_dump_json()) == split
    bad_halves = [
        [],
        [(3, 8)],
        [(3, 4), (6, 8)],  # page 5 lost
        [(3, 5), (5, 8)],  # page 5 twice
        [(3, 8), (9, 8)],  # an empty half
    ]
    for ranges in bad_halves:
        halves = [ChunkSpec(index=i, first_page=a, last_page=b) for i, (a, b) in enumerate(ranges)]
        with pytest.raises(ValidationError):
            split_result(failed, halves)
    with pytest.raises(ValidationError):  # only a split names halves
        ChunkResult.model_validate({**failed.model_dump(), "halves": split.model_dump()["halves"]})


def _split(job_id: str, chunk: ChunkSpec, chunk_count: int) -> ChunkResult:
    failed = failed_result(job_id, chunk, MEMORY, attempts=1).model_copy(update={"convert_s": 2.0})
    return split_result(failed, chunk.halves(chunk_count))


def test_completion_waits_for_the_halves_and_records_only_the_lost_page(
    settings: Settings, tmp_path: Path
) -> None:
    bucket = Bucket(create_stack(settings).s3, settings.bucket)
    source = Source(
        bucket=bucket.name, key="inbox/halved.pdf", etag="e", event_time="2026-12-01T10:00:00.000Z"
    )
    job = source.job_id
    planned = _plan([2, 4])
    manifest = JobManifest(
        job_id=job, rel="halved", source=source, pages=6, chunks=planned, created_at=0, split_s=0
    )
    bucket.put(keys.manifest(job), manifest.model_dump_json().encode())
    # Pages 3-6 failed on memory: halves 3-4 and 5-6; 5-6 failed again: 5 and 6; 5 failed.
    first, second = planned[1].halves(2)
    fifth, sixth = second.halves(2)
    steps = [
        (done_result(job, planned[0]), "waiting"),
        (_split(job, planned[1], 2), "waiting"),
        (done_result(job, first), "waiting"),
        (_split(job, second, 2), "waiting"),
        (done_result(job, sixth), "waiting"),
        (failed_result(job, fifth, MEMORY, attempts=3), "published"),
    ]
    for result, outcome in steps:
        write_result(bucket, result, _pages_json(result))
        assert complete_job(bucket, job) == outcome
    record = JobRecord.model_validate_json(bucket.get(keys.outbox_record("halved")))
    assert record.status == "partial"
    assert [(c.first_page, c.last_page, c.status) for c in record.chunks] == [
        (1, 2, "done"),
        (3, 4, "done"),
        (5, 5, "failed"),
        (6, 6, "done"),
    ]
    assert record.timings.convert_s == 3.0 + 2 * 2.0  # the splits' conversions count
    markdown = bucket.get(keys.outbox_markdown("halved")).decode()
    assert markdown == (
        "Page 1.\n\nPage 2.\n\nPage 3.\n\nPage 4.\n\n"
        f"> **pagefleet:** page 5 could not be converted (memory: {MEMORY.message}).\n\n"
        "Page 6.\n"
    )
    # `pagefleet run` counts each page once: through the halves, not the chunks split.
    submission = Submission(
        bucket=bucket, uploads={"halved": Upload("inbox/halved.pdf")}, pages={"halved": 6}
    )
    assert submission._pages_converted() == 6


def test_a_job_of_one_chunk_completes_from_its_event_and_lists_only_for_halves(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The event of a one-chunk job's result names every result the job planned: the check
    reads it without listing the job's results. Where that result is a split, the halves,
    which may have landed before it, are found by listing."""
    bucket = Bucket(create_stack(settings).s3, settings.bucket)
    lists: list[str] = []
    list_etags = bucket.list_etags
    monkeypatch.setattr(bucket, "list_etags", lambda p, **k: lists.append(p) or list_etags(p, **k))

    def landed(job: str, result: ChunkResult) -> dict[str, str]:
        write_result(bucket, result, _pages_json(result))
        key = keys.chunk_result(job, result.chunk.index)
        return {key: bucket.list_etags(key)[key]}

    for rel, split in (("whole", False), ("halved-first", True)):
        source = Source(bucket=bucket.name, key=f"inbox/{rel}.pdf", etag="e", event_time=UPLOADED)
        job = source.job_id
        [chunk] = planned = _plan([2])
        manifest = JobManifest(
            job_id=job, rel=rel, source=source, pages=2, chunks=planned, created_at=0, split_s=0
        )
        bucket.put(keys.manifest(job), manifest.model_dump_json().encode())
        if not split:
            event = landed(job, done_result(job, chunk))
            lists.clear()
            assert complete_job(bucket, job, landed=event) == "published"
            assert keys.results_prefix(job) not in lists  # (publishing lists its assets)
            continue
        # The halves converted before their parent's split result was written.
        for half in chunk.halves(1):
            write_result(bucket, done_result(job, half), _pages_json(done_result(job, half)))
        event = landed(job, _split(job, chunk, 1))
        lists.clear()
        assert complete_job(bucket, job, landed=event) == "published"
        assert lists.count(keys.results_prefix(job)) == 1
        record = JobRecord.model_validate_json(bucket.get(keys.outbox_record(rel)))
        assert [(c.first_page, c.last_page) for c in record.chunks] == [(1, 1), (2, 2)]


def _pages_json(result: ChunkResult) -> bytes:
    return b"[" + b",".join(p.model_dump_json().encode() for p in result.pages) + b"]"


def test_a_chunk_whose_pages_all_failed_alike_is_one_entry_of_the_record() -> None:
    source = Source(
        bucket="b", key="inbox/lost.pdf", etag="e", event_time="2026-12-01T10:00:00.000Z"
    )
    planned = _plan([4, 2])
    manifest = JobManifest(
        job_id=source.job_id,
        rel="lost",
        source=source,
        pages=6,
        chunks=planned,
        created_at=0,
        split_s=0,
    )
    first, second = planned[0].halves(2)
    leaves = [*first.halves(2), *second.halves(2), planned[1]]
    results = [failed_result(source.job_id, c, MEMORY, attempts=2) for c in leaves]
    record = job_record(manifest, [LandedChunk.of(r) for r in results], 0.0)
    # Planned chunks stay apart, as they always were; a planned chunk's failed pieces are one.
    assert [(c.first_page, c.last_page, c.attempts) for c in record.chunks] == [
        (1, 4, 2),
        (5, 6, 2),
    ]
    assert record.status == "failed"
