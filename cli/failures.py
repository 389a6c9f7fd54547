"""What the command says when it cannot do what it was asked: one line with the cause and the
fix, and an exit code a script can branch on (the README's table). ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

from enum import IntEnum

from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
)

from pagefleet.settings import SettingsRefused


class Exit(IntEnum):
    DONE = 0  # everything asked for is done
    FAILED = 1  # a document failed or came out partial, or there is no such document
    USAGE = 2  # the command line, a file it names, or the settings are wrong
    UNREACHABLE = 3  # the stack cannot be reached: endpoint, credentials, bucket, queues
    NOT_YET = 4  # still converting when the command stopped waiting: ask again later
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


class CommandFailed(Exception):
    """The command stops here: ``message`` is the one line the user sees."""

    def __init__(self, exit_code: Exit, message: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message


def usage(message: str) -> CommandFailed:
    return CommandFailed(Exit.USAGE, message)


# Error codes of AWS (and moto) that mean "this is not the stack you think it is".
_MISSING = {
    "NoSuchBucket": "bucket {bucket} does not exist{where}: check --bucket, or --stack",
    "AWS.SimpleQueueService.NonExistentQueue": (
        "a queue of the stack does not exist{where}: check --queue-prefix, or --stack"
    ),
    "QueueDoesNotExist": (
        "a queue of the stack does not exist{where}: check --queue-prefix, or --stack"
    ),
}
_REFUSED = {
    "AccessDenied",
    "AccessDeniedException",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
}


def explain(
    exc: BaseException, *, bucket: str = "", endpoint: str | None = None
) -> CommandFailed | None:
    """``exc`` as the line the user sees; None for a bug (anything unforeseen): it keeps its
    traceback."""
    if isinstance(exc, CommandFailed):
        return exc
    where = f" at {endpoint}" if endpoint else ""
    if isinstance(exc, SettingsRefused):
        return usage(f"settings refused: {exc}")
    if isinstance(exc, EndpointConnectionError):
        fix = (
            "is `pagefleet up` still running there? (`pagefleet up --port N` keeps one endpoint)"
            if endpoint
            else "check the network and --region"
        )
        return CommandFailed(Exit.UNREACHABLE, f"cannot reach {exc.kwargs['endpoint_url']}: {fix}")
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return CommandFailed(
            Exit.UNREACHABLE,
            "no AWS credentials: run `aws configure` (or `aws sso login`), or set AWS_PROFILE, "
            "or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
        )
    if isinstance(exc, NoRegionError):
        return usage("no AWS region: pass --region or --stack, or set AWS_REGION")
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        if code in _MISSING:
            name = str(error.get("BucketName") or bucket or "")
            return CommandFailed(Exit.UNREACHABLE, _MISSING[code].format(bucket=name, where=where))
        if code in _REFUSED:
            return CommandFailed(
                Exit.UNREACHABLE,
                f"AWS refused {exc.operation_name} ({code}: {error.get('Message', '')}): "
                "check the credentials, and that their role may read the stack",
            )
        return CommandFailed(
            Exit.UNREACHABLE, f"{exc.operation_name} failed: {code}: {error.get('Message', '')}"
        )
    return None
