"""S3 notifications as they reach the splitter (real payload shapes, tests/events/)."""

from __future__ import annotations

import json
from pathlib import Path

from pagefleet.events import sources_in_s3_event, sources_in_sqs_body

EVENTS = Path(__file__).parent / "events"


def test_an_upload_event_names_the_source_with_its_key_decoded_once() -> None:
    body = (EVENTS / "s3_put_via_sqs.json").read_text()
    [source] = sources_in_sqs_body(body)
    assert source.bucket == "docs-bucket"
    assert source.key == "inbox/annual reports/Q3 été + more.PDF"
    assert source.version_id == "3HL4kqtJlcpXroDTDmJ-rmSpXd3dIbrHY"
    assert source.sequencer == "0055AED6DCD90281E5"
    assert source.size == 1048576


def test_the_test_event_announces_nothing() -> None:
    assert list(sources_in_sqs_body((EVENTS / "s3_test_event.json").read_text())) == []


def test_moto_encodes_slashes_and_we_decode_them() -> None:
    payload = json.loads((EVENTS / "s3_put_via_sqs.json").read_text())
    payload["Records"][0]["s3"]["object"]["key"] = "inbox%2Fa%2Fb+c.pdf"
    del payload["Records"][0]["s3"]["object"]["sequencer"]  # moto sends none
    [source] = sources_in_s3_event(payload)
    assert source.key == "inbox/a/b c.pdf"
    assert source.sequencer is None


def test_job_identity_same_event_same_job_new_upload_new_job() -> None:
    body = (EVENTS / "s3_put_via_sqs.json").read_text()
    [first] = sources_in_sqs_body(body)
    [again] = sources_in_sqs_body(body)
    assert first.job_id == again.job_id
    newer = first.model_copy(update={"version_id": "other-version"})
    assert newer.job_id != first.job_id
    unversioned = first.model_copy(update={"version_id": None})
    reuploaded = unversioned.model_copy(
        update={"event_time": "2026-11-30T10:16:00.000Z", "sequencer": None}
    )
    assert unversioned.job_id != reuploaded.job_id  # same bytes, a new upload
