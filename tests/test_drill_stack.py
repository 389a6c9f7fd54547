"""The embedded stack's own parts that the drills lean on: the janitor that deletes a finished
job's internals (every version, nothing under inbox/ or outbox/), and the log routing that keeps
a terminal quiet but never hides a warning or a crash."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from embedded.demo import report_pdf
from embedded.janitor import Janitor
from embedded.logs import LogRouter, is_loud
from embedded.pipeline import LocalPipeline
from embedded.provision import create_stack
from pagefleet import keys
from pagefleet.models import ChunkSpec, JobManifest, JobRecord, Source
from pagefleet.outbox import publish
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from tests.conftest import wait_for_record


def _versions(bucket: Bucket, prefix: str) -> list[dict[str, Any]]:
    listed = bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=prefix)
    return [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])]


def _job(bucket: Bucket, rel: str, event_time: str, chunks: int = 2) -> Source:
    """A job's internals as the splitter and runners leave them, a result written twice."""
    source = Source(bucket=bucket.name, key=f"inbox/{rel}.pdf", etag="e", event_time=event_time)
    manifest = JobManifest(
        job_id=source.job_id,
        rel=rel,
        source=source,
        pages=chunks,
        chunks=[ChunkSpec(index=i, first_page=i + 1, last_page=i + 1) for i in range(chunks)],
        created_at=0.0,
        split_s=0.0,
    )
    bucket.put(keys.manifest(source.job_id), manifest.model_dump_json().encode())
    for i in range(chunks):
        bucket.put(keys.chunk_pdf(source.job_id, i), b"%PDF-")
        bucket.put(keys.chunk_result(source.job_id, i), b"{}")
    bucket.put(keys.chunk_result(source.job_id, 0), b'{"again": 1}')  # a repeated message
    return source


def _record(source: Source) -> JobRecord:
    return JobRecord(status="done", job_id=source.job_id, source=source, pages=1)


def test_an_ended_job_loses_every_version_of_its_internals_and_nothing_else(
    settings: Settings,
) -> None:
    stack = create_stack(settings)
    bucket = Bucket(stack.s3, settings.bucket)
    bucket.put("inbox/kept.pdf", b"%PDF-")
    done = _job(bucket, "kept", "2026-01-01T00:00:00Z")
    running = _job(bucket, "running", "2026-01-01T00:00:00Z")
    publish(bucket, "kept", _record(done), "# kept")
    janitor = Janitor(stack.s3, settings.bucket, grace_s=0)

    assert janitor.sweep(running.job_id) == 0  # no record yet: it has not ended
    assert janitor.sweep(done.job_id) == 6  # manifest, 2 chunks, 2 results + an older version
    assert _versions(bucket, keys.job_prefix(done.job_id)) == []
    assert len(_versions(bucket, keys.job_prefix(running.job_id))) == 6
    assert bucket.get("inbox/kept.pdf") == b"%PDF-"
    assert bucket.get(keys.outbox_markdown("kept")) == b"# kept"
    assert janitor.sweep(done.job_id) == 0  # again: nothing left, nothing else touched


def test_a_superseded_job_ends_once_all_its_chunks_have_results(settings: Settings) -> None:
    stack = create_stack(settings)
    bucket = Bucket(stack.s3, settings.bucket)
    older = _job(bucket, "twice", "2026-01-01T00:00:00Z")
    newer = Source(
        bucket=bucket.name, key="inbox/twice.pdf", etag="f", event_time="2026-01-02T00:00:00Z"
    )
    publish(bucket, "twice", _record(newer), "# newer")
    janitor = Janitor(stack.s3, settings.bucket, grace_s=0)
    bucket.s3.delete_object(
        Bucket=bucket.name,
        Key=keys.chunk_result(older.job_id, 1),
        VersionId=bucket.s3.head_object(Bucket=bucket.name, Key=keys.chunk_result(older.job_id, 1))[
            "VersionId"
        ],
    )
    assert janitor.sweep(older.job_id) == 0  # a chunk still converting
    bucket.put(keys.chunk_result(older.job_id, 1), b"{}")
    assert janitor.sweep(older.job_id) > 0
    assert bucket.get(keys.outbox_markdown("twice")) == b"# newer"


def test_the_janitor_waits_out_a_backlog_but_not_for_ever(settings: Settings) -> None:
    stack = create_stack(settings)
    bucket = Bucket(stack.s3, settings.bucket)
    done = _job(bucket, "late", "2026-01-01T00:00:00Z")
    publish(bucket, "late", _record(done), "# late")
    backlog = True
    janitor = Janitor(stack.s3, settings.bucket, grace_s=0, busy=lambda: backlog, max_defer_s=60)
    janitor.start()
    try:
        janitor.touch(done.job_id)
        assert not janitor.idle(1.5)  # a backlog: the look waits
        assert janitor.stats.deferred >= 1 and janitor.stats.checked == 0
        backlog = False
        assert janitor.idle(10)
    finally:
        janitor.stop()
    assert janitor.stats.deleted_ids == [done.job_id]
    # However long the backlog lasts, a job waits at most max_defer_s.
    other = _job(bucket, "later", "2026-01-01T00:00:00Z")
    publish(bucket, "later", _record(other), "# later")
    janitor = Janitor(stack.s3, settings.bucket, grace_s=0, busy=lambda: True, max_defer_s=0.5)
    janitor.start()
    try:
        janitor.touch(other.job_id)
        assert janitor.idle(10)
    finally:
        janitor.stop()
    assert janitor.stats.deleted_ids == [other.job_id]


def test_a_starting_janitor_cleans_the_jobs_that_ended_while_none_watched(
    settings: Settings,
) -> None:
    """`pagefleet up` stopped (or killed) within the grace after its jobs ended: the next one's
    janitor finds them, though no completion of theirs will ever pass it again."""
    stack = create_stack(settings)
    bucket = Bucket(stack.s3, settings.bucket)
    ended = [_job(bucket, f"before/{n}", "2026-01-01T00:00:00Z") for n in range(3)]
    for n, source in enumerate(ended):
        publish(bucket, f"before/{n}", _record(source), "# before")
    running = _job(bucket, "still/running", "2026-01-01T00:00:00Z")
    janitor = Janitor(stack.s3, settings.bucket, grace_s=0)
    janitor.start()
    try:
        assert janitor.idle(30)
    finally:
        janitor.stop()
    assert sorted(janitor.stats.deleted_ids) == sorted(s.job_id for s in ended)
    assert janitor.stats.checked == 4 and janitor.stats.errors == 0
    assert [v["Key"] for v in _versions(bucket, keys.JOBS)] == [
        v["Key"] for v in _versions(bucket, keys.job_prefix(running.job_id))
    ]


def test_the_pipeline_cleans_each_finished_job(
    moto_server, settings: Settings, tmp_path: Path
) -> None:
    pdf = report_pdf(tmp_path / "a.pdf", sections=6, seed=3).read_bytes()
    with LocalPipeline(settings, workers=1, server=moto_server, keep_jobs_s=0.2) as local:
        assert local.stack is not None and local.janitor is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        for rel in ("one", "two"):
            bucket.put(f"inbox/{rel}.pdf", pdf)
        records = [wait_for_record(bucket, rel) for rel in ("one", "two")]
        assert local.janitor.idle(30)
        stats = local.janitor.stats
    assert all(r.status == "done" for r in records)
    assert _versions(bucket, keys.JOBS) == []
    assert {r.job_id for r in records} <= set(stats.deleted_ids)
    assert {k for k in bucket.list_keys("")} == {
        "inbox/one.pdf",
        "inbox/two.pdf",
        *(keys.outbox_markdown(rel) for rel in ("one", "two")),
        *(keys.outbox_record(rel) for rel in ("one", "two")),
    }


def test_a_quiet_terminal_shows_warnings_and_crashes_only(tmp_path: Path) -> None:
    emf = json.dumps({"_aws": {"CloudWatchMetrics": []}, "IngestMessages": [1.0] * 100})
    lines = {
        emf: False,
        '{"level":"INFO","message":"upload handled"}': False,
        '{"ts":1,"level":"warning","event":"worker_exited","exit_code":-9}': True,
        '{"level":"ERROR","message":"chunk recorded as failed"}': True,
        "2026-12-01 16:00:00,001 pagefleet.worker worker ready: converter text-layer": False,
        "2026-12-01 16:00:00,001 ERROR embedded.dispatch splitter failed": True,
        "Traceback (most recent call last):": True,
    }
    assert {line: is_loud(line) for line in lines} == lines
    terminal = io.StringIO()
    router = LogRouter(log_file=tmp_path / "all.log", terminal=terminal)
    for line in lines:
        router.line("runner", line)
    router.line("splitter[0]", emf)
    router.close()
    shown = terminal.getvalue()
    assert "exit_code=-9" in shown and "worker_exited" in shown and "Traceback" in shown
    assert "_aws" not in shown and "worker ready" not in shown
    # A traceback comes with the record before it, the one it belongs to.
    router = LogRouter(terminal=(terminal := io.StringIO()))
    for line in ("2026-12-01 16:00:00,001 pagefleet.worker could not release", "Traceback (x)"):
        router.line("runner", line)
    assert terminal.getvalue().splitlines() == [
        "[runner] 2026-12-01 16:00:00,001 pagefleet.worker could not release",
        "[runner] Traceback (x)",
    ]
    logged = (tmp_path / "all.log").read_text().splitlines()
    assert logged[: len(lines)] == list(lines)  # the runner's lines as they are
    assert logged[-1] == f"[splitter[0]] {emf}"
