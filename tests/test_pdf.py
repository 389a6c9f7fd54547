"""Validation and cutting with pypdfium2, on generated PDFs and the hostile corpus."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from embedded.demo import report_pdf
from pagefleet.errors import PagefleetError
from pagefleet.pdf import cut_chunks, open_pdf
from pagefleet.planning import PlanPolicy, plan_by_cost
from tests.conftest import corpus_dir

LIMITS = {"max_bytes": 50_000_000, "max_pages": 5000}


def test_chunks_hold_exactly_their_pages(tmp_path) -> None:
    doc = open_pdf(report_pdf(tmp_path / "r.pdf", sections=20).read_bytes(), **LIMITS)
    plan = plan_by_cost([1.0] * len(doc), PlanPolicy(target_s=3.0, min_s=0.0, max_s=1e9))
    texts = [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    seen = []
    for chunk, data in cut_chunks(doc, plan):
        part = pdfium.PdfDocument(data)
        assert len(part) == chunk.pages
        seen += [part[i].get_textpage().get_text_range() for i in range(len(part))]
    assert seen == texts


@pytest.mark.parametrize(
    ("data", "code"),
    [(b"", "empty"), (b"hello, not a pdf" * 10, "not_pdf"), (b"%PDF-1.7\n%%EOF", "malformed")],
)
def test_bad_bytes_get_stable_codes(data: bytes, code: str) -> None:
    with pytest.raises(PagefleetError) as caught:
        open_pdf(data, **LIMITS)
    assert caught.value.code == code and caught.value.message


def test_limits(tmp_path) -> None:
    data = report_pdf(tmp_path / "r.pdf", sections=20).read_bytes()
    with pytest.raises(PagefleetError) as caught:
        open_pdf(data, max_bytes=len(data) - 1, max_pages=5000)
    assert caught.value.code == "too_large"
    with pytest.raises(PagefleetError) as caught:
        open_pdf(data, max_bytes=len(data), max_pages=2)
    assert caught.value.code == "too_many_pages"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("empty-0-bytes", "empty"),
        ("not-a-pdf-text", "not_pdf"),
        ("zero-pages", "no_pages"),
        ("encrypted-aes128-open-password", "encrypted"),
        ("truncated-mid-object", "malformed"),
    ],
)
def test_hostile_corpus_codes(name: str, code: str) -> None:
    data = (corpus_dir("bad") / f"{name}.pdf").read_bytes()
    with pytest.raises(PagefleetError) as caught:
        open_pdf(data, **LIMITS)
    assert caught.value.code == code
