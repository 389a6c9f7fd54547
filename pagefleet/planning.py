"""Chunk planning: contiguous, balanced page ranges."""

from __future__ import annotations

from pagefleet.models import ChunkSpec


def plan_chunks(pages: int, target_pages: int) -> list[ChunkSpec]:
    """Split ``pages`` into ceil(pages / target) ranges whose sizes differ by at most one.

    Balanced rather than "target, target, ..., remainder": a 33-page document with a target of
    16 becomes 11+11+11, not 16+16+1, so no chunk is a straggler that holds the job back.
    """
    if pages < 1:
        raise ValueError("a document to plan has at least one page")
    count = -(-pages // target_pages)
    base, extra = divmod(pages, count)
    chunks, first = [], 1
    for index in range(count):
        size = base + (1 if index < extra else 0)
        chunks.append(ChunkSpec(index=index, first_page=first, last_page=first + size - 1))
        first += size
    return chunks
