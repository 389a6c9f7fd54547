"""Job-end events (issue 27): the completion that writes a job's record puts one event on the
bus and POSTs it to the webhook; a twin or a repeat puts none; a bus that fails the entry is
tried again, one that refuses it fails no job. Against the moto server over HTTP: EventBridge
rules there deliver to an SQS queue, read back as a subscriber would."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import boto3
import pytest
from pydantic import ValidationError
from tenacity import wait_none

from embedded import MotoServer
from embedded.server import BackgroundServer
from handlers import clients, completion, splitter
from pagefleet import aws, keys
from pagefleet.chunk_results import write_result
from pagefleet.completion import complete_job
from pagefleet.job_events import JobEvent, JobEvents, post_event, put_event
from pagefleet.models import ChunkResult, ChunkSpec, JobManifest, JobRecord, PageContent, Source
from pagefleet.outbox import publish
from pagefleet.queues import queue_name
from pagefleet.settings import Settings, SettingsRefused, load_settings, settings_env
from pagefleet.storage import Bucket
from tests.fault_proxy import LoopbackProxy, ProxyHandler
from tests.lambda_events import Context, object_event, sqs_event


@pytest.fixture
def bucket(settings: Settings) -> Bucket:
    s3 = aws.client("s3", settings)
    s3.create_bucket(Bucket=settings.bucket)
    return Bucket(s3, settings.bucket)


@dataclass
class Bus:
    """A bus with a rule that sends pagefleet's events to a queue, as a user subscribes."""

    name: str
    sqs: Any
    queue_url: str

    def delivered(self) -> list[dict[str, Any]]:
        """The events delivered since the last look. moto delivers a rule's targets inside
        PutEvents, so what was put is on the queue when the call returns: no wait needed."""
        found = []
        while messages := self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", []):
            for message in messages:
                found.append(json.loads(message["Body"]))
                self.sqs.delete_message(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
        return found


@pytest.fixture
def bus(settings: Settings) -> Bus:
    events = boto3.client("events", region_name=settings.region, endpoint_url=settings.endpoint_url)
    sqs = aws.client("sqs", settings)
    name = f"{settings.queue_prefix}-jobs"
    events.create_event_bus(Name=name)
    queue_url = sqs.create_queue(QueueName=f"{settings.queue_prefix}-job-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
    events.put_rule(
        Name="jobs-finished",
        EventBusName=name,
        EventPattern=json.dumps({"source": ["pagefleet"], "detail-type": ["Job finished"]}),
    )
    events.put_targets(
        Rule="jobs-finished",
        EventBusName=name,
        Targets=[{"Id": "queue", "Arn": arn["Attributes"]["QueueArn"]}],
    )
    return Bus(name, sqs, queue_url)


def _finished_job(bucket: Bucket, rel: str, pages: int = 2) -> str:
    """A job whose every chunk has its result, its record not yet written: what the completion
    of its last chunk finds."""
    source = Source(
        bucket=bucket.name, key=f"inbox/{rel}.pdf", etag="e", event_time="2026-12-01T10:00:00Z"
    )
    chunk = ChunkSpec(index=0, first_page=1, last_page=pages)
    manifest = JobManifest(
        job_id=source.job_id,
        rel=rel,
        source=source,
        pages=pages,
        chunks=[chunk],
        created_at=0,
        split_s=0,
    )
    bucket.put(keys.manifest(source.job_id), manifest.model_dump_json().encode())
    result = ChunkResult(
        job_id=source.job_id,
        chunk=chunk,
        status="done",
        attempts=1,
        converter="test",
        converter_version="1",
        pages=[PageContent(number=n, markdown=f"Page {n}.") for n in range(1, pages + 1)],
    )
    pages_json = b"[" + b",".join(p.model_dump_json().encode() for p in result.pages) + b"]"
    write_result(bucket, result, pages_json)
    return source.job_id


def _as_an_announcing_function(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, **update: object
) -> None:
    """The environment Terraform gives the functions that end jobs, with ``update``'s settings."""
    for name, value in settings_env(settings.model_copy(update=update)).items():
        monkeypatch.setenv(name, value)


def _metrics(printed: str) -> dict[str, float]:
    """The metrics powertools flushed (EMF lines on stdout), summed by name."""
    found: dict[str, float] = {}
    for line in printed.splitlines():
        if line.startswith('{"_aws"'):
            emf = json.loads(line)
            for metric in emf["_aws"]["CloudWatchMetrics"][0]["Metrics"]:
                values = emf[metric["Name"]]
                found[metric["Name"]] = found.get(metric["Name"], 0) + sum(
                    values if isinstance(values, list) else [values]
                )
    return found


def test_the_completion_that_publishes_a_job_puts_one_event_and_a_repeat_none(
    settings: Settings,
    bucket: Bucket,
    bus: Bus,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    job = _finished_job(bucket, "q3/annual report")
    _as_an_announcing_function(monkeypatch, settings, event_bus=bus.name)
    message = sqs_event({"m": object_event(keys.chunk_result(job, 0), bucket.name)})
    caplog.set_level(logging.INFO)
    assert completion.lambda_handler(message, Context()) == {"batchItemFailures": []}
    record = JobRecord.model_validate_json(bucket.get(keys.outbox_record("q3/annual report")))
    [event] = bus.delivered()
    assert (event["source"], event["detail-type"]) == ("pagefleet", "Job finished")
    assert event["detail"] == {
        "bucket": bucket.name,
        "key": "inbox/q3/annual report.pdf",
        "record": "outbox/q3/annual report.json",
        "markdown": "outbox/q3/annual report.md",
        "status": "done",
        "pages": 2,
        "job_id": job,
        "error": None,
        "finished_at": record.finished_at,
    }
    # Locally, without a bus: the same detail in the function's log.
    [logged] = [r for r in caplog.records if r.getMessage() == "job finished"]
    assert logged.job_event == event["detail"]
    # The message again (SQS delivers at least once): the job has ended, nothing is put.
    assert completion.lambda_handler(message, Context()) == {"batchItemFailures": []}
    assert bus.delivered() == []


def test_a_job_the_splitter_ends_is_announced_once(
    settings: Settings,
    bucket: Bucket,
    bus: Bus,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    aws.client("sqs", settings).create_queue(QueueName=queue_name(settings.queue_prefix, "chunks"))
    bucket.put("inbox/broken.pdf", b"not a pdf at all")  # not the version the event names
    bucket.put("inbox/notes/readme.txt", b"a stray: not named .pdf")
    _as_an_announcing_function(monkeypatch, settings, event_bus=bus.name)
    message = sqs_event(
        {
            "pdf": object_event("inbox/broken.pdf", bucket.name),
            "stray": object_event("inbox/notes/readme.txt", bucket.name),
        }
    )
    assert splitter.lambda_handler(message, Context()) == {"batchItemFailures": []}
    ended = sorted(bus.delivered(), key=lambda e: e["detail"]["key"])
    assert [(e["detail"]["key"], e["detail"]["record"], e["detail"]["error"]) for e in ended] == [
        ("inbox/broken.pdf", keys.outbox_record("broken"), "input_gone"),
        ("inbox/notes/readme.txt", keys.stray_record("inbox/notes/readme.txt"), "not_pdf"),
    ]
    assert {e["detail"]["status"] for e in ended} == {"failed"}
    assert _metrics(capsys.readouterr().out)["Jobs_failed"] == 2  # the dashboard's count
    # The same events again (SQS delivers at least once): the jobs have ended, nothing is put.
    assert splitter.lambda_handler(message, Context()) == {"batchItemFailures": []}
    assert bus.delivered() == []
    assert "Jobs_failed" not in _metrics(capsys.readouterr().out)


def test_racing_completions_of_one_job_put_one_event(
    settings: Settings, bucket: Bucket, bus: Bus
) -> None:
    job = _finished_job(bucket, "race")
    on_the_bus = settings.model_copy(update={"event_bus": bus.name})
    announce = clients.announcer(on_the_bus, completion.logger, completion.metrics)
    together = threading.Barrier(4, timeout=30)
    outcomes: list[str] = []

    def complete() -> None:
        together.wait()
        outcomes.append(complete_job(bucket, job, announce))

    threads = [threading.Thread(target=complete) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["already"] * 3 + ["published"]
    assert [e["detail"]["job_id"] for e in bus.delivered()] == [job]
    # A write of the record that finds the job's own record there is no publication.
    record = JobRecord.model_validate_json(bucket.get(keys.outbox_record("race")))
    assert publish(bucket, "race", record) is None


class _RejectingBus(LoopbackProxy):
    """The moto server behind a proxy that answers the first ``rejections`` PutEvents as
    EventBridge answers an entry it did not take: 200, FailedEntryCount 1, the entry's code."""

    name = "rejecting-bus"

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.lock = threading.Lock()
        self.reject("", 0)

    def reject(self, code: str, rejections: int) -> None:
        with self.lock:
            self.code, self.rejections, self.puts = code, rejections, 0


class _RejectingHandler(ProxyHandler):
    owner: _RejectingBus

    def _handle(self) -> None:
        body = self._read_body()
        if self.headers.get("X-Amz-Target") == "AWSEvents.PutEvents":
            with self.owner.lock:
                self.owner.puts += 1
                rejected = self.owner.puts <= self.owner.rejections
            if rejected:
                entry = {"ErrorCode": self.owner.code, "ErrorMessage": "the test's bus says no"}
                payload = json.dumps({"FailedEntryCount": 1, "Entries": [entry]}).encode()
                self._reply(200, "OK", [("Content-Type", "application/x-amz-json-1.1")], payload)
                return
        self._reply(*self._forward(body))


_RejectingBus.handler = _RejectingHandler


@pytest.fixture(scope="module")
def rejecting_proxy(moto_server: MotoServer) -> Iterator[_RejectingBus]:
    proxy = _RejectingBus(moto_server.url)  # one per module: a stop waits out a poll (0.5 s)
    proxy.start()
    yield proxy
    proxy.stop()


@pytest.fixture
def rejecting(rejecting_proxy: _RejectingBus, monkeypatch: pytest.MonkeyPatch) -> _RejectingBus:
    """The proxy, rejecting nothing until told; the retries' back-off off, so the test does
    not wait it out."""
    monkeypatch.setattr(put_event.retry, "wait", wait_none())  # type: ignore[attr-defined]
    rejecting_proxy.reject("", 0)
    return rejecting_proxy


def test_an_entry_the_bus_failed_is_put_again(
    settings: Settings, bucket: Bucket, bus: Bus, rejecting: _RejectingBus
) -> None:
    rejecting.reject("InternalFailure", rejections=2)
    job = _finished_job(bucket, "flaky")
    events = JobEvents(aws.client("events", Settings(endpoint_url=rejecting.url)), bus.name)
    assert complete_job(bucket, job, events.send) == "published"
    assert rejecting.puts == 3
    assert [e["detail"]["job_id"] for e in bus.delivered()] == [job]


def test_a_bus_that_refuses_the_event_fails_no_job(
    settings: Settings,
    bucket: Bucket,
    bus: Bus,
    rejecting: _RejectingBus,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An entry still failing after every attempt; and a refusal, which no attempt mends.
    for code, puts in (("InternalFailure", aws.ATTEMPTS), ("AccessDeniedException", 1)):
        rejecting.reject(code, rejections=aws.ATTEMPTS)
        job = _finished_job(bucket, f"refused/{code}")
        # S3 goes through the proxy untouched; only PutEvents is answered by it.
        _as_an_announcing_function(
            monkeypatch, settings, endpoint_url=rejecting.url, event_bus=bus.name
        )
        message = sqs_event({"m": object_event(keys.chunk_result(job, 0), bucket.name)})
        capsys.readouterr()
        assert completion.lambda_handler(message, Context()) == {"batchItemFailures": []}
        assert _metrics(capsys.readouterr().out)["JobEventsFailed"] == 1
        assert rejecting.puts == puts
        assert bucket.head(keys.outbox_record(f"refused/{code}")) is not None
        [report] = [r for r in caplog.records if r.levelno == logging.ERROR and job in r.message]
        assert code in report.message and f'"job_id":"{job}"' in report.message
        caplog.clear()
        # Its retry finds the job ended: the record is not written again, nothing is put.
        assert completion.lambda_handler(message, Context()) == {"batchItemFailures": []}
        assert rejecting.puts == puts
    assert bus.delivered() == []


def test_a_job_its_completion_dlq_consumer_ends_is_announced_failed(
    settings: Settings, bucket: Bucket, bus: Bus, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = _finished_job(bucket, "broken")
    bucket.put(keys.chunk_result(job, 0), b"{}")  # a result no completion can read
    _as_an_announcing_function(monkeypatch, settings, event_bus=bus.name)
    message = sqs_event({"m": object_event(keys.chunk_result(job, 0), bucket.name)})
    assert completion.completion_dead_letter_handler(message, Context()) == {
        "batchItemFailures": []
    }
    [event] = bus.delivered()
    assert {k: event["detail"][k] for k in ("job_id", "status", "error", "markdown")} == {
        "job_id": job,
        "status": "failed",
        "error": "dead_letter",
        "markdown": None,
    }


class _Webhook(BaseHTTPRequestHandler):
    """Answers each POST with the next of ``answers`` (200 once they run out)."""

    answers: ClassVar[list[int]] = []
    posts: ClassVar[list[tuple[str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).posts.append((self.path, self.headers["Content-Type"], body))
        status = type(self).answers.pop(0) if type(self).answers else 200
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def webhook_server() -> Iterator[str]:
    serving = BackgroundServer(ThreadingHTTPServer(("127.0.0.1", 0), _Webhook), "webhook")
    yield serving.url
    serving.stop()


@pytest.fixture
def webhook(webhook_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(post_event.retry, "wait", wait_none())  # type: ignore[attr-defined]
    _Webhook.answers, _Webhook.posts = [], []
    return webhook_server


EVENT = JobEvent(
    bucket="b",
    key="inbox/a.pdf",
    record="outbox/a.json",
    markdown="outbox/a.md",
    status="partial",
    pages=3,
    job_id="j",
    error=None,
    finished_at=1796224269.5,
)


def test_the_webhook_gets_the_event_as_json_and_a_5xx_is_tried_again(webhook: str) -> None:
    _Webhook.answers = [503]
    assert JobEvents(webhook_url=f"{webhook}/hooks/pagefleet?token=t").send(EVENT) == []
    assert len(_Webhook.posts) == 2
    path, content_type, body = _Webhook.posts[-1]
    assert (path, content_type) == ("/hooks/pagefleet?token=t", "application/json")
    assert json.loads(body) == EVENT.model_dump(mode="json")


def test_a_webhook_that_refuses_is_not_tried_again_and_fails_nothing(webhook: str) -> None:
    _Webhook.answers = [404]
    assert JobEvents(webhook_url=webhook).send(EVENT) == ["webhook"]
    assert len(_Webhook.posts) == 1


def test_a_webhook_url_other_than_http_is_refused_at_start() -> None:
    with pytest.raises(ValidationError):
        Settings(webhook_url="file:///etc/passwd")
    with pytest.raises(SettingsRefused, match="PAGEFLEET_WEBHOOK_URL=ftp://h/x: must be an http"):
        load_settings(webhook_url="ftp://h/x")
    assert Settings(webhook_url="https://hooks.example.com/x").webhook_url is not None
