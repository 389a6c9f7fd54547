"""The real corpus through the whole pipeline: the 400-page manual in 25 chunks, and rule 5
(chunked Markdown == the whole document converted in one process) on every real PDF."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from pagefleet import keys
from pagefleet.local.pipeline import LocalPipeline
from pagefleet.models import JobRecord
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import upload
from runner.converters.text_layer import convert_document
from tests.conftest import corpus_dir, wait_for_record

MANUAL = "unstructured__irs-irm-400p"


@pytest.fixture(scope="module")
def converted(moto_server) -> Iterator[tuple[Bucket, dict[str, JobRecord], list[Path]]]:
    """Every real corpus PDF through one pipeline, 16 pages a chunk."""
    pdfs = sorted(corpus_dir("real").glob("*.pdf"))
    settings = Settings(
        endpoint_url=moto_server.url,
        bucket="corpus",
        queue_prefix="corpus",
        chunk_pages=16,
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
    assert len(record.chunks) == 25
    assert [(c.first_page, c.last_page) for c in record.chunks] == [
        (1 + 16 * i, 16 * (i + 1)) for i in range(25)
    ]
    assert all(c.status == "done" for c in record.chunks)
    assert bucket.head(keys.outbox_markdown(f"real/{MANUAL}")) is not None


def test_rule_5_on_every_real_pdf(converted) -> None:
    bucket, records, pdfs = converted
    assert {r.status for r in records.values()} == {"done"}
    with ProcessPoolExecutor(2) as pool:  # the plain one-process invocation, per document
        wholes = dict(zip(pdfs, pool.map(convert_document, pdfs), strict=True))
    for pdf, whole in wholes.items():
        chunked = bucket.get(keys.outbox_markdown(f"real/{pdf.stem}")).decode()
        assert chunked == whole, f"{pdf.name}: chunked output differs from the whole document"
