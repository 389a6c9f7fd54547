"""S3 access: the few operations pagefleet needs, with retries and conditional writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, TypedDict

from pagefleet.aws import error_code, status_code, transient_retry

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import HeadObjectOutputTypeDef
    from types_aiobotocore_s3 import S3Client as AsyncS3Client


class PreconditionFailed(Exception):
    """A conditional request lost: the key exists (If-None-Match) or changed (If-Match)."""


class NotFound(Exception):
    """The key does not exist."""


def _is_missing(exc: BaseException, *, can_list: bool) -> bool:
    """Whether a failed read says the key does not exist. S3 says so (404) only to a caller
    allowed s3:ListBucket; to one without, it answers 403 AccessDenied, so as not to tell which
    keys exist. Such a caller (the runner's task role) reads only what its policy lets it, so
    for it a 403 on a read is the missing key. This is the one place that decides."""
    if error_code(exc) in {"NoSuchKey", "404", "NotFound"} or status_code(exc) == 404:
        return True
    return not can_list and (error_code(exc) in {"AccessDenied", "403"} or status_code(exc) == 403)


class _Conditions(TypedDict, total=False):
    """What a PUT or GET may be conditional on (botocore's parameter names)."""

    IfNoneMatch: str
    IfMatch: str


class _Version(_Conditions, total=False):
    VersionId: str


def _write_conditions(if_none_match: bool, if_match: str | None) -> _Conditions:
    if if_none_match:
        return {"IfNoneMatch": "*"}
    return {"IfMatch": if_match} if if_match else {}


def _raise_precondition(exc: BaseException, key: str) -> None:
    if status_code(exc) == 412 or error_code(exc) == "PreconditionFailed":
        raise PreconditionFailed(key) from exc


class Written(NamedTuple):
    """What a PUT made: its ETag, and its version where the bucket keeps versions."""

    etag: str
    version_id: str | None


class Bucket:
    """One bucket through a boto3 S3 client (handlers and the local tools). ``can_list``:
    whether the caller may list the bucket, which decides what a 403 means (see
    :func:`_is_missing`); every Lambda role may."""

    def __init__(self, s3: S3Client, name: str, *, can_list: bool = True) -> None:
        self.s3 = s3
        self.name = name
        self.can_list = can_list

    @transient_retry
    def get(self, key: str, *, if_match: str | None = None, version_id: str | None = None) -> bytes:
        extra: _Version = {}
        if version_id:
            extra["VersionId"] = version_id
        elif if_match:
            extra["IfMatch"] = if_match
        try:
            response = self.s3.get_object(Bucket=self.name, Key=key, **extra)
        except Exception as exc:
            _raise_precondition(exc, key)
            if _is_missing(exc, can_list=self.can_list):
                raise NotFound(key) from exc
            raise
        return response["Body"].read()

    @transient_retry
    def head(self, key: str) -> HeadObjectOutputTypeDef | None:
        try:
            return self.s3.head_object(Bucket=self.name, Key=key)
        except Exception as exc:
            if _is_missing(exc, can_list=self.can_list):
                return None
            raise

    @transient_retry
    def put(
        self,
        key: str,
        body: bytes,
        *,
        content_type: str = "application/octet-stream",
        metadata: dict[str, str] | None = None,
        if_none_match: bool = False,
        if_match: str | None = None,
    ) -> Written:
        """Write ``body``; raise :class:`PreconditionFailed` if a given condition fails."""
        try:
            response = self.s3.put_object(
                Bucket=self.name,
                Key=key,
                Body=body,
                ContentType=content_type,
                Metadata=metadata or {},
                **_write_conditions(if_none_match, if_match),
            )
        except Exception as exc:
            _raise_precondition(exc, key)
            raise
        return Written(response["ETag"], response.get("VersionId"))

    @transient_retry
    def copy(
        self,
        source: str,
        key: str,
        *,
        content_type: str = "application/octet-stream",
        metadata: dict[str, str] | None = None,
        if_none_match: bool = False,
        if_match: str | None = None,
    ) -> Written:
        """Write the object at ``source`` (this bucket) to ``key`` with this content type and
        metadata, inside S3: what a GET and a PUT of it would write, conditions included
        (CopyObject takes ``If-None-Match``/``If-Match`` on the destination as PutObject does,
        botocore's s3 model, CopyObjectRequest). Raise :class:`NotFound` if ``source`` is
        not there, :class:`PreconditionFailed` if a condition fails."""
        try:
            response = self.s3.copy_object(
                Bucket=self.name,
                Key=key,
                CopySource={"Bucket": self.name, "Key": source},
                MetadataDirective="REPLACE",
                ContentType=content_type,
                Metadata=metadata or {},
                **_write_conditions(if_none_match, if_match),
            )
        except Exception as exc:
            _raise_precondition(exc, key)
            if _is_missing(exc, can_list=self.can_list):
                raise NotFound(source) from exc
            raise
        return Written(response["CopyObjectResult"]["ETag"], response.get("VersionId"))

    @transient_retry
    def delete(self, key: str) -> None:
        """Remove ``key`` (a delete marker in a versioned bucket); absent keys are fine."""
        self.s3.delete_object(Bucket=self.name, Key=key)

    def list_keys(self, prefix: str, *, one_level: bool = False) -> list[str]:
        # Not retried itself: list_etags is, and a retry around a retry multiplies attempts.
        return list(self.list_etags(prefix, one_level=one_level))

    @transient_retry
    def list_etags(self, prefix: str, *, one_level: bool = False) -> dict[str, str]:
        """Every key under ``prefix`` with its ETag (which changes when the object does);
        ``one_level``: only the keys with no ``/`` after the prefix (S3 rolls the deeper ones
        up into common prefixes, which are not returned)."""
        found: dict[str, str] = {}
        paginator = self.s3.get_paginator("list_objects_v2")
        pages = (
            paginator.paginate(Bucket=self.name, Prefix=prefix, Delimiter="/")
            if one_level
            else paginator.paginate(Bucket=self.name, Prefix=prefix)
        )
        for page in pages:
            found.update((item["Key"], item["ETag"]) for item in page.get("Contents", []))
        return found


class AsyncBucket:
    """The runner's view of the bucket through an aiobotocore S3 client; ``can_list`` as for
    :class:`Bucket`."""

    def __init__(self, s3: AsyncS3Client, name: str, *, can_list: bool = True) -> None:
        self.s3 = s3
        self.name = name
        self.can_list = can_list

    async def get(self, key: str) -> bytes:
        # Not retried itself: get_tagged is, and a retry around a retry multiplies attempts.
        body, _ = await self.get_tagged(key)
        return body

    @transient_retry
    async def get_tagged(self, key: str) -> tuple[bytes, str]:
        """The object and its ETag, for a write conditional on it (``put(if_match=...)``)."""
        try:
            response = await self.s3.get_object(Bucket=self.name, Key=key)
        except Exception as exc:
            if _is_missing(exc, can_list=self.can_list):
                raise NotFound(key) from exc
            raise
        async with response["Body"] as stream:
            return await stream.read(), response["ETag"]

    @transient_retry
    async def exists(self, key: str) -> bool:
        try:
            await self.s3.head_object(Bucket=self.name, Key=key)
        except Exception as exc:
            if _is_missing(exc, can_list=self.can_list):
                return False
            raise
        return True

    @transient_retry
    async def put(
        self,
        key: str,
        body: bytes,
        *,
        content_type: str = "application/octet-stream",
        if_none_match: bool = False,
        if_match: str | None = None,
    ) -> str:
        """Write ``body``; raise :class:`PreconditionFailed` if a given condition fails."""
        try:
            response = await self.s3.put_object(
                Bucket=self.name,
                Key=key,
                Body=body,
                ContentType=content_type,
                **_write_conditions(if_none_match, if_match),
            )
        except Exception as exc:
            _raise_precondition(exc, key)
            raise
        return response["ETag"]
