"""The real corpus through the whole pipeline, planned by cost: the 400-page manual in balanced
chunks, the scans in chunks of their own, and rule 5 (chunked Markdown == the whole document
converted in one process) on every real PDF with those plans."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import pytest

from bench.pipeline.standalone import xargs_ocr_threads
from embedded.pipeline import LocalPipeline
from pagefleet import keys
from pagefleet.models import JobRecord
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import upload
from runner.converters.text_layer import convert_document
from tests.conftest import corpus_dir, wait_for_record

MANUAL = "unstructured__irs-irm-400p"
SCAN = "pdfminer__175-scanned-service-bulletin"


@pytest.fixture(scope="module")
def converted(moto_server) -> Iterator[tuple[Bucket, dict[str, JobRecord], list[Path]]]:
    """Every real corpus PDF through one pipeline, planned by cost for 2 lanes."""
    pdfs = sorted(corpus_dir("real").glob("*.pdf"))
    settings = Settings(
        endpoint_url=moto_server.url,
        bucket="corpus",
        queue_prefix="corpus",
        chunk_pages=16,
        fleet_lanes=2,
        poll_wait_s=1,
    )
    with LocalPipeline(settings, workers=2, server=moto_server) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        for pdf in pdfs:
            upload(bucket, f"real/{pdf.stem}", pdf.read_bytes())
        records = {pdf.stem: wait_for_record(bucket, f"real/{pdf.stem}", 600) for pdf in pdfs}
        yield bucket, records, pdfs


def test_the_400_page_manual_comes_back_in_page_order(converted) -> None:
    bucket, records, _ = converted
    record = records[MANUAL]
    assert record.status == "done" and record.pages == 400
    assert record.plan is not None and record.plan.ocr_pages == []
    # 400 text pages of ~780 characters: 3.1 s, 6.2 chunks of the 0.5 s minimum, 6 for 2 lanes.
    assert record.plan.estimated_s == pytest.approx(3.1, abs=0.1)
    assert len(record.chunks) == 6
    pages = [p for c in record.chunks for p in range(c.first_page, c.last_page + 1)]
    assert pages == list(range(1, 401))
    assert (
        max(c.last_page - c.first_page for c in record.chunks)
        - min(c.last_page - c.first_page for c in record.chunks)
        <= 1
    )
    assert all(c.status == "done" and c.estimated_s for c in record.chunks)
    assert bucket.head(keys.outbox_markdown(f"real/{MANUAL}")) is not None


def test_a_scan_is_cut_into_chunks_of_its_own_pages(converted) -> None:
    _, records, _ = converted
    record = records[SCAN]
    assert record.plan is not None and record.plan.ocr_pages == [1, 2]
    assert [(c.first_page, c.last_page) for c in record.chunks] == [(1, 1), (2, 2)]
    assert record.ocr_pages == [1, 2]


def test_rule_5_on_every_real_pdf(converted) -> None:
    bucket, records, pdfs = converted
    assert {r.status for r in records.values()} == {"done"}
    # The plain one-process invocation, per document, two at a time; each gets its share of
    # the cores for OCR, as the supervisor's workers do (all cores each, their threads fight:
    # 38 CPU s instead of 27 here).
    convert = partial(convert_document, ocr_threads=xargs_ocr_threads(2))
    with ProcessPoolExecutor(2) as pool:
        wholes = dict(zip(pdfs, pool.map(convert, pdfs), strict=True))
    for pdf, whole in wholes.items():
        chunked = bucket.get(keys.outbox_markdown(f"real/{pdf.stem}")).decode()
        # Publishing points the pictures' links into the document's assets folder.
        placed = whole.replace(
            keys.ASSET_LINK_PREFIX, keys.asset_dir_name(f"real/{pdf.stem}") + "/"
        )
        assert chunked == placed, f"{pdf.name}: chunked output differs from the whole document"


def test_the_assets_folder_holds_what_the_markdown_links_to(converted) -> None:
    """No link without its image, no image without a link: the converter writes every picture
    of a page, and the renderer leaves furniture out (the slides' logo, on 30 of 31 pages)."""
    bucket, records, _ = converted
    published = 0
    for stem in records:
        rel = f"real/{stem}"
        folder = keys.outbox_assets(rel)
        markdown = bucket.get(keys.outbox_markdown(rel)).decode()
        linked = set(
            re.findall(re.escape(f"]({keys.asset_dir_name(rel)}/") + r"([^)]+)\)", markdown)
        )
        stored = {key.removeprefix(folder) for key in bucket.list_keys(folder)}
        assert stored == linked, f"{stem}: images without links or links without images"
        published += len(stored)
    assert published > 200  # the corpus's pictures are there
