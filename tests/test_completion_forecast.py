"""When the completion has the renderer forecast a job (pagefleet/completion.py, ``forecasts``):
with at most two chunks out, each at most a quarter of the pages. A job whose check at one
chunk out forecasts has then made its first forecast a landing earlier, so the check that the
last result's event may wait for only adds a chunk to it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from embedded.provision import create_stack
from pagefleet import completion, keys
from pagefleet.assembly import LandedChunk
from pagefleet.chunk_results import write_result
from pagefleet.completion import complete_job, forecasts
from pagefleet.models import ChunkSpec, JobManifest, Source
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from tests.chunk_results import done_result

SOURCE = Source(bucket="b", key="inbox/doc.pdf", etag="e", event_time="2026-12-01T10:00:00.000Z")


def _manifest(sizes: list[int], source: Source = SOURCE) -> JobManifest:
    chunks, first = [], 1
    for index, size in enumerate(sizes):
        chunks.append(ChunkSpec(index=index, first_page=first, last_page=first + size - 1))
        first += size
    return JobManifest(
        job_id=source.job_id,
        rel=source.key.removeprefix("inbox/").removesuffix(".pdf"),
        source=source,
        pages=first - 1,
        chunks=chunks,
        created_at=0,
        split_s=0,
    )


def _out(manifest: JobManifest, *indexes: int) -> list[ChunkSpec]:
    return [manifest.chunks[i] for i in indexes]


def test_the_400_page_manual_forecasts_from_two_chunks_out() -> None:
    # Its plan at W=2: six chunks, two of them a third of the pages (over a quarter together).
    manual = _manifest([67, 66, 67, 67, 66, 67])
    assert not forecasts(manual, _out(manual, 3, 4, 5))
    assert forecasts(manual, _out(manual, 4, 5))
    assert forecasts(manual, _out(manual, 2, 5))  # whichever two land last
    assert forecasts(manual, _out(manual, 5))


def test_a_chunk_out_over_a_quarter_of_the_pages_holds_the_forecast_back() -> None:
    # Two or three chunks: a forecast with half or a third of the pages out is mostly redone.
    for sizes in ([58, 59], [34, 33, 34]):
        job = _manifest(sizes)
        for last in range(len(sizes)):
            assert not forecasts(job, _out(job, last)), sizes
    uneven = _manifest([30, 30, 30, 5, 5])
    assert not forecasts(uneven, _out(uneven, 2, 4))
    assert forecasts(uneven, _out(uneven, 3, 4))
    many = _manifest([36, 35, 36, 35, 36, 36, 35, 36])
    assert not forecasts(many, _out(many, 5, 6, 7))
    assert forecasts(many, _out(many, 6, 7))


def test_checks_forecast_with_two_chunks_out_and_then_one(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = Bucket(create_stack(settings).s3, settings.bucket)
    source = SOURCE.model_copy(update={"bucket": bucket.name, "key": "inbox/manual.pdf"})
    manifest = _manifest([67, 66, 67, 67, 66, 67], source)
    job = manifest.job_id
    bucket.put(keys.manifest(job), manifest.model_dump_json().encode())
    in_hand: list[list[int]] = []

    def prepare(manifest: JobManifest, chunks: Sequence[LandedChunk]) -> None:
        in_hand.append(sorted(c.result.chunk.index for c in chunks))

    monkeypatch.setattr(completion, "prepare", prepare)
    outcomes = []
    for chunk in manifest.chunks:
        result = done_result(job, chunk)
        pages = b",".join(p.model_dump_json().encode() for p in result.pages)
        write_result(bucket, result, b"[" + pages + b"]")
        outcomes.append(complete_job(bucket, job))
    assert outcomes == ["waiting"] * 5 + ["published"]
    # Looks only at three out and more; the end renders what the forecasts left.
    assert in_hand == [[0, 1, 2, 3], [0, 1, 2, 3, 4]]
