"""`pagefleet run` end to end, as `make run` calls it (a subprocess, its own moto server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pagefleet.local.demo import report_pdf


def test_run_converts_a_folder_and_mirrors_its_layout(tmp_path: Path) -> None:
    inbox = tmp_path / "in"
    report_pdf(inbox / "one.pdf", sections=12, seed=1)
    report_pdf(inbox / "nested" / "two words.PDF", sections=3, seed=2)
    (inbox / "nested" / "broken.pdf").write_bytes(b"not a pdf at all")
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pagefleet.cli",
            "run",
            str(inbox),
            "--out",
            str(out),
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr  # one document failed
    assert "broken" in done.stderr and "not_pdf" in done.stderr
    for rel in ("one", "nested/two words"):
        record = json.loads((out / f"{rel}.json").read_text())
        assert record["status"] == "done"
        assert (out / f"{rel}.md").read_text().strip()
    assert json.loads((out / "nested/broken.json").read_text())["error"]["code"] == "not_pdf"
    assert not (out / "nested/broken.md").exists()


def test_run_without_input_converts_the_demo_set(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pagefleet.cli", "run", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(p.read_text()) for p in tmp_path.rglob("*.json")]
    assert len(records) == 3 and {r["status"] for r in records} == {"done"}


def test_up_keeps_a_stack_running_for_the_aws_tools(tmp_path: Path) -> None:
    import re
    import signal

    import boto3

    from pagefleet.local.server import FAKE_CREDENTIALS

    proc = subprocess.Popen(
        [sys.executable, "-m", "pagefleet.cli", "up", "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        match = re.search(r"endpoint (\S+), bucket (\S+)", banner)
        assert match, banner
        url, bucket = match.groups()
        s3 = boto3.client(
            "s3",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
        s3.upload_file(str(report_pdf(tmp_path / "a.pdf", sections=3)), bucket, "inbox/a.pdf")
        waiter = s3.get_waiter("object_exists")
        waiter.wait(
            Bucket=bucket, Key="outbox/a.json", WaiterConfig={"Delay": 0.2, "MaxAttempts": 300}
        )
        record = json.loads(s3.get_object(Bucket=bucket, Key="outbox/a.json")["Body"].read())
        assert record["status"] == "done"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
