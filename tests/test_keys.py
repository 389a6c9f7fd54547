from __future__ import annotations

import pytest

from pagefleet import keys


@pytest.mark.parametrize(
    ("key", "rel"),
    [("inbox/a.pdf", "a"), ("inbox/x/y z/Ünï+.PDF", "x/y z/Ünï+"), ("inbox/b.Pdf", "b")],
)
def test_inbox_keys_map_to_outbox_paths(key: str, rel: str) -> None:
    assert keys.is_inbox_pdf(key)
    assert keys.rel_of(key) == rel
    assert keys.outbox_markdown(rel) == f"outbox/{rel}.md"
    assert keys.outbox_record(rel) == f"outbox/{rel}.json"


@pytest.mark.parametrize("key", ["inbox/a.txt", "outbox/a.pdf", "inbox/.pdf", "jobs/x/a.pdf"])
def test_other_keys_are_not_inputs(key: str) -> None:
    assert not keys.is_inbox_pdf(key)


def test_result_keys_parse_back_and_nothing_else_does() -> None:
    key = keys.chunk_result("abc", 7)
    assert keys.job_of_result(key) == ("abc", 7)
    assert keys.job_of_result(keys.manifest("abc")) is None
    assert keys.job_of_result("jobs/abc/results/x.result.json") is None


def test_every_letter_case_of_pdf_has_a_notification_suffix() -> None:
    assert len(set(keys.PDF_SUFFIXES)) == 8
    assert {s.lower() for s in keys.PDF_SUFFIXES} == {".pdf"}


def test_result_keys_take_ascii_digits_and_a_job_id_only() -> None:
    # str.isdigit() takes "²³", which int() refuses: a user's key must not raise.
    assert keys.job_of_result("jobs/x/results/²³.result.json") is None
    assert keys.job_of_result("jobs/x/results/٣.result.json") is None
    assert keys.job_of_result("jobs//results/00001.result.json") is None
