"""Clients for S3 and SQS, sync (boto3) and async (aiobotocore), EventBridge (boto3), and the
one retry policy.

Retries are tenacity's, on throttling, 5xx and dropped connections only: ``ATTEMPTS`` HTTP
attempts per call, no more. botocore's own retry loop is switched off (``total_max_attempts``
1: its ``max_attempts`` counts retries in the legacy way, so 1 there still means 2 requests)
so that there is exactly one policy to reason about.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast, overload

from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError
from botocore.utils import parse_timestamp
from tenacity import (
    retry,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from pagefleet.settings import Settings

if TYPE_CHECKING:  # the stubs are the dev extra's: mypy reads them, nothing imports them
    import boto3.session
    import botocore.loaders
    import botocore.session
    from aiobotocore.client import AioBaseClient
    from aiobotocore.session import ClientCreatorContext
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_sqs import SQSClient
    from types_aiobotocore_s3 import S3Client as AsyncS3Client
    from types_aiobotocore_sqs import SQSClient as AsyncSQSClient

_THROTTLING = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottled",
    "RequestThrottledException",
    "TooManyRequestsException",
    "SlowDown",
    "RequestLimitExceeded",
    "RequestTimeout",
    "RequestTimeoutException",
    # S3: a concurrent conflicting write to the same key; the write may be repeated.
    "ConditionalRequestConflict",
}


def error_code(exc: BaseException) -> str | None:
    return exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None


def status_code(exc: BaseException) -> int | None:
    if isinstance(exc, ClientError):
        return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return None


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, EndpointConnectionError | ConnectionClosedError):
        return True
    status = status_code(exc)
    return error_code(exc) in _THROTTLING or (status is not None and status >= 500)


ATTEMPTS = 6  # HTTP requests one call may make, the first one included

_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def retrying(
    retryable: Callable[[BaseException], bool], attempts: int = ATTEMPTS
) -> Callable[[_Fn], _Fn]:
    """The one policy's back-off, for a call whose retryable failures ``retryable`` tells
    (a 200 that failed inside, as PutEvents answers), ``attempts`` requests at most."""
    return retry(
        retry=retry_if_exception(retryable),
        wait=wait_exponential_jitter(initial=0.1, max=5),
        stop=stop_after_attempt(attempts),
        reraise=True,
    )


transient_retry = retrying(is_transient)


# moto (and any endpoint of one's own) accepts any credentials; boto3 only needs some to sign.
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def use_fake_credentials() -> None:
    """Credentials for an endpoint that takes any; real ones already in the environment win."""
    for name, value in FAKE_CREDENTIALS.items():
        os.environ.setdefault(name, value)


_Config = TypeVar("_Config", bound=Config)


def _config(kind: type[_Config], app_id: str | None = None) -> _Config:
    """botocore's own retries off (see above), room for the worker's concurrent calls,
    path-style addressing, which any endpoint of one's own (moto) answers, and ``app_id`` in
    the User-Agent (``app/<app_id>``) where a caller says who it is."""
    return kind(
        retries={"total_max_attempts": 1, "mode": "standard"},
        max_pool_connections=32,
        s3={"addressing_style": "path"},
        # botocore has taken it since 1.31; its stubs do not list it yet.
        user_agent_appid=app_id,  # type: ignore[call-arg]
    )


_CLIENT_LOCK = threading.Lock()  # a session is not thread-safe while it builds a client


class EventsClient(Protocol):
    """What pagefleet calls of an EventBridge client: the dev extra has no stubs for it, and
    one call does not need them."""

    def put_events(self, *, Entries: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]: ...


@overload
def client(
    service: Literal["s3"], settings: Settings, *, app_id: str | None = None
) -> S3Client: ...
@overload
def client(
    service: Literal["sqs"], settings: Settings, *, app_id: str | None = None
) -> SQSClient: ...
@overload
def client(
    service: Literal["events"], settings: Settings, *, app_id: str | None = None
) -> EventsClient: ...
def client(
    service: Literal["s3", "sqs", "events"], settings: Settings, *, app_id: str | None = None
) -> S3Client | SQSClient | EventsClient:
    """A boto3 client for ``service`` at the configured endpoint."""
    session, config = _session(_aws_environment()), _config(Config, app_id)
    region, endpoint = settings.region, settings.endpoint_url
    made: S3Client | SQSClient | EventsClient
    with _CLIENT_LOCK:
        if service == "s3":
            made = session.client("s3", region_name=region, endpoint_url=endpoint, config=config)
        elif service == "events":
            events = session.client(
                "events", region_name=region, endpoint_url=endpoint, config=config
            )
            made = cast(EventsClient, events)
        else:
            made = session.client("sqs", region_name=region, endpoint_url=endpoint, config=config)
    return user_agent_once(made)


def _aws_environment() -> tuple[tuple[str, str], ...]:
    """What a session reads its credentials and configuration from, besides files."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_")))


@cache
def _session(environment: tuple[tuple[str, str], ...]) -> boto3.session.Session:
    """One session per set of AWS variables: a client from a built one costs ~0.02 s. Keyed by
    the variables, so a process that changes its credentials (a test signing as another role)
    gets a new one; its service models come from the process's :func:`_data_loader`."""
    import boto3  # not at the top: the runner's workers use aiobotocore only (boto3 ~0.1 s)
    import botocore.session

    return boto3.session.Session(botocore_session=_prepared(botocore.session.Session()))


@cache
def _data_loader(data_path: str | None) -> botocore.loaders.Loader:
    """One botocore data loader per process (per ``AWS_DATA_PATH``) for every session: a
    loader keeps what it has read (``instance_cache``: the list of services, each service
    model and endpoint ruleset, endpoints.json), and a session of its own would read and parse
    them again, ~0.05 CPU s for an S3 and an SQS client. botocore hands the same parsed
    dictionaries to every client of one session anyway; nothing it or boto3 registers changes
    them (no handler listens to ``service-data-loaded``)."""
    import botocore.loaders

    return botocore.loaders.create_loader(data_path)


def warm_data_loader(services: Sequence[str]) -> None:
    """Read into this process's data loader what a client of each of ``services`` reads, by
    making one (explicit credentials and region: nothing is looked up, nothing is sent). A
    process forked after this (a Lambda environment from its template) builds its clients
    from the models read here."""
    import botocore.session

    session = _prepared(botocore.session.Session())
    for service in services:
        session.create_client(
            service,
            region_name="us-east-1",
            aws_access_key_id="warm",
            aws_secret_access_key="warm",
        )


# The timestamps a response holds (Last-Modified, a LIST's LastModified of every key) repeat:
# one object's in every LIST of its folder, and a second's HTTP date in every reply within it.
_TIMESTAMPS_KEPT = 4096


@lru_cache(maxsize=_TIMESTAMPS_KEPT)
def parse_timestamp_once(value: str | float) -> datetime.datetime:
    """botocore's own timestamp parsing (``botocore.utils.parse_timestamp``, its parsers'
    default), each distinct value parsed once: it hands anything that is not a number to
    dateutil's general parser, ~0.1 ms a value. A datetime is immutable, so the one parsed
    value can be given to every response that holds it."""
    # JSON protocols give epoch seconds as numbers, which botocore's stubs leave out.
    parsed: datetime.datetime = parse_timestamp(value)  # type: ignore[arg-type]
    return parsed


_Session = TypeVar("_Session", bound="botocore.session.Session")


def _prepared(session: _Session) -> _Session:
    """``session`` (botocore's or aiobotocore's) reading its service models with the process's
    :func:`_data_loader` (the component botocore would create lazily, session.py
    ``_register_data_loader``), its clients' response parsers taking
    :func:`parse_timestamp_once` (the hook botocore offers for it:
    ``ResponseParserFactory.set_parser_defaults``)."""
    session.register_component(
        "data_loader", _data_loader(session.get_config_variable("data_path"))
    )
    factory = session.get_component("response_parser_factory")
    factory.set_parser_defaults(timestamp_parser=parse_timestamp_once)
    return session


_Client = TypeVar("_Client")


def user_agent_once(client: _Client) -> _Client:
    """``client`` (botocore's or aiobotocore's) building each distinct User-Agent header once.

    botocore 1.43 builds a client's User-Agent twice for every request, in
    ``_convert_to_request_dict`` and again in the ``request-created`` handler it registers last
    (``UserAgentString.rebuild_and_replace_user_agent_handler``, botocore/client.py), each time
    sanitising every component character by character (botocore/useragent.py): 31-96 us of
    CPU a build, against ~1.05 ms for a small request. The string is the same for every
    request of a client but for its ``m/`` component, the feature ids of the request's context
    (``_build_feature_metadata``, the one per-request input of ``UserAgentString.to_string``;
    the rest is fixed when the client is made). So it is built once per set of feature ids,
    and the same header is sent. Both callers go through the creator's ``to_string``
    attribute, which an instance attribute replaces (private names:
    tests/test_user_agent_once.py holds every header to botocore's own)."""
    from botocore.context import get_context

    creator = client._user_agent_creator  # type: ignore[attr-defined]
    build: Callable[[], str] = creator.to_string
    built: dict[frozenset[str], str] = {}  # a handful: a client's requests use few features

    def to_string() -> str:
        context = get_context()
        features = frozenset(context.features) if context is not None else frozenset()
        if (header := built.get(features)) is None:
            header = built[features] = build()
        return header

    creator.to_string = to_string
    return client


@overload
def async_client(
    service: Literal["s3"], settings: Settings
) -> contextlib.AbstractAsyncContextManager[AsyncS3Client]: ...
@overload
def async_client(
    service: Literal["sqs"], settings: Settings
) -> contextlib.AbstractAsyncContextManager[AsyncSQSClient]: ...
def async_client(
    service: Literal["s3", "sqs"], settings: Settings
) -> (
    contextlib.AbstractAsyncContextManager[AsyncS3Client]
    | contextlib.AbstractAsyncContextManager[AsyncSQSClient]
):
    """An aiobotocore client context manager (``async with async_client(...) as s3``), its
    client building each User-Agent once (:func:`user_agent_once`), as :func:`client`'s do."""
    from aiobotocore.config import AioConfig
    from aiobotocore.session import get_session  # the runner's; the Lambda package lacks it

    session, config = _prepared(get_session()), _config(AioConfig)
    region, endpoint = settings.region, settings.endpoint_url
    # An http:// endpoint (the embedded stack's) presents no certificate, yet aiobotocore loads
    # the CA bundle into each client's TLS context all the same: ~35 ms of CPU a client, a
    # worker's start-up. None: botocore's own default (verify against its bundle).
    verify = False if endpoint is not None and endpoint.startswith("http://") else None
    if service == "s3":
        return _once(
            session.create_client(
                "s3", region_name=region, endpoint_url=endpoint, config=config, verify=verify
            )
        )
    return _once(
        session.create_client(
            "sqs", region_name=region, endpoint_url=endpoint, config=config, verify=verify
        )
    )


_AsyncClient = TypeVar("_AsyncClient", bound="AioBaseClient")


@contextlib.asynccontextmanager
async def _once(creating: ClientCreatorContext[_AsyncClient]) -> AsyncIterator[_AsyncClient]:
    async with creating as made:
        yield user_agent_once(made)
