"""Assembly: a job's chunk results in page order become one Markdown document and its record.

A chunk result is read once, when it lands (:meth:`LandedChunk.parse`): its own fields are
validated, its pages stay the plain JSON the runner wrote, which is what the renderer reads.
As results land, :func:`prepare` has the renderer count each new chunk's statistics and write
the chunks in hand against the document as known so far; at the end :func:`render_markdown`
merges the statistics into the document's analysis (rule 5: what needs the whole document is
decided once, for the whole document), rewrites only the chunks it changed, and stitches the
boundaries. The end's work is then the last chunk's share, not the whole document's.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from typing import Any, cast

import pydantic_core

from pagefleet import keys, marker_assembly
from pagefleet.chunk_results import decode_inline
from pagefleet.errors import ErrorCode
from pagefleet.layout import ChunkLayout, render_chunks, write_chunks
from pagefleet.layout.schema import OutlineEntry, Page
from pagefleet.models import (
    ChunkRecord,
    ChunkResult,
    ErrorInfo,
    JobManifest,
    JobRecord,
    JobStatus,
    StageTimings,
)

# One page of a chunk result as the runner wrote it: PageContent's JSON, not validated again.
PageJson = dict[str, Any]


@dataclass
class LandedChunk:
    """A chunk result read for assembly: ``result`` without its pages, and the pages."""

    result: ChunkResult
    pages: list[PageJson]
    size: int  # bytes of the result as stored
    # Images that came inside the result (pagefleet/chunk_results.py, INLINE_ASSETS), by name.
    inline_assets: dict[str, bytes] = field(default_factory=dict)
    # The pages for the renderer, with what it has worked out of them so far (see layout()).
    _layout: ChunkLayout | None = field(default=None, compare=False, repr=False)

    def layout(self, outline: list[dict[str, Any]]) -> ChunkLayout | None:
        """The chunk's pages for the renderer, made once per outline (a job has one); None
        when a page has no layout (a converter that writes Markdown only)."""
        if not all(p.get("layout") is not None for p in self.pages):
            return None
        if self._layout is None or self._layout.outline != outline:
            # Layouts and the outline are plain JSON dicts; they are the Page and OutlineEntry
            # dicts the text-layer converter and the splitter wrote, read back as they were,
            # and take the layout schema's types again here, at the one place they are read.
            self._layout = ChunkLayout.of(
                [cast(Page, p["layout"]) for p in self.pages], cast(list[OutlineEntry], outline)
            )
        return self._layout

    @classmethod
    def parse(cls, body: bytes) -> LandedChunk:
        """One JSON parse; the pages are not validated into models and dumped back (they were
        validated when the runner made them) — 1.3 MB of layouts per 400 pages."""
        raw = pydantic_core.from_json(body)
        pages = raw.pop("pages", [])
        inline = decode_inline(raw)
        return cls(ChunkResult.model_validate(raw), pages, len(body), inline)

    @classmethod
    def of(cls, result: ChunkResult) -> LandedChunk:
        """A result already in hand as a model (tests, tools)."""
        pages = [p.model_dump(exclude_none=True) for p in result.pages]
        return cls(result.model_copy(update={"pages": []}), pages, 0)


def prepare(manifest: JobManifest, chunks: Sequence[LandedChunk]) -> None:
    """Called while a job's results land: the renderer counts the new chunks' statistics and
    writes the chunks in hand against the document as known so far (a forecast the end checks
    chunk by chunk), so that little is left to do when the last result lands."""
    ordered = _in_page_order(chunks)
    layouts = [
        layout
        for c in ordered
        if c.result.status == "done" and (layout := c.layout(manifest.outline)) is not None
    ]
    if layouts:
        write_chunks(layouts, manifest.pages)


def _render(run: Sequence[LandedChunk], outline: list[dict[str, Any]]) -> str:
    """A run of chunks whose pages carry layouts is rendered as one document, so document-wide
    decisions (headings, running headers, paragraphs across page breaks) are made once, over
    all of it (rule 5)."""
    layouts = [c.layout(outline) for c in run]
    if all(layout is not None for layout in layouts):
        return render_chunks([layout for layout in layouts if layout is not None])
    if all(p.get("structure") is not None for c in run for p in c.pages):
        return marker_assembly.render([c.pages for c in run])
    pages = [page for c in run for page in c.pages]
    return "\n\n".join((p.get("markdown") or "").strip() for p in pages).strip() + "\n"


def _gap_note(failed: Sequence[ChunkResult]) -> str:
    first, last = failed[0].chunk.first_page, failed[-1].chunk.last_page
    span = f"page {first}" if first == last else f"pages {first}–{last}"
    reasons = "; ".join(sorted({f"{r.error.code}: {r.error.message}" for r in failed if r.error}))
    return f"> **pagefleet:** {span} could not be converted ({reasons}).\n"


def _in_page_order(chunks: Sequence[LandedChunk]) -> list[LandedChunk]:
    """A job's converted and failed chunks (a split chunk's halves in its place) by page."""
    return sorted(chunks, key=lambda c: c.result.chunk.first_page)


# An image link as the converters write one: ``](`` + keys.ASSET_LINK_PREFIX + name + ``)``.
_ASSET_LINK = re.compile(re.escape("](" + keys.ASSET_LINK_PREFIX) + r"([^)]+)\)")


def linked_assets(markdown: str) -> set[str]:
    """The names of the assets ``markdown`` (:func:`render_markdown`'s) links to. A converter
    writes every picture of its chunk; the renderer may leave some out (a logo on every slide
    is furniture, as a running header is), and those are no part of the document."""
    return set(_ASSET_LINK.findall(markdown))


def render_markdown(manifest: JobManifest, chunks: Sequence[LandedChunk]) -> str:
    """The document in page order; a run of failed chunks becomes a note naming its pages. Its
    links to images keep ``keys.ASSET_LINK_PREFIX``: publishing knows the assets folder."""
    ordered = _in_page_order(chunks)
    parts = [
        _render(run, manifest.outline) if ok else _gap_note([c.result for c in run])
        for ok, group in groupby(ordered, key=lambda c: c.result.status == "done")
        if (run := list(group))
    ]
    return "\n".join(p for p in parts if p.strip())


def _epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _chunk_records(manifest: JobManifest, results: Sequence[ChunkResult]) -> list[ChunkRecord]:
    """One entry per page range that converted or failed, in page order. The failed ranges a
    split chunk leaves side by side, failed for one reason, are one entry: the record names the
    lost pages exactly without a line per page where a whole chunk failed."""
    planned = len(manifest.chunks)

    def entry(r: ChunkResult) -> tuple[int, ErrorCode | None]:
        if r.status == "failed" and r.error is not None:
            return r.chunk.planned_index(planned), r.error.code
        return r.chunk.index, None  # an entry of its own

    records = []
    for _, group in groupby(results, key=entry):
        run = list(group)
        records.append(
            ChunkRecord(
                index=run[0].chunk.index,
                first_page=run[0].chunk.first_page,
                last_page=run[-1].chunk.last_page,
                status="done" if run[0].status == "done" else "failed",
                attempts=max(r.attempts for r in run),
                seconds=round(sum(r.convert_s for r in run), 3),
                estimated_s=round(sum(r.chunk.estimated_s for r in run), 4) or None,
                error=run[0].error,
            )
        )
    return records


def job_record(
    manifest: JobManifest,
    chunks: Sequence[LandedChunk],
    assemble_s: float,
    splits: Sequence[ChunkResult] = (),
) -> JobRecord:
    """The record of a job whose chunks (``splits``: those split in halves, whose halves are
    among ``chunks``) all have results."""
    landed = _in_page_order(chunks)
    ordered = [c.result for c in landed]
    done = [r for r in ordered if r.status == "done"]
    status: JobStatus = "done" if len(done) == len(ordered) else "partial" if done else "failed"
    finished = time.time()
    uploaded = _epoch(manifest.source.event_time) or manifest.created_at
    converted = done[0] if done else ordered[0]
    return JobRecord(
        status=status,
        job_id=manifest.job_id,
        source=manifest.source,
        pages=manifest.pages,
        chunks=_chunk_records(manifest, ordered),
        converter=converted.converter,
        converter_version=converted.converter_version,
        ocr_pages=[
            page["number"]
            for c in landed
            if c.result.status == "done"
            for page in c.pages
            if page.get("ocr")
        ],
        markdown=keys.outbox_markdown(manifest.rel) if done else None,
        plan=manifest.plan,
        timings=StageTimings(
            split_s=round(manifest.split_s, 4),
            queue_wait_s=round(max(r.queue_wait_s for r in ordered), 4),
            # The conversions a split ended count too: they took the fleet's time.
            convert_s=round(sum(r.convert_s for r in [*ordered, *splits]), 4),
            result_upload_s=round(sum(r.upload_s for r in ordered), 4),
            assemble_s=round(assemble_s, 4),
            total_s=round(finished - uploaded, 4),
        ),
        error=None
        if done
        else ErrorInfo(
            code=ErrorCode.ALL_CHUNKS_FAILED,
            message="no chunk could be converted: "
            + "; ".join(sorted({f"{r.error.code}" for r in ordered if r.error})),
        ),
        finished_at=finished,
    )
