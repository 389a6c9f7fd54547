"""Chunk results as a runner writes them, for tests that drive the completion by hand."""

from __future__ import annotations

from pagefleet.models import ChunkResult, ChunkSpec, PageContent


def done_result(job_id: str, chunk: ChunkSpec) -> ChunkResult:
    """A converted chunk whose every page reads "Page N."."""
    pages = [
        PageContent(number=n, markdown=f"Page {n}.")
        for n in range(chunk.first_page, chunk.last_page + 1)
    ]
    return ChunkResult(
        job_id=job_id,
        chunk=chunk,
        status="done",
        attempts=1,
        converter="test",
        converter_version="1",
        pages=pages,
        convert_s=1.0,
    )
