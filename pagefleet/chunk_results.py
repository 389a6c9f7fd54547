"""Chunk results: the one place that writes ``jobs/<id>/results/<index>.result.json``.

Three parts write them: the worker (a converted, finally failed or split chunk), the splitter
(a page range no PDF library can copy) and the dead-letter handler (a chunk whose message gave
up). They agree through this module on the bytes and on the one rule that makes racing writers
safe: a result that converted overwrites whatever is there (a twin delivery writes the same
pages, so the last write wins), a failure or a split is written only where nothing is
(``If-None-Match: *``), so it never hides a result another runner got right. The result's S3
event then runs completion.

A split (:func:`split_result`) is written only once its halves' messages are sent, so a split
result in the bucket means its halves are on their way (:func:`was_split`).
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pydantic_core

from pagefleet import keys
from pagefleet.errors import ErrorCode
from pagefleet.models import ChunkMessage, ChunkResult, ChunkSpec, ErrorInfo
from pagefleet.storage import AsyncBucket, Bucket, NotFound, PreconditionFailed

__all__ = [
    "INLINE_ASSETS",
    "ResultWrite",
    "dead_letter_result",
    "decode_inline",
    "encode",
    "failed_result",
    "inlined",
    "result_write",
    "split_result",
    "was_split",
    "write_result",
    "write_result_async",
]

log = logging.getLogger(__name__)

CONTENT_TYPE = "application/json"


# A converted chunk's images travel inside its result, under this field (name -> bytes as
# base64), not as objects of their own under jobs/<id>/assets/ (``ChunkResult.assets`` names
# those): the runner saves a PUT per image, and the completion, which reads the result anyway,
# writes them to the outbox with the one request per image a copy inside S3 would have taken.
# The outbox gets the same objects either way. A chunk's images go in smallest first while its
# budget lasts: each saves a request whatever its size, so the budget goes furthest that way.
# Those past it are stored and copied as before, so a result (and what the completion holds of
# a job) grows by at most the budget a chunk. On the shared corpus 267 of a round's 270 images
# go in (246 while each was also held to 64 kB).
INLINE_ASSETS = "inline_assets"
INLINE_CHUNK_BYTES = 1024 * 1024


def inlined(sizes: Mapping[str, int]) -> set[str]:
    """Which of a chunk's images (name -> bytes) travel inside its result: the smallest first
    (by name among equals: the same every time), while the chunk's budget lasts."""
    chosen: set[str] = set()
    left = INLINE_CHUNK_BYTES
    for name in sorted(sizes, key=lambda n: (sizes[n], n)):
        if sizes[name] > left:
            break  # the rest are no smaller
        chosen.add(name)
        left -= sizes[name]
    return chosen


def encode(
    result: ChunkResult, pages_json: bytes = b"[]", inline: Mapping[str, bytes] | None = None
) -> bytes:
    """``result`` as JSON with ``pages_json`` (the conversion child's bytes) as its pages,
    spliced in unparsed: the worker never validates, copies or re-serialises them; and the
    images ``inline`` holds (see :data:`INLINE_ASSETS`)."""
    head = result.model_dump_json(exclude_none=True, exclude={"pages", INLINE_ASSETS}).encode()
    tail = b',"pages":' + pages_json
    if inline:
        images = {name: base64.b64encode(data).decode() for name, data in inline.items()}
        tail += f',"{INLINE_ASSETS}":'.encode() + json.dumps(images).encode()
    return head[:-1] + tail + b"}"


def decode_inline(raw: dict[str, Any]) -> dict[str, bytes]:
    """The images a parsed result carries (:data:`INLINE_ASSETS`), taken out of ``raw``."""
    return {name: base64.b64decode(data) for name, data in raw.pop(INLINE_ASSETS, {}).items()}


@dataclass(frozen=True, slots=True)
class ResultWrite:
    """One result's PUT: where, what, and whether it may only create the key."""

    key: str
    body: bytes
    only_if_absent: bool


def result_write(
    result: ChunkResult, pages_json: bytes = b"[]", inline: Mapping[str, bytes] | None = None
) -> ResultWrite:
    return ResultWrite(
        key=keys.chunk_result(result.job_id, result.chunk.index),
        body=encode(result, pages_json, inline),
        only_if_absent=result.status != "done",
    )


def write_result(bucket: Bucket, result: ChunkResult, pages_json: bytes = b"[]") -> None:
    """Write ``result`` by the rule above."""
    write = result_write(result, pages_json)
    with _keeping_a_result_there(write):
        bucket.put(
            write.key, write.body, content_type=CONTENT_TYPE, if_none_match=write.only_if_absent
        )


async def write_result_async(
    bucket: AsyncBucket,
    result: ChunkResult,
    pages_json: bytes = b"[]",
    inline: Mapping[str, bytes] | None = None,
) -> None:
    """:func:`write_result` through the runner's aiobotocore bucket, with the images ``inline``
    holds (see :data:`INLINE_ASSETS`)."""
    write = result_write(result, pages_json, inline)
    with _keeping_a_result_there(write):
        await bucket.put(
            write.key, write.body, content_type=CONTENT_TYPE, if_none_match=write.only_if_absent
        )


@contextmanager
def _keeping_a_result_there(write: ResultWrite) -> Iterator[None]:
    try:
        yield
    except PreconditionFailed:  # only a failure's write is conditional
        log.info("chunk %s already has a result; keeping it", write.key)


def failed_result(job_id: str, chunk: ChunkSpec, error: ErrorInfo, *, attempts: int) -> ChunkResult:
    """A failure recorded by a part that converted nothing (the splitter, the DLQ handler)."""
    return ChunkResult(
        job_id=job_id,
        chunk=chunk,
        status="failed",
        attempts=attempts,
        converter="none",
        converter_version="",
        error=error,
        finished_at=time.time(),
    )


def split_result(failed: ChunkResult, halves: Sequence[ChunkSpec]) -> ChunkResult:
    """``failed`` (a chunk that failed on resources) as the split into ``halves``."""
    return ChunkResult.model_validate(
        {**failed.model_dump(), "status": "split", "halves": [h.model_dump() for h in halves]}
    )


async def was_split(bucket: AsyncBucket, job_id: str, chunk: ChunkSpec) -> bool:
    """Whether ``chunk`` has a split result, so its halves were sent (see above). A redelivery
    asks, to spare converting the chunk again; an answer that tells nothing is a no, and the
    chunk converts as any other: a missing key, or one S3 forbids where the role may not list
    the bucket (a 403 for a missing key), or any other refusal."""
    key = keys.chunk_result(job_id, chunk.index)
    try:
        body = await bucket.get(key)
    except NotFound:
        return False
    except Exception as exc:
        log.info("could not tell whether %s was split (%s); it converts", key, exc)
        return False
    status: object = pydantic_core.from_json(body).get("status")
    return status == "split"


def dead_letter_result(message: ChunkMessage, receive_count: int) -> ChunkResult:
    """A chunk whose message reached the DLQ, so its job still ends (design rule 3)."""
    error = ErrorInfo(
        code=ErrorCode.DEAD_LETTER,
        # The DLQ says how often the message was received, not by whom: a runner that died or
        # hung on it, or any other consumer of the queue.
        message=f"the chunk's message was received {receive_count} times without a result "
        "and moved to the dead-letter queue",
    )
    return failed_result(message.job_id, message.chunk, error, attempts=receive_count)
