"""A chunk's images travel inside its result while its budget lasts (pagefleet/chunk_results.py,
INLINE_ASSETS), the rest as objects of their own under jobs/<id>/assets/; the outbox gets the
same objects either way, those the Markdown links to."""

from __future__ import annotations

from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.assembly import LandedChunk
from pagefleet.chunk_results import INLINE_CHUNK_BYTES, encode, inlined
from pagefleet.completion import complete_job
from pagefleet.models import ChunkResult, ChunkSpec, JobManifest, PageContent, Source
from pagefleet.settings import Settings
from pagefleet.storage import Bucket


def test_images_go_inside_the_result_smallest_first_while_the_chunk_s_budget_lasts() -> None:
    budget = INLINE_CHUNK_BYTES
    assert inlined({"whole.png": budget}) == {"whole.png"}
    assert inlined({"over.png": budget + 1}) == set()
    assert inlined({"a.png": 10, "whole.png": budget}) == {"a.png"}
    # Smallest first: two thirds of the budget is two images, where name order took one.
    third = budget // 3
    assert inlined({"a.png": 2 * third, "b.png": third, "c.png": third}) == {"b.png", "c.png"}
    many = {f"p{i:03d}.png": 64 * 1024 for i in range(40)}
    chosen = inlined(many)
    assert len(chosen) == budget // (64 * 1024)
    assert chosen == set(sorted(many)[: len(chosen)])  # by name among equals: the same every time
    assert inlined({}) == set()


LINK = keys.ASSET_LINK_PREFIX


def _result(job_id: str, assets: list[str]) -> ChunkResult:
    return ChunkResult(
        job_id=job_id,
        chunk=ChunkSpec(index=0, first_page=1, last_page=1),
        status="done",
        attempts=1,
        converter="text-layer",
        converter_version="1",
        assets=assets,
        pages=[PageContent(number=1, markdown=f"![]({LINK}small.png) ![]({LINK}large.png)")],
    )


def test_a_result_reads_back_with_the_images_it_carries() -> None:
    result = _result("j", ["large.png"])
    body = encode(result, b"[]", {"small.png": b"\x89PNG\x00\xff"})
    landed = LandedChunk.parse(body)
    assert landed.inline_assets == {"small.png": b"\x89PNG\x00\xff"}
    assert landed.result == result.model_copy(update={"pages": []})
    # Every other reader of results (pagefleet status, the bench's stages) validates the body.
    assert ChunkResult.model_validate_json(body).inline_assets == {"small.png": "iVBORwD/"}
    # Without images the body is what it always was: the result's own fields and its pages.
    assert b"inline_assets" not in encode(result)
    assert LandedChunk.parse(encode(result)).inline_assets == {}


def test_the_outbox_gets_inline_and_stored_images_alike_those_the_markdown_links(
    settings: Settings,
) -> None:
    bucket = Bucket(create_stack(settings).s3, settings.bucket)
    source = Source(
        bucket=bucket.name, key="inbox/pics.pdf", etag="e", event_time="2026-12-01T10:00:00.000Z"
    )
    job = source.job_id
    manifest = JobManifest(
        job_id=job,
        rel="pics",
        source=source,
        pages=1,
        chunks=[ChunkSpec(index=0, first_page=1, last_page=1)],
        created_at=0,
        split_s=0,
    )
    bucket.put(keys.manifest(job), manifest.model_dump_json().encode())
    large = bytes(range(256)) * 300
    bucket.put(keys.job_assets(job) + "large.png", large)
    # Pictures the converter wrote that the Markdown leaves out (furniture: a logo on every
    # page), one stored and one inline.
    bucket.put(keys.job_assets(job) + "banner.png", large)
    result = _result(job, ["large.png", "banner.png"])
    pages = b"[" + result.pages[0].model_dump_json(exclude_none=True).encode() + b"]"
    inline = {"small.png": b"small", "logo.png": b"logo"}
    bucket.put(keys.chunk_result(job, 0), encode(result, pages, inline))
    assert complete_job(bucket, job) == "published"
    folder = keys.outbox_assets("pics")
    assert sorted(bucket.list_keys(folder)) == [folder + "large.png", folder + "small.png"]
    assert bucket.get(folder + "small.png") == b"small"
    assert bucket.get(folder + "large.png") == large
    markdown = bucket.get(keys.outbox_markdown("pics")).decode()
    assert "pics.assets/small.png" in markdown and "pics.assets/large.png" in markdown
