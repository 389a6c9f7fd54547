"""The operator's verbs against the embedded stack: submit --wait, status of a running and a
finished job, redrive after a dead letter, get."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cli import main, parser
from cli.operate import document_rel, stack_settings
from embedded.demo import report_pdf
from embedded.pipeline import LocalPipeline
from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.models import JobManifest
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records, upload
from tests.conftest import wait_for_record

EVENTS = Path(__file__).parent / "events"


def _stack_args(settings: Settings) -> list[str]:
    assert settings.endpoint_url is not None
    return [
        "--endpoint-url",
        settings.endpoint_url,
        "--bucket",
        settings.bucket,
        "--queue-prefix",
        settings.queue_prefix,
    ]


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("submit")
    report_pdf(folder / "one.pdf", sections=6, seed=1)
    report_pdf(folder / "sub" / "two.pdf", sections=3, seed=2)
    (folder / "sub" / "bad.pdf").write_bytes(b"no pdf here")
    return folder


def test_submit_waits_for_every_record_and_get_downloads_one(
    pipeline: LocalPipeline, bucket: Bucket, pdfs: Path, tmp_path: Path, capsys
) -> None:
    args = _stack_args(pipeline.settings)
    code = main(["submit", str(pdfs), "--prefix", "batch", "--wait", *args])
    assert code == 1  # one input is not a PDF
    err = capsys.readouterr().err
    assert "3 PDFs uploaded" in err and "not_pdf" in err
    records = await_records(bucket, ["batch/one", "batch/sub/two", "batch/sub/bad"], timeout_s=0)
    assert [records[r].status for r in sorted(records)] == ["done", "failed", "done"]

    out = tmp_path / "got"
    assert main(["get", "outbox/batch/sub/two.md", "--out", str(out), *args]) == 0
    markdown = (out / "batch/sub/two.md").read_text()
    assert markdown == bucket.get(keys.outbox_markdown("batch/sub/two")).decode()
    assert json.loads((out / "batch/sub/two.json").read_text())["status"] == "done"
    assert main(["get", "batch/sub/bad", "--out", str(out), *args]) == 1  # failed: no Markdown
    assert not (out / "batch/sub/bad.md").exists()
    assert main(["get", "never/uploaded", "--out", str(out), *args]) == 1
    assert "has no record yet" in capsys.readouterr().err


def test_status_shows_a_running_job_then_the_finished_one(
    moto_server, settings: Settings, pdfs: Path, capsys
) -> None:
    # No runners at first: the job is split and waits in the chunks queue.
    with LocalPipeline(settings, server=moto_server, start_runners=False) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        upload(bucket, "running", (pdfs / "one.pdf").read_bytes())
        while not [k for k in bucket.list_keys(keys.JOBS) if k.endswith("/sent")]:
            time.sleep(0.05)  # S3 offers nothing to await: the splitter's marker ends the split
        args = _stack_args(local.settings)
        assert main(["status", "inbox/running.pdf", *args]) == 0
        running = capsys.readouterr().err
        assert "running: converting" in running and "pending" in running
        assert main(["status", *args]) == 0
        overview = capsys.readouterr().err
        [manifest_key] = [k for k in bucket.list_keys(keys.JOBS) if k.endswith("manifest.json")]
        chunks = len(JobManifest.model_validate_json(bucket.get(manifest_key)).chunks)
        assert f"0/{chunks}" in overview and "converting" in overview
        assert _queue_row(overview, "chunks")[:2] == [str(chunks), "0"]

        local.start_runners()
        wait_for_record(bucket, "running")
        assert main(["status", "running", *args]) == 0
        finished = capsys.readouterr().err
        assert "running: done" in finished and "pending" not in finished
        assert finished.count("done") == chunks + 1  # the title and every chunk
        assert main(["status", *args]) == 0
        assert "finished: 1 done, 0 partial, 0 failed" in capsys.readouterr().err


def _queue_row(table: str, role: str) -> list[str]:
    """The numbers of ``role``'s row in the queues table."""
    [line] = [line for line in table.splitlines() if line.startswith(f"│ {role} ")]
    return [cell.strip() for cell in line.split("│")[2:-1]]


def test_redrive_sends_a_dead_lettered_completion_back(
    pipeline: LocalPipeline, bucket: Bucket, pdfs: Path, capsys
) -> None:
    stack = pipeline.stack
    assert stack is not None
    upload(bucket, "redriven", (pdfs / "one.pdf").read_bytes())
    record = wait_for_record(bucket, "redriven")
    # The completion step failed on this job until a fix (its message reached the completion
    # DLQ): every chunk result is in, and the outbox has nothing.
    for key in bucket.list_keys(f"{keys.OUTBOX}redriven"):
        for version in bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=key)["Versions"]:
            bucket.s3.delete_object(Bucket=bucket.name, Key=key, VersionId=version["VersionId"])
    event = json.loads((EVENTS / "s3_put_via_sqs.json").read_text())
    event["Records"][0]["s3"]["bucket"]["name"] = bucket.name
    event["Records"][0]["s3"]["object"]["key"] = keys.chunk_result(record.job_id, 0)
    # The DLQ's own consumer, which would check the job once more, is down too: the operator
    # redrives once the fix is in.
    assert pipeline.dispatcher is not None
    pipeline.dispatcher.pause("completion-dead-letters")
    stack.sqs.send_message(QueueUrl=stack.dlq_urls["completion"], MessageBody=json.dumps(event))

    assert main(["redrive", "--queue", "completion", *_stack_args(pipeline.settings)]) == 0
    assert "completion: 1 dead-lettered messages sent back" in capsys.readouterr().err
    assert wait_for_record(bucket, "redriven", timeout_s=60).job_id == record.job_id
    assert bucket.head(keys.outbox_markdown("redriven")) is not None
    assert main(["redrive", *_stack_args(pipeline.settings)]) == 0
    assert "completion: 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("key", "rel"),
    [
        ("inbox/a/b c.PDF", "a/b c"),
        ("outbox/a/b.md", "a/b"),
        ("outbox/a/b.json", "a/b"),
        ("a/b.pdf", "a/b"),
        ("a/b", "a/b"),
    ],
)
def test_a_document_is_named_by_any_of_its_keys(key: str, rel: str) -> None:
    assert document_rel(key) == rel


def test_terraform_outputs_name_the_stack(tmp_path: Path) -> None:
    outputs = {
        "bucket_name": {"value": "acme-docs"},
        "queue_prefix": {"value": "acme"},
        "region": {"value": "eu-west-1"},
    }
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    settings = stack_settings(parser().parse_args(["status", "--stack", str(path)]))
    assert (settings.bucket, settings.queue_prefix, settings.region) == (
        "acme-docs",
        "acme",
        "eu-west-1",
    )


def test_get_never_writes_outside_its_folder(
    pipeline: LocalPipeline, bucket: Bucket, tmp_path: Path, capsys
) -> None:
    key = "inbox/d/x/../../../escaped.pdf"
    bucket.put(key, b"%PDF-1.4 refused for its name")
    record = wait_for_record(bucket, keys.rel_of(key))
    assert record.error is not None and record.error.code == "bad_key"
    out = tmp_path / "a" / "b"
    assert main(["get", key, "--out", str(out), *_stack_args(pipeline.settings)]) == 1
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == [out / keys.outbox_record(keys.rel_of(key))[len(keys.OUTBOX) :]]
    assert json.loads(written[0].read_text())["source"]["key"] == key
    # A user's object among a document's assets whose name climbs out of the folder.
    upload(bucket, "e/bad", b"not a pdf")
    wait_for_record(bucket, "e/bad")
    bucket.put(keys.outbox_assets("e/bad") + "../../../../../evil", b"evil")
    assert main(["get", "e/bad", "--out", str(out), *_stack_args(pipeline.settings)]) == 1
    assert "outside" in capsys.readouterr().err
    assert all(p.is_relative_to(out) for p in tmp_path.rglob("*") if p.is_file())


def test_status_leaves_out_what_users_wrote_in_the_bucket(settings: Settings, capsys) -> None:
    stack = create_stack(settings)
    bucket = Bucket(stack.s3, settings.bucket)
    bucket.put("outbox/notes.json", b'{"mine": true}')
    bucket.put("outbox/x/a.json", b"not json at all")
    bucket.put(keys.manifest("garbage"), b"{}")
    assert main(["status", *_stack_args(settings)]) == 0
    assert "finished: 0 done, 0 partial, 0 failed" in capsys.readouterr().err
    assert main(["status", "outbox/x/a.json", *_stack_args(settings)]) == 1
