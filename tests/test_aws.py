"""One place decides how many HTTP requests a failing call makes: pagefleet.aws.ATTEMPTS,
counted on the wire against a server that answers every request with a 500."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from botocore.exceptions import ClientError
from tenacity import BaseRetrying, stop_after_attempt, wait_none

from embedded.server import BackgroundServer
from pagefleet import aws
from pagefleet.aws import use_fake_credentials
from pagefleet.queues import AsyncQueue
from pagefleet.settings import Settings
from pagefleet.storage import AsyncBucket, Bucket


class Failing(BaseHTTPRequestHandler):
    requests = 0
    access_keys: ClassVar[set[str]] = set()  # the key each request was signed with

    def _fail(self) -> None:
        type(self).requests += 1
        type(self).access_keys.add(self.headers["Authorization"].split("Credential=")[1][:8])
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = do_PUT = do_POST = _fail

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_endpoint() -> Iterator[str]:
    use_fake_credentials()
    Failing.requests = 0
    serving = BackgroundServer(ThreadingHTTPServer(("127.0.0.1", 0), Failing), "failing")
    yield serving.url
    serving.stop()


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every retrying method's policy without its back-off, all at once, so a call that nests
    one retrying call inside another is counted as the wire sees it, without waiting it out."""
    for owner in (Bucket, AsyncBucket):
        for method in vars(owner).values():
            if isinstance(getattr(method, "retry", None), BaseRetrying):
                monkeypatch.setattr(method.retry, "wait", wait_none())


def test_listing_a_prefix_makes_exactly_the_attempts_the_policy_allows(
    failing_endpoint: str, no_backoff: None
) -> None:
    bucket = Bucket(aws.client("s3", Settings(endpoint_url=failing_endpoint)), "b")
    for listing in (bucket.list_keys, bucket.list_etags):
        Failing.requests = 0
        with pytest.raises(ClientError):
            listing("jobs/")
        assert (listing.__name__, Failing.requests) == (listing.__name__, aws.ATTEMPTS)


def test_a_failing_boto3_call_makes_exactly_the_attempts_the_policy_allows(
    failing_endpoint: str,
) -> None:
    bucket = Bucket(aws.client("s3", Settings(endpoint_url=failing_endpoint)), "b")
    # The same policy without its back-off, so the test does not wait it out.
    head = Bucket.head.retry_with(wait=wait_none())  # type: ignore[attr-defined]
    with pytest.raises(ClientError):
        head(bucket, "k")
    assert Failing.requests == aws.ATTEMPTS


def test_a_failing_aiobotocore_call_makes_exactly_the_attempts_the_policy_allows(
    failing_endpoint: str,
) -> None:
    async def extend() -> None:
        async with aws.async_client("sqs", Settings(endpoint_url=failing_endpoint)) as sqs:
            queue = AsyncQueue(sqs, f"{failing_endpoint}/123456789012/q")
            await AsyncQueue.extend.retry_with(wait=wait_none())(queue, "receipt", 0)  # type: ignore[attr-defined]

    with pytest.raises(ClientError):
        asyncio.run(extend())
    assert Failing.requests == aws.ATTEMPTS


def test_a_client_signs_with_the_credentials_the_environment_holds_when_it_is_made(
    failing_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions are reused (a new one parses the service models again), but never across a
    change of credentials: a process that signs as another role gets clients that do."""
    head = Bucket.head.retry_with(stop=stop_after_attempt(1))  # type: ignore[attr-defined]
    for key in ("KEYONE00", "KEYTWO00", "KEYONE00"):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
        Failing.access_keys = set()
        with pytest.raises(ClientError):
            head(Bucket(aws.client("s3", Settings(endpoint_url=failing_endpoint)), "b"), "k")
        assert Failing.access_keys == {key}


def test_clients_read_each_timestamp_as_botocore_does_parsing_it_once(
    settings: Settings,
) -> None:
    """Every client, boto3's and aiobotocore's, reads a reply's timestamps (a HEAD's
    Last-Modified, a LIST's LastModified of each key) as botocore's own parser does, and a
    value met again (the same key in the next LIST) is not parsed again."""
    import boto3

    use_fake_credentials()
    s3 = aws.client("s3", settings)
    plain = boto3.session.Session().client(
        "s3", region_name=settings.region, endpoint_url=settings.endpoint_url
    )
    s3.create_bucket(Bucket=settings.bucket)
    for key in ("a/1", "a/2"):
        s3.put_object(Bucket=settings.bucket, Key=key, Body=b"x")
    aws.parse_timestamp_once.cache_clear()
    listed = s3.list_objects_v2(Bucket=settings.bucket, Prefix="a/")["Contents"]
    parsed = aws.parse_timestamp_once.cache_info().misses
    assert parsed >= 1
    assert s3.list_objects_v2(Bucket=settings.bucket, Prefix="a/")["Contents"] == listed
    assert aws.parse_timestamp_once.cache_info().misses == parsed
    assert listed == plain.list_objects_v2(Bucket=settings.bucket, Prefix="a/")["Contents"]
    head = s3.head_object(Bucket=settings.bucket, Key="a/1")["LastModified"]
    assert head == plain.head_object(Bucket=settings.bucket, Key="a/1")["LastModified"]
    assert head.tzinfo is not None and head.utcoffset() == datetime.timedelta(0)

    async def async_head() -> datetime.datetime:
        async with aws.async_client("s3", settings) as client:
            reply = await client.head_object(Bucket=settings.bucket, Key="a/1")
            return reply["LastModified"]

    hits = aws.parse_timestamp_once.cache_info().hits
    assert asyncio.run(async_head()) == head
    assert aws.parse_timestamp_once.cache_info().hits > hits


@pytest.mark.parametrize(
    ("endpoint", "verified"),
    [("http://127.0.0.1:9", False), ("https://s3.example.test", True), (None, True)],
)
def test_async_clients_verify_certificates_only_where_there_are_some(
    endpoint: str | None, verified: bool
) -> None:
    """A plain-HTTP endpoint's client loads no CA bundle (aiobotocore otherwise does, for every
    client); any other keeps botocore's default, verification against its bundle. Read from
    aiobotocore's HTTP session (its private ``_verify``: the value create_client was given, or
    botocore's default path), before any request is made."""
    use_fake_credentials()

    async def verify() -> object:
        async with aws.async_client("sqs", Settings(endpoint_url=endpoint)) as sqs:
            return sqs._endpoint.http_session._verify  # type: ignore[attr-defined]

    assert bool(asyncio.run(verify())) is verified
