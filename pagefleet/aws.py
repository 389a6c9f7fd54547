"""Clients for S3 and SQS, sync (boto3) and async (aiobotocore), and the one retry policy.

Retries are tenacity's, on throttling, 5xx and dropped connections only: ``ATTEMPTS`` HTTP
attempts per call, no more. botocore's own retry loop is switched off (``total_max_attempts``
1: its ``max_attempts`` counts retries in the legacy way, so 1 there still means 2 requests)
so that there is exactly one policy to reason about.
"""

from __future__ import annotations

import os
from typing import Any

from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError
from tenacity import (
    retry,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from pagefleet.settings import Settings

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

transient_retry = retry(
    retry=retry_if_exception(is_transient),
    wait=wait_exponential_jitter(initial=0.1, max=5),
    stop=stop_after_attempt(ATTEMPTS),
    reraise=True,
)


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


def _client_kwargs(settings: Settings) -> dict[str, Any]:
    return {
        "region_name": settings.region,
        "endpoint_url": settings.endpoint_url,
        "config": Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            max_pool_connections=32,
            s3={"addressing_style": "path"},
        ),
    }


def client(service: str, settings: Settings) -> Any:
    """A boto3 client for ``service`` ("s3" or "sqs") at the configured endpoint."""
    import boto3  # not at the top: the runner's workers use aiobotocore only (boto3 ~0.1 s)

    return boto3.session.Session().client(service, **_client_kwargs(settings))  # type: ignore[call-overload]


def async_client(service: str, settings: Settings) -> Any:
    """An aiobotocore client context manager (``async with async_client(...) as s3``)."""
    from aiobotocore.session import get_session  # the runner's; the Lambda package lacks it

    return get_session().create_client(service, **_client_kwargs(settings))
