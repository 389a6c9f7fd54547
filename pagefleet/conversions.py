"""How many times a chunk has been converted: the ``attempts`` of its result and of the record.

SQS's ApproximateReceiveCount counts deliveries, not conversions: a chunk released unconverted
(on drain) or received again after a lease that lapsed while its worker was still downloading
is delivered again without a conversion, and two workers that hold one chunk after a lapse each
convert it under a count of their own. So each conversion counts itself, as it starts, in
``jobs/<id>/conversions/<index>.json``, with conditional writes: two conversions that start at
once both count. The worker's result carries what the counter says when the result is written.

The counter is created with ``If-None-Match: *`` before anything reads it, and read only after a
write to it lost a race or by a conversion that has counted itself, so a worker hardly ever GETs
a counter that is not there (the runner's role, without ListBucket, sees a 403 where nothing is).
"""

from __future__ import annotations

import json
import logging

from pagefleet import keys
from pagefleet.aws import error_code
from pagefleet.storage import AsyncBucket, NotFound, PreconditionFailed

log = logging.getLogger(__name__)

# Conversions of one chunk that start within one round trip of each other: a lapsed lease
# makes two, a lapse on top of that three. A counter lost to more gives up counting, not the
# conversion.
MAX_RACES = 8
CONTENT_TYPE = "application/json"


def _encode(count: int) -> bytes:
    return json.dumps({"conversions": count}).encode()


def _decode(body: bytes) -> int:
    try:
        count = json.loads(body)["conversions"]
    except (ValueError, KeyError, TypeError):
        return 0  # not a counter this code wrote: counting starts again
    return count if isinstance(count, int) and count >= 0 else 0


async def count_conversion(bucket: AsyncBucket, job_id: str, index: int) -> int:
    """Count one more conversion of chunk ``index``; returns the count, this one included."""
    key = keys.chunk_conversions(job_id, index)
    etag: str | None = None  # the counter as last read; None: create it
    count = 1
    for _ in range(MAX_RACES):
        try:
            if etag is None:
                await bucket.put(key, _encode(1), content_type=CONTENT_TYPE, if_none_match=True)
            else:
                await bucket.put(key, _encode(count), content_type=CONTENT_TYPE, if_match=etag)
            return count
        except Exception as exc:
            if not _lost_race(exc):
                raise
        try:
            body, etag = await bucket.get_tagged(key)
        except NotFound:
            etag, count = None, 1  # the write it raced did not land after all
            continue
        count = _decode(body) + 1
    log.warning(
        "chunk %s/%d: its conversion count lost %d races; counted %d",
        job_id,
        index,
        MAX_RACES,
        count,
    )
    return count


def _lost_race(exc: BaseException) -> bool:
    # The counter exists or changed since it was read (412); or another conditional write to
    # it is under way (S3's 409 ConditionalRequestConflict): read it again and count on.
    return isinstance(exc, PreconditionFailed) or error_code(exc) == "ConditionalRequestConflict"


async def conversions(bucket: AsyncBucket, job_id: str, index: int) -> int:
    """Conversions of chunk ``index`` counted so far, by one that has counted itself and may
    have a twin (ChunkDelivery.first_and_held says where it cannot); 0 once the job's internals
    are gone."""
    try:
        body, _ = await bucket.get_tagged(keys.chunk_conversions(job_id, index))
    except NotFound:
        return 0
    return _decode(body)
