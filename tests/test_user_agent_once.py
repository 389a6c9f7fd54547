"""Every client builds each distinct User-Agent once and sends what botocore would
(pagefleet.aws.user_agent_once): the worker's aiobotocore clients and the boto3 ones."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.useragent import UserAgentString

from embedded.provision import create_stack
from pagefleet import aws
from pagefleet.aws import async_client
from pagefleet.queues import AsyncQueue, Queue, queue_name
from pagefleet.settings import Settings
from pagefleet.storage import AsyncBucket, Bucket


def _recording(client: Any, sent: list[str]) -> None:
    """Record the User-Agent of every request ``client`` sends, as it goes on the wire."""

    def record(request: Any, **_: Any) -> None:
        sent.append(request.headers["User-Agent"])

    client.meta.events.register_last("before-send", record)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A count of the User-Agent strings botocore builds from here on (each ``to_string``).
    Patched on the class: a client's memo (``user_agent_once``) keeps the method it found."""
    count = [0]
    build = UserAgentString.to_string

    def counted(self: UserAgentString) -> str:
        count[0] += 1
        return build(self)

    monkeypatch.setattr(UserAgentString, "to_string", counted)
    return count


def _plain_async(service: str, settings: Settings) -> Any:
    """An aiobotocore client made as aws.async_client makes it, but for the memo."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session

    return aws._prepared(get_session()).create_client(
        service,
        region_name=settings.region,
        endpoint_url=settings.endpoint_url,
        config=aws._config(AioConfig),
    )


async def _the_worker_requests(
    settings: Settings, once: bool, builds: list[int]
) -> tuple[list[str], list[int]]:
    """The requests of a chunk (send, receive, conditional PUT, GET, PUT), three times over; the
    headers sent, and the strings built so far after each time."""
    sent: list[str] = []
    made = async_client if once else _plain_async
    async with made("s3", settings) as s3, made("sqs", settings) as sqs:
        start = builds[0]  # the requests' builds, not the clients' own as they are made
        _recording(s3, sent)
        _recording(sqs, sent)
        queue = await AsyncQueue.named(sqs, queue_name(settings.queue_prefix, "chunks"))
        bucket = AsyncBucket(s3, settings.bucket)
        built: list[int] = []
        for index in range(3):
            await queue.send('{"not": "a chunk"}')
            await queue.receive(wait_s=0, visibility_s=30)
            await bucket.put(f"counter-{once}-{index}", b"1", if_none_match=True)
            await bucket.get_tagged(f"counter-{once}-{index}")
            await bucket.put(f"result-{once}-{index}", b"{}" * 1000)
            built.append(builds[0] - start)
        return sent, built


async def test_each_distinct_user_agent_is_built_once(
    settings: Settings, builds: list[int]
) -> None:
    create_stack(settings)
    plain, plain_builds = await _the_worker_requests(settings, once=False, builds=builds)
    once, once_builds = await _the_worker_requests(settings, once=True, builds=builds)
    assert once == plain  # request by request, the header botocore builds
    assert len(set(plain)) > 1  # the feature ids differ by request: they are in the key
    assert plain_builds[-1] == 2 * len(plain)  # botocore: twice a request
    assert once_builds[0] < plain_builds[0] / 2
    assert once_builds[2] == once_builds[0]  # the same requests again: none built


def _the_handlers_requests(s3: Any, sqs: Any, settings: Settings, name: str) -> list[str]:
    """A publish's requests (conditional PUT, HEAD, LIST) and a send, twice; headers sent."""
    sent: list[str] = []
    _recording(s3, sent)
    _recording(sqs, sent)
    bucket = Bucket(s3, settings.bucket)
    queue = Queue.named(sqs, queue_name(settings.queue_prefix, "chunks"))
    for index in range(2):
        bucket.put(f"{name}/{index}", b"x", if_none_match=True)
        bucket.head(f"{name}/{index}")
        bucket.list_keys(f"{name}/")
        queue.send_all(['{"not": "a chunk"}'])
    return sent


def test_boto3_clients_send_botocore_s_headers_building_each_once(
    settings: Settings, builds: list[int]
) -> None:
    create_stack(settings)
    session = aws._session(aws._aws_environment())  # the one aws.client makes its clients from

    def made(service: str) -> Any:  # as aws.client makes it, but for the memo
        return session.client(
            service,
            region_name=settings.region,
            endpoint_url=settings.endpoint_url,
            config=aws._config(aws.Config),
        )

    plain = _the_handlers_requests(made("s3"), made("sqs"), settings, "plain")
    builds[0] = 0
    s3, sqs = aws.client("s3", settings), aws.client("sqs", settings)
    once = _the_handlers_requests(s3, sqs, settings, "once")
    assert once == plain  # request by request, the header botocore builds
    # Botocore builds twice a request, the second time with the features the request has
    # gained since: at most two strings a header, where it built two a request.
    assert 0 < builds[0] <= 2 * len(set(once)) < len(once)
