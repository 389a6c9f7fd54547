"""The embedded moto server answers as moto does, at a cost that does not grow with the queue
(deliveries from a deep queue) or the bucket (a prefix listed), and loses no message to
requests that overlap, over HTTP with boto3."""

from __future__ import annotations

import contextlib
import datetime
import email.parser
import http.client
import inspect
import io
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import boto3
import botocore.exceptions
import botocore.utils
import moto.core.responses
import moto.core.serialize
import moto.core.utils
import moto.sqs.models
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.s3.models import S3Backend, s3_backends
from moto.sqs.models import Message, Queue, sqs_backends
from moto.sqs.responses import SQSResponse

from embedded import MotoServer
from embedded import server as server_module
from pagefleet.settings import Settings
from tests.conftest import fresh_settings


def _queue(moto_server: MotoServer, settings: Settings, **attributes: str) -> tuple[Any, str]:
    sqs = boto3.client("sqs", endpoint_url=moto_server.url, region_name=settings.region)
    name = f"{settings.queue_prefix}-deep"
    url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return sqs, url


def test_a_delivery_from_a_deep_queue_does_not_build_the_queue_attributes(
    moto_server: MotoServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs, url = _queue(moto_server, settings)
    for start in range(0, 500, 10):
        entries = [{"Id": str(n), "MessageBody": f"m{start + n}"} for n in range(10)]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)
    built = 0
    attributes = Queue.attributes

    def counted(queue: Queue) -> dict[str, Any]:
        nonlocal built
        built += 1
        return attributes.fget(queue)  # type: ignore[attr-defined, no-any-return]

    monkeypatch.setattr(Queue, "attributes", property(counted))
    delivered = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert len(delivered) == 10
    # moto's own check built every attribute (three walks of the 500 messages) three times a
    # message: 30 builds here.
    assert built == 0


def test_a_message_past_the_retention_period_is_still_not_delivered(
    moto_server: MotoServer, settings: Settings
) -> None:
    sqs, url = _queue(moto_server, settings, MessageRetentionPeriod="60")
    sqs.send_message(QueueUrl=url, MessageBody="old")
    queue = sqs_backends[DEFAULT_ACCOUNT_ID][settings.region].get_queue(
        f"{settings.queue_prefix}-deep"
    )
    [old] = queue._messages
    old.sent_timestamp -= 61_000  # sent 61 s ago, past the 60 s it is kept
    assert "Messages" not in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
    sqs.send_message(QueueUrl=url, MessageBody="new")
    bodies = [
        m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    ]
    assert bodies == ["new"]


def test_a_delete_overlapping_other_requests_to_its_queue_loses_none_of_them(
    moto_server: MotoServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto's delete rebuilds the queue's message list from the one it started with: a delete
    and a send that land while it is half-way must neither come undone nor vanish. The first
    delete is held half-way (at its last message) for as long as the others take, or 2 s."""
    sqs, url = _queue(moto_server, settings)
    for body in ("first", "middle", "last"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300)
    handles = {m["Body"]: m["ReceiptHandle"] for m in received["Messages"]}
    halfway, go_on = threading.Event(), threading.Event()
    had_receipt_handle = Message.had_receipt_handle

    def holding(message: Message, receipt_handle: str) -> bool:
        if message.body == "last" and receipt_handle == handles["first"] and not halfway.is_set():
            halfway.set()
            go_on.wait(10)
        return had_receipt_handle(message, receipt_handle)

    monkeypatch.setattr(Message, "had_receipt_handle", holding)
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(sqs.delete_message, QueueUrl=url, ReceiptHandle=handles["first"])
        assert halfway.wait(10)
        others = [
            pool.submit(sqs.delete_message, QueueUrl=url, ReceiptHandle=handles["middle"]),
            pool.submit(sqs.send_message, QueueUrl=url, MessageBody="sent meanwhile"),
        ]
        wait(others, timeout=2)  # done at once unless they wait for the first delete
        go_on.set()
        for request in (first, *others):
            request.result()
    queue = sqs_backends[DEFAULT_ACCOUNT_ID][settings.region].get_queue(
        f"{settings.queue_prefix}-deep"
    )
    assert sorted(m.body for m in queue._messages) == ["last", "sent meanwhile"]


@pytest.fixture(scope="module")
def listed_bucket(moto_server: MotoServer) -> tuple[Any, str]:
    """A versioned bucket of 1,200 keys under a few prefixes, some overwritten, some deleted
    (a delete marker on top), as a stack's bucket is."""
    settings = fresh_settings(moto_server)
    s3 = boto3.client("s3", endpoint_url=moto_server.url, region_name=settings.region)
    s3.create_bucket(Bucket=settings.bucket)
    s3.put_bucket_versioning(Bucket=settings.bucket, VersioningConfiguration={"Status": "Enabled"})
    names = [f"jobs/j{n % 3}/results/{n:04d}.json" for n in range(1100)]
    names += [f"outbox/a{n}.md" for n in range(50)] + [f"outbox/a/{n}.md" for n in range(50)]
    # Written in the server's process: 1,500 requests would take 9 s.
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    for key in names:
        backend.put_object(settings.bucket, key, b"x")
    for key in names[::7]:
        backend.put_object(settings.bucket, key, b"again")
    for key in names[::5]:
        backend.delete_object(settings.bucket, key)
    return s3, settings.bucket


@pytest.mark.parametrize(
    ("prefix", "delimiter", "marker", "max_keys"),
    [
        ("jobs/j1/", None, None, None),
        ("jobs/", "/", None, None),
        ("jobs/j2/results/", None, "jobs/j2/results/0500.json", 100),
        ("outbox/a", None, None, 20),
        ("outbox/a", "/", None, None),
        ("nothing/", None, None, None),
        ("", "/", None, None),
    ],
)
def test_a_prefix_listing_is_what_moto_lists(
    listed_bucket: tuple[Any, str],
    prefix: str,
    delimiter: str | None,
    marker: str | None,
    max_keys: int | None,
) -> None:
    """The listing of the keys under a prefix alone (embedded/server.py) against moto's own
    walk of the whole bucket, called on the same backend."""
    _, name = listed_bucket
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    bucket = backend.get_bucket(name)
    ours = S3Backend.list_objects(backend, bucket, prefix, delimiter, marker, max_keys)
    walked = server_module._moto_list_objects(backend, bucket, prefix, delimiter, marker, max_keys)
    assert server_module._moto_list_objects is not S3Backend.list_objects
    keys, folders, truncated, next_marker = ours
    assert ([k.name for k in keys], list(folders), truncated, next_marker) == (
        [k.name for k in walked[0]],
        list(walked[1]),
        walked[2],
        walked[3],
    )
    assert keys or folders or prefix == "nothing/"


def test_a_listing_over_http_pages_through_the_keys_under_its_prefix(
    listed_bucket: tuple[Any, str],
) -> None:
    s3, name = listed_bucket
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix="jobs/j0/")
    listed = [item["Key"] for page in pages for item in page.get("Contents", [])]
    expected = [f"jobs/j0/results/{n:04d}.json" for n in range(0, 1100, 3) if n % 5]
    assert listed == expected


def test_moto_sqs_reads_the_clock_that_moto_reads() -> None:
    """The SQS clock embedded/server.py puts in (time.time(), not four datetimes a reading)."""
    assert moto.sqs.models.unix_time is server_module._sqs_unix_time
    before = moto.core.utils.unix_time()
    ours = moto.sqs.models.unix_time()
    after = moto.core.utils.unix_time()
    assert before - 1e-3 <= ours <= after + 1e-3  # moto's own readings keep microseconds
    assert before * 1000 - 1 <= moto.sqs.models.unix_time_millis() <= after * 1000 + 1
    given = datetime.datetime(2026, 12, 2, 10, 30, 5, 678000)
    assert moto.sqs.models.unix_time(given) == moto.core.utils.unix_time(given)
    assert moto.sqs.models.unix_time_millis(given) == moto.core.utils.unix_time_millis(given)


@pytest.mark.parametrize(
    "value",
    [
        moto.core.utils.iso_8601_datetime_without_milliseconds_s3(
            datetime.datetime(2026, 12, 5, 0, 31, 11, 179775)
        ),
        moto.core.utils.rfc_1123_datetime(datetime.datetime(2026, 2, 28, 23, 59, 1)),
        "2026-12-05T00:30:56.123456Z",
        "2026-01-05T00:30:56Z",
        datetime.datetime(2026, 12, 5, 0, 31, 11, 179775),
        1_700_000_000,
        "1700000000",
        "2026-12-05T00:30:56+02:00",  # none that moto writes: botocore's parser reads it
    ],
)
def test_moto_serializes_timestamps_as_botocore_parses_them(value: object) -> None:
    """The timestamps of moto's replies (a listed key's LastModified, a HEAD's Last-Modified;
    the formats moto.core.utils writes) read without dateutil, to botocore's datetime."""
    assert moto.core.serialize.parse_to_aware_datetime is server_module._parse_timestamp
    ours = server_module._parse_timestamp(value)
    theirs = botocore.utils.parse_to_aware_datetime(value)
    assert (ours, ours.tzinfo, ours.utcoffset()) == (theirs, theirs.tzinfo, theirs.utcoffset())


def test_a_listing_and_a_head_over_http_carry_the_keys_times(
    listed_bucket: tuple[Any, str],
) -> None:
    s3, name = listed_bucket
    key = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].get_object(name, "jobs/j1/results/0001.json")
    assert key is not None
    listed = s3.list_objects_v2(Bucket=name, Prefix="jobs/j1/results/0001")["Contents"]
    head = s3.head_object(Bucket=name, Key="jobs/j1/results/0001.json")
    made = key.last_modified.replace(tzinfo=datetime.UTC)
    assert listed[0]["LastModified"] == made.replace(microsecond=0)  # S3 lists whole seconds
    assert head["LastModified"] == made.replace(microsecond=0)


def test_a_released_long_poll_ends_at_once_and_the_next_one_waits(
    moto_server: MotoServer, settings: Settings
) -> None:
    """release_polls ends the long polls waiting on a queue, empty, as a wait that ran out;
    one that starts after it waits as usual, and a send ends a wait with the message."""
    sqs, url = _queue(moto_server, settings)
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = time.monotonic()
        waiting = pool.submit(sqs.receive_message, QueueUrl=url, WaitTimeSeconds=20)
        time.sleep(0.5)  # the poll in flight at the server: nothing of it to await
        moto_server.release_polls(settings.region, [url])
        assert waiting.result(timeout=10).get("Messages", []) == []
        assert time.monotonic() - started < 10
        started = time.monotonic()
        assert sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", []) == []
        assert time.monotonic() - started >= 0.9
        started = time.monotonic()
        waiting = pool.submit(sqs.receive_message, QueueUrl=url, WaitTimeSeconds=20)
        time.sleep(0.5)
        sqs.send_message(QueueUrl=url, MessageBody="wake")
        assert [m["Body"] for m in waiting.result(timeout=10)["Messages"]] == ["wake"]
        assert time.monotonic() - started < 10


def test_a_copy_is_conditional_on_its_destination_as_a_put_is(
    moto_server: MotoServer, settings: Settings
) -> None:
    """CopyObject with If-None-Match / If-Match (embedded/server.py): 412 as PutObject."""
    s3 = boto3.client("s3", endpoint_url=moto_server.url, region_name=settings.region)
    s3.create_bucket(Bucket=settings.bucket)
    s3.put_object(Bucket=settings.bucket, Key="jobs/j/a.png", Body=b"png")
    source = {"Bucket": settings.bucket, "Key": "jobs/j/a.png"}
    made = s3.copy_object(
        Bucket=settings.bucket, Key="out/a.png", CopySource=source, IfNoneMatch="*"
    )
    etag = made["CopyObjectResult"]["ETag"]
    failed = []
    for condition in ({"IfNoneMatch": "*"}, {"IfMatch": '"0123"'}):
        try:
            s3.copy_object(Bucket=settings.bucket, Key="out/a.png", CopySource=source, **condition)
        except botocore.exceptions.ClientError as exc:
            failed.append(exc.response["ResponseMetadata"]["HTTPStatusCode"])
    assert failed == [412, 412]
    s3.copy_object(Bucket=settings.bucket, Key="out/a.png", CopySource=source, IfMatch=etag)
    assert s3.get_object(Bucket=settings.bucket, Key="out/a.png")["Body"].read() == b"png"


# Headers and body parts that differ from one request to the next whichever path answers.
_PER_REQUEST = {"date", "last-modified", "x-amzn-requestid", "x-amz-request-id", "x-amz-id-2"}
_PER_REQUEST_BODY = re.compile(rb"<(LastModified|RequestId)>[^<]*</\1>|\"RequestId\": \"[^\"]*\"")


def _answers(
    moto_server: MotoServer, settings: Settings
) -> list[tuple[int, dict[str, str], bytes]]:
    """The raw replies to S3 and SQS requests the stack makes, errors among them, with what
    names this run (its bucket and queue) and what differs per request left out."""
    replies: list[tuple[int, dict[str, str], bytes]] = []
    names = [settings.bucket.encode(), settings.queue_prefix.encode()]

    def keep(http_response: Any, **_: Any) -> None:
        body = _PER_REQUEST_BODY.sub(b"", http_response.content)
        for name in names:
            body = body.replace(name, b"NAME")
        headers = {
            k.lower(): v.replace(settings.bucket, "NAME")
            for k, v in http_response.headers.items()
            if k.lower() not in _PER_REQUEST
        }
        replies.append((http_response.status_code, headers, body))

    s3 = boto3.client("s3", endpoint_url=moto_server.url, region_name=settings.region)
    sqs = boto3.client("sqs", endpoint_url=moto_server.url, region_name=settings.region)
    for client in (s3, sqs):
        client.meta.events.register("after-call.*.*", keep)
    bucket = settings.bucket
    source = {"Bucket": bucket, "Key": "jobs/j/a.png"}
    calls = [
        lambda: s3.create_bucket(Bucket=bucket),
        # An underscore in a metadata name: moto's request handler keeps it (werkzeug_app.py).
        lambda: s3.put_object(Bucket=bucket, Key="jobs/j/a.png", Body=b"x", Metadata={"a_b": "1"}),
        lambda: s3.put_object(Bucket=bucket, Key="jobs/j/a.png", Body=b"png", IfNoneMatch="*"),
        lambda: s3.get_object(Bucket=bucket, Key="jobs/j/a.png"),
        lambda: s3.get_object(Bucket=bucket, Key="jobs/j/none"),
        lambda: s3.head_object(Bucket=bucket, Key="jobs/j/a.png"),
        lambda: s3.head_object(Bucket=bucket, Key="jobs/j/none"),
        lambda: s3.list_objects_v2(Bucket=bucket, Prefix="jobs/"),
        lambda: s3.copy_object(Bucket=bucket, Key="out/a.png", CopySource=source, IfNoneMatch="*"),
        lambda: s3.copy_object(Bucket=bucket, Key="out/a.png", CopySource=source, IfNoneMatch="*"),
        lambda: s3.delete_object(Bucket=bucket, Key="out/a.png"),
        lambda: s3.get_object(Bucket=f"{bucket}-none", Key="a"),
        lambda: sqs.create_queue(QueueName=f"{settings.queue_prefix}-q"),
        lambda: sqs.get_queue_url(QueueName=f"{settings.queue_prefix}-none"),
        lambda: sqs.get_queue_attributes(
            QueueUrl=sqs.get_queue_url(QueueName=f"{settings.queue_prefix}-q")["QueueUrl"],
            AttributeNames=["VisibilityTimeout"],
        ),
    ]
    for call in calls:
        with contextlib.suppress(botocore.exceptions.ClientError):
            call()
    return replies


def test_the_server_answers_as_moto_under_flask_does(
    moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server runs moto's views without Flask's request cycle (embedded/server.py,
    _HostCachingDispatcher.__call__): every reply, errors included, is the one Flask makes."""
    dispatched = []
    dispatch = server_module._dispatch

    def counted(*args: Any) -> Any:
        dispatched.append(args)
        return dispatch(*args)

    monkeypatch.setattr(server_module, "_dispatch", counted)
    direct = _answers(moto_server, fresh_settings(moto_server))
    assert len(dispatched) == len(direct)
    monkeypatch.setattr(server_module, "_hookless", lambda app: False)  # Flask answers all
    assert _answers(moto_server, fresh_settings(moto_server)) == direct
    assert len(dispatched) == len(direct)


def test_receipt_handles_are_moto_s_and_each_delivery_its_own(
    moto_server: MotoServer, settings: Settings
) -> None:
    """embedded/server.py draws them from os.urandom: 185 lowercase letters, as moto's
    generate_receipt_handle makes them (moto/sqs/utils.py), new for every delivery."""
    assert moto.sqs.models.generate_receipt_handle is server_module._receipt_handle
    sqs, url = _queue(moto_server, settings, VisibilityTimeout="0")
    sqs.send_message(QueueUrl=url, MessageBody="m")
    handles = [sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"] for _ in range(3)]
    assert all(re.fullmatch("[a-z]{185}", handle) for handle in handles)
    assert len(set(handles)) == 3
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handles[-1])
    assert "Messages" not in sqs.receive_message(QueueUrl=url)


def test_an_sqs_request_does_not_list_its_response_class_s_methods(
    moto_server: MotoServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto's call_action lists them (inspect.getmembers) to check its action is one; the list,
    the same every time, is read once per class (embedded/server.py)."""
    sqs, url = _queue(moto_server, settings)
    listed = []
    getmembers = inspect.getmembers

    def listing(*args: Any, **kwargs: Any) -> Any:
        listed.append(args)
        return getmembers(*args, **kwargs)

    monkeypatch.setattr(inspect, "getmembers", listing)
    sqs.send_message(QueueUrl=url, MessageBody="m")
    assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "m"
    assert listed == []
    assert moto.core.responses.method_names_from_class(SQSResponse) == (
        moto.core.utils.method_names_from_class(SQSResponse)
    )


@pytest.mark.parametrize(
    ("block", "plain"),
    [
        (b"Host: 127.0.0.1:1\r\nX-Amz-Meta-A_B:  1 \r\nEmpty:\r\nDup: 1\r\nDup: 2\r\n\r\n", True),
        (b"Host: a\nAccept: \xe9\n\n", True),  # bare LF line ends; a Latin-1 byte
        (b"Host: a\r\nFolded: one\r\n two\r\n\r\n", False),
        (b"Host: a\r\nStray: a\rb\r\n\r\n", False),
        (b"Host: a\r\nNo colon here\r\nAfter: 1\r\n\r\n", False),
        (b"Host: a\r\n: no name\r\n\r\n", False),
        (b"Host : a\r\n\r\n", False),
        (b"From someone\r\nHost: a\r\n\r\n", False),
        (b"Host: a\r\nCut: short", False),  # the connection ended inside the headers
    ],
)
def test_a_request_s_headers_are_read_as_the_email_parser_reads_them(
    block: bytes, plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """embedded/server.py reads plain header lines itself, any other block with the email
    package's parser; every block gives the message that parser gives (http.client's
    parse_headers)."""
    theirs = email.parser.Parser(_class=server_module._RequestHeaders).parsestr(
        block.decode("iso-8859-1")
    )
    parsed = []
    parser = email.parser.Parser

    def parsing(*args: Any, **kwargs: Any) -> Any:
        parsed.append(args)
        return parser(*args, **kwargs)

    monkeypatch.setattr(email.parser, "Parser", parsing)
    ours = server_module._parse_headers(io.BytesIO(block), server_module._RequestHeaders)
    assert not parsed if plain else parsed
    defects = [type(defect) for defect in theirs.defects]
    assert {**vars(ours), "defects": defects} == {**vars(theirs), "defects": defects}
    assert [type(defect) for defect in ours.defects] == defects


def _listings(
    moto_server: MotoServer, settings: Settings
) -> list[tuple[int, dict[str, str], bytes]]:
    """The raw replies to listings of keys that need escaping, with and without S3's URL
    encoding, a delimiter, pages, a start, an owner, checksums, an empty prefix, no keys."""
    replies: list[tuple[int, dict[str, str], bytes]] = []
    name = settings.bucket.encode()

    def keep(http_response: Any, **_: Any) -> None:
        headers = {
            k.lower(): v for k, v in http_response.headers.items() if k.lower() not in _PER_REQUEST
        }
        body = re.sub(rb"<NextContinuationToken>[^<]*<", b"<", http_response.content)
        # The two runs' objects are written seconds apart: their times' digits differ, their
        # format must not.
        body = re.sub(
            rb"<LastModified>[^<]*<",
            lambda m: re.sub(rb"\d", b"0", m.group()),
            body,
        )
        replies.append((http_response.status_code, headers, body.replace(name, b"NAME")))

    s3 = boto3.client("s3", endpoint_url=moto_server.url, region_name=settings.region)
    raw = boto3.client("s3", endpoint_url=moto_server.url, region_name=settings.region)
    raw.meta.events.unregister(  # keys as they are, not URL-encoded
        "before-parameter-build.s3.ListObjectsV2",
        botocore.handlers.set_list_objects_encoding_type_url,
    )
    bucket = settings.bucket
    s3.create_bucket(Bucket=bucket)
    names = ["r/a&b<c>\"d'\u00e9.json", "r/a b.md", "r/a.assets/x.png", "r/z\t.json", "s/1"]
    for n, key in enumerate(names):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x" * n, ChecksumAlgorithm="SHA256")
    s3.put_object(Bucket=bucket, Key="r/plain.json", Body=b"")
    for client in (s3, raw):
        client.meta.events.register("after-call.s3.ListObjectsV2", keep)
        for kwargs in (
            {"Prefix": "r/"},
            {"Prefix": "r/", "Delimiter": "/"},
            {"Prefix": "r/", "Delimiter": "."},
            {"Prefix": "r/", "MaxKeys": 2},
            {"Prefix": "r/", "StartAfter": "r/a b.md"},
            {"Prefix": "r/", "FetchOwner": True},
            {"Prefix": "r/a&b<"},
            {"Prefix": "none/"},
            {},
        ):
            client.list_objects_v2(Bucket=bucket, **kwargs)
    return replies


def test_a_listing_is_the_reply_moto_s_serializer_writes(
    moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing's reply is written directly (embedded/server.py, _listing_xml), byte for byte
    what moto's serializer writes, which is still asked for what the listing leaves to it."""
    written: list[str | None] = []
    listing_xml = server_module._listing_xml

    def counted(result: dict[str, Any]) -> str | None:
        written.append(listing_xml(result))
        return written[-1]

    monkeypatch.setattr(server_module, "_listing_xml", counted)
    settings = fresh_settings(moto_server)
    direct = _listings(moto_server, settings)
    assert len(written) == len(direct) == 18
    assert sum(body is not None for body in written) == 14  # an owner and all keys: moto's
    monkeypatch.setattr(moto.s3.responses.S3Response, "serialized", server_module._moto_serialized)
    moto_s = _listings(moto_server, fresh_settings(moto_server))
    assert len(written) == 18
    assert moto_s == direct
    bodies = b"".join(body for _, _, body in direct)
    assert (
        b"&amp;b&lt;c&gt;" in bodies and b"%26b%3Cc%3E" in bodies and b"<CommonPrefixes>" in bodies
    )


class _CountedEnviron(dict[str, Any]):
    walks = 0

    def items(self) -> Any:
        self.walks += 1
        return super().items()


def test_a_request_s_headers_are_walked_once_and_again_when_moto_adds_one() -> None:
    from moto.core.request import EnvironHeaders

    environ = _CountedEnviron(
        {
            "REQUEST_METHOD": "PUT",
            "CONTENT_TYPE": "image/png",
            "HTTP_X_AMZ_META_PAGEFLEET_JOB": "j",
            "HTTP_IF_NONE_MATCH": "*",
            "wsgi.input": io.BytesIO(),
        }
    )
    headers = server_module._HeadersReadOnce(environ)
    as_moto_reads_them = list(EnvironHeaders(dict(environ)))
    walks = environ.walks
    for _ in range(3):  # moto's S3 iterates a PUT's headers once per header
        assert list(headers.items()) == as_moto_reads_them
        assert list(headers.keys()) == [name for name, _ in as_moto_reads_them]
    assert environ.walks == walks + 1
    assert headers["if-none-match"] == "*"  # a lookup by name reads the environ itself
    environ["HTTP_HOST"] = "127.0.0.1"  # what moto writes for a request without a Host
    assert ("Host", "127.0.0.1") in list(headers.items())


def test_a_bucket_is_named_by_the_path_whatever_the_host_says(moto_server: MotoServer) -> None:
    """moto's S3 reads a bucket name from the host where the host looks like a bucket's
    subdomain (moto/s3/responses.py, subdomain_based_buckets); this server's clients address
    by path, and it reads the path alone (S3_IGNORE_SUBDOMAIN_BUCKETNAME, embedded/server.py)."""
    settings = fresh_settings(moto_server)
    s3 = boto3.client("s3", endpoint_url=moto_server.url, region_name=settings.region)
    s3.create_bucket(Bucket=settings.bucket)
    connection = http.client.HTTPConnection("127.0.0.1", int(moto_server.url.rsplit(":", 1)[1]))
    try:
        connection.request(
            "PUT",
            f"/{settings.bucket}/by-path",
            body=b"x",
            headers={"Host": "other.s3.example.com"},
        )
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    assert s3.get_object(Bucket=settings.bucket, Key="by-path")["Body"].read() == b"x"
