"""The operator's verbs against the embedded stack: submit --wait, status of a running and a
finished job, redrive after a dead letter, get."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from cli import main, parser
from cli.operate import document_rel, stack_settings
from embedded.demo import report_pdf
from embedded.pipeline import LocalPipeline
from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.models import JobManifest, JobRecord
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import Progress, Submission, await_records, count_pages, upload
from tests.conftest import wait_for_record

EVENTS = Path(__file__).parent / "events"


# `python -m cli`, answering Ctrl-C as in a terminal. A process that starts with SIGINT ignored
# (every child of a background job in a shell without job control: `cmd &` in a script) keeps it
# ignored, and Python then installs no KeyboardInterrupt for it, so the test's SIGINT would be
# lost wherever the suite itself runs in the background.
_CLI_WITH_CTRL_C = [
    sys.executable,
    "-c",
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('cli', run_name='__main__', alter_sys=True)",
]


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
    shown = capsys.readouterr()
    assert "3 PDFs uploaded" in shown.err and "not_pdf" in shown.out
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
    assert "no document never/uploaded" in capsys.readouterr().err


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
        assert main(["status", "inbox/running.pdf", *args]) == 4  # not yet
        running = capsys.readouterr().out
        assert "running: converting" in running and "pending" in running
        assert main(["status", *args]) == 0
        overview = capsys.readouterr().out
        [manifest_key] = [k for k in bucket.list_keys(keys.JOBS) if k.endswith("manifest.json")]
        chunks = len(JobManifest.model_validate_json(bucket.get(manifest_key)).chunks)
        assert f"0/{chunks}" in overview and "converting" in overview
        assert _queue_row(overview, "chunks")[:2] == [str(chunks), "0"]

        local.start_runners()
        wait_for_record(bucket, "running")
        assert main(["status", "running", *args]) == 0
        finished = capsys.readouterr().out
        assert "running: done" in finished and "pending" not in finished
        assert finished.count("done") == chunks + 1  # the title and every chunk
        assert main(["status", *args]) == 0
        assert "finished: 1 done, 0 partial, 0 failed" in capsys.readouterr().out


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
    assert "completion: 1 dead-lettered messages sent back" in capsys.readouterr().out
    assert wait_for_record(bucket, "redriven", timeout_s=60).job_id == record.job_id
    assert bucket.head(keys.outbox_markdown("redriven")) is not None
    assert main(["redrive", *_stack_args(pipeline.settings)]) == 0
    assert "completion: 0" in capsys.readouterr().out


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
    assert "finished: 0 done, 0 partial, 0 failed" in capsys.readouterr().out
    assert main(["status", "outbox/x/a.json", *_stack_args(settings)]) == 1


def _one_line(err: str) -> str:
    """The one line an operator error is: the cause and the fix, no traceback."""
    assert err.count("\n") == 1 and err.startswith("pagefleet: "), err
    return err


def test_an_operator_error_is_one_line_with_its_exit_code(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    create_stack(settings)
    args = _stack_args(settings)
    (tmp_path / "empty.json").write_text("{}")
    pdf = report_pdf(tmp_path / "f.pdf", sections=1)
    refused = {
        # A bucket that is not there, an endpoint nothing answers on: the stack is unreachable.
        ("submit", str(pdf), *args, "--bucket", "wrongbucket"): (3, "wrongbucket does not exist"),
        ("status", "--endpoint-url", "http://127.0.0.1:9"): (3, "cannot reach"),
        ("status", "--stack", str(tmp_path / "empty.json")): (2, "has no 'bucket_name'"),
        ("status", "--stack", str(tmp_path / "nosuch.json")): (2, "cannot read --stack"),
        ("submit", str(tmp_path / "nosuch.pdf"), *args): (2, "no such file"),
    }
    for argv, (code, says) in refused.items():
        assert main(list(argv)) == code, argv
        assert says in _one_line(capsys.readouterr().err)
    # No credentials anywhere, and no endpoint of our own: AWS is asked, and refuses to sign.
    for name in list(os.environ):
        if name.startswith(("AWS_", "PAGEFLEET_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    assert main(["status", "--bucket", "b", "--region", "eu-west-1"]) == 3
    assert "no AWS credentials" in _one_line(capsys.readouterr().err)
    # Nothing says which stack: the embedded stack's bucket name is not one to try on AWS.
    assert main(["status", "--region", "eu-west-1"]) == 2
    assert "which stack?" in _one_line(capsys.readouterr().err)
    # --debug: the traceback, for a bug report.
    with pytest.raises(SystemExit):
        main(["status", "--debug", "--nosuch"])
    assert main(["status", "--debug", "--endpoint-url", "http://127.0.0.1:9"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_waiting_stops_with_exit_4_and_ctrl_c_says_the_jobs_go_on(
    settings: Settings, tmp_path: Path, capsys
) -> None:
    create_stack(settings)  # no handlers: the uploads wait in the ingest queue, unsplit
    args = _stack_args(settings)
    pdf = report_pdf(tmp_path / "slow.pdf", sections=1)
    assert main(["submit", str(pdf), "--prefix", "q", "--wait", "--timeout", "0", *args]) == 4
    assert "still converting" in _one_line(capsys.readouterr().err.splitlines()[-1] + "\n")
    assert main(["get", "q/slow", *args]) == 4
    assert "q/slow is still converting: `pagefleet wait q/slow`" in capsys.readouterr().err
    waiting = subprocess.Popen(
        [*_CLI_WITH_CTRL_C, "wait", "q", *args],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiting.stderr is not None
    assert "awaiting 1 documents" in waiting.stderr.readline()
    waiting.send_signal(signal.SIGINT)
    assert waiting.wait(60) == 130
    said = waiting.stderr.read()
    assert "go on converting; `pagefleet wait q` follows them" in said, said


def test_results_are_on_stdout_and_json_lines_for_scripts(
    pipeline: LocalPipeline, bucket: Bucket, pdfs: Path, tmp_path: Path, capsys
) -> None:
    args = _stack_args(pipeline.settings)
    assert main(["submit", str(pdfs / "one.pdf"), "--prefix", "js", "--json", *args]) == 0
    shown = capsys.readouterr()
    assert [json.loads(line) for line in shown.out.splitlines()] == [
        {"document": "js/one", "key": "inbox/js/one.pdf"}
    ]
    assert main(["wait", "js", "--json", *args]) == 0
    [line] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (line["document"], line["status"], line["record"]) == (
        "js/one",
        "done",
        "outbox/js/one.json",
    )
    assert line["markdown"] == "outbox/js/one.md" and line["pages"] == count_pages(pdfs / "one.pdf")

    assert main(["status", "--json", *args]) == 0
    overview = json.loads(capsys.readouterr().out)
    assert set(overview["queues"]) == {"ingest", "chunks", "completion"}
    assert "js/one" in [r["document"] for r in overview["latest"]]
    assert main(["status", "js/one", "--json", *args]) == 0
    job = json.loads(capsys.readouterr().out)
    assert job["status"] == "done" and {c["status"] for c in job["chunks"]} == {"done"}

    assert main(["get", "js/one", "--json", "--out", str(tmp_path), *args]) == 0
    got = json.loads(capsys.readouterr().out)
    assert Path(got["path"]) == tmp_path / "js" / "one.json"
    # A table is for reading, and lands where `>` sends it; progress and messages do not.
    assert main(["status", *args]) == 0
    shown = capsys.readouterr()
    assert "queues" in shown.out and "finished:" in shown.out and shown.err == ""


def test_version_is_the_installed_one(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"pagefleet {metadata.version('pagefleet')}\n"


def test_every_upload_to_the_inbox_is_answered(
    pipeline: LocalPipeline, bucket: Bucket, pdfs: Path, tmp_path: Path, capsys
) -> None:
    args = _stack_args(pipeline.settings)
    note = tmp_path / "note.txt"
    note.write_text("not a PDF")
    assert main(["submit", str(note), *args]) == 2
    assert "not named .pdf" in _one_line(capsys.readouterr().err)
    assert bucket.list_keys(keys.inbox_key("note.txt", "")) == []  # refused before any upload
    # Whatever lands in the inbox another way gets a record: a PDF without its suffix, and the
    # key `aws s3 cp x.pdf s3://BUCKET/inbox` writes.
    data = (pdfs / "one.pdf").read_bytes()
    for key in ("inbox/strays/report", "inbox"):
        bucket.put(key, data)
    for key in ("inbox/strays/report", "inbox"):
        record = _await_record(bucket, keys.stray_record(key))
        assert record.error is not None and record.error.code == "not_pdf"
        assert record.source.key == key
    assert main(["status", "inbox/strays/report", *args]) == 1
    assert "not named .pdf" in capsys.readouterr().out
    assert main(["status", "inbox", *args]) == 1
    assert "s3://BUCKET/inbox/` (with the slash)" in capsys.readouterr().out
    # --as-pdf: the user says it is one; it converts under <name>.pdf.
    named = tmp_path / "report"
    named.write_bytes(data)
    assert main(["submit", str(named), "--as-pdf", "--wait", *args]) == 0
    assert bucket.head(keys.outbox_markdown("report")) is not None


def _await_record(bucket: Bucket, record_key: str, timeout_s: float = 60) -> JobRecord:
    deadline = time.monotonic() + timeout_s
    while bucket.head(record_key) is None:
        assert time.monotonic() < deadline, record_key
        time.sleep(0.1)  # S3 offers nothing to await
    return JobRecord.model_validate_json(bucket.get(record_key))


def test_get_a_folder_and_reconvert_a_document(
    pipeline: LocalPipeline, bucket: Bucket, pdfs: Path, tmp_path: Path, capsys
) -> None:
    args = _stack_args(pipeline.settings)
    assert main(["submit", str(pdfs / "sub"), "--prefix", "q3", "--wait", *args]) == 1
    capsys.readouterr()
    out = tmp_path / "got"
    # A folder: every finished document under it, at its relative name below --out.
    assert main(["get", "q3", "--out", str(out), *args]) == 1  # bad.pdf failed
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json")) == [
        "q3/bad.json",
        "q3/two.json",
    ]
    assert (out / "q3/two.md").read_text() == bucket.get(keys.outbox_markdown("q3/two")).decode()
    assert main(["get", "q4", *args]) == 1
    assert "no document q4" in capsys.readouterr().err

    first = await_records(bucket, ["q3/two"], timeout_s=0)["q3/two"]
    assert main(["reconvert", "q3/two", "--wait", "--json", *args]) == 0
    [line] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    again = await_records(bucket, ["q3/two"], timeout_s=0)["q3/two"]
    assert line["job_id"] == again.job_id != first.job_id
    assert again.status == "done" and again.source.key == first.source.key


def test_run_counts_every_page_after_the_janitor_deletes_the_chunk_results(
    pipeline: LocalPipeline, bucket: Bucket, pdfs: Path
) -> None:
    submission = Submission.upload(bucket, pdfs / "one.pdf", prefix="counted/")
    progress = Progress(documents=1)
    submission.wait(progress, lambda: None, interval_s=0.05)
    record = submission.records["counted/one"]
    for key in bucket.list_keys(keys.job_prefix(record.job_id)):
        bucket.delete(key)  # what the janitor does --keep-jobs seconds after the job ended
    assert submission._pages_converted() == record.pages == count_pages(pdfs / "one.pdf")


def test_status_watch_looks_again_until_ctrl_c(settings: Settings) -> None:
    create_stack(settings)
    watching = subprocess.Popen(
        [*_CLI_WITH_CTRL_C, "status", "--watch", "0.1", *_stack_args(settings)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watching.stdout is not None
    assert "queues" in watching.stdout.readline()  # the first look is drawn at once
    watching.send_signal(signal.SIGINT)
    _, err = watching.communicate(timeout=60)
    assert watching.returncode == 130 and err == "pagefleet: interrupted\n"


def test_run_on_a_folder_without_pdfs_is_refused_before_any_stack_starts(
    tmp_path: Path, capsys
) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "notes.txt").write_text("no PDF here")
    assert main(["run", str(tmp_path / "in"), "--out", str(tmp_path / "out")]) == 2
    assert "no PDFs under" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()  # refused before anything was made
