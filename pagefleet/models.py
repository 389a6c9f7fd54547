"""The objects the parts exchange: pydantic models, free of boto and of Lambda.

A job is one upload. The splitter writes its :class:`JobManifest` and one :class:`ChunkMessage`
per page range; a runner writes one :class:`ChunkResult` per chunk; the completion step writes
the :class:`JobRecord` users read next to their Markdown. A chunk that fails on resources is
split: its result names its two halves (:meth:`ChunkSpec.halves`), each a chunk of its own with
a message and a result, down to single pages.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pagefleet.errors import ErrorCode

log = logging.getLogger(__name__)

JobStatus = Literal["done", "partial", "failed"]
ChunkStatus = Literal["done", "failed"]
# A chunk result's status: "split" replaces the chunk by its halves, whose results follow.
ResultStatus = Literal["done", "failed", "split"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ErrorInfo(_Model):
    code: ErrorCode
    message: str


class Source(_Model):
    """One upload of one key. Its identity (not its content) names the job."""

    bucket: str
    key: str
    etag: str
    version_id: str | None = None
    # Tells two uploads of identical bytes apart where the bucket is unversioned.
    sequencer: str | None = None
    event_time: str | None = None
    size: int | None = None

    @property
    def job_id(self) -> str:
        """Same upload -> same id, however often its event arrives (rule 1)."""
        upload = self.version_id or f"{self.etag}/{self.sequencer or self.event_time or ''}"
        digest = hashlib.sha256(f"{self.bucket}\0{self.key}\0{upload}".encode()).hexdigest()
        return digest[:24]


class ChunkSpec(_Model):
    """Pages ``first_page``..``last_page`` (1-based, inclusive) of the source."""

    index: int
    first_page: int
    last_page: int
    # The planner's estimate of the chunk's conversion seconds (0: planned by page count).
    estimated_s: float = 0.0

    @property
    def pages(self) -> int:
        return self.last_page - self.first_page + 1

    def halves(self, chunk_count: int) -> tuple[ChunkSpec, ChunkSpec]:
        """The two chunks this one (of two pages or more) is retried as, in a job of
        ``chunk_count`` planned chunks. The halves of chunk i are chunks chunk_count + 2i and
        chunk_count + 2i + 1: the same however often the chunk is split (rule 1), and never an
        index another chunk of the job has (each index past the plan names one parent)."""
        if self.pages < 2:
            raise ValueError(f"chunk {self.index} is one page: it has no halves")
        middle = self.first_page + self.pages // 2
        per_page = self.estimated_s / self.pages
        first = ChunkSpec(
            index=chunk_count + 2 * self.index,
            first_page=self.first_page,
            last_page=middle - 1,
            estimated_s=round(per_page * (middle - self.first_page), 4),
        )
        second = ChunkSpec(
            index=first.index + 1,
            first_page=middle,
            last_page=self.last_page,
            estimated_s=round(per_page * (self.last_page - middle + 1), 4),
        )
        return first, second

    def planned_index(self, chunk_count: int) -> int:
        """The index of the planned chunk this one is, or was split from (see halves)."""
        index = self.index
        while index >= chunk_count:
            index = (index - chunk_count) // 2
        return index


def chunk_of(planned: Sequence[ChunkSpec], index: int) -> ChunkSpec | None:
    """Chunk ``index`` of a job planned as ``planned``: a planned chunk, or a half of one that
    was split (see :meth:`ChunkSpec.halves`); None for an index no split makes."""
    if 0 <= index < len(planned):
        return planned[index]
    parent = chunk_of(planned, (index - len(planned)) // 2) if index > 0 else None
    if parent is None or parent.pages < 2:
        return None
    return parent.halves(len(planned))[(index - len(planned)) % 2]


class PlanSummary(_Model):
    """How the splitter cut a document: what it estimated, and why the chunks are this size."""

    converter: str
    lanes: int  # conversions the fleet runs at once, as the plan assumed
    target_s: float  # the estimated seconds per chunk it aimed at
    estimated_s: float  # the whole document, summed over its pages
    ocr_pages: list[int] = Field(default_factory=list, description="pages estimated to need OCR")
    measure_s: float = 0.0  # seconds the splitter spent telling the pages' costs


class JobManifest(_Model):
    job_id: str
    rel: str
    source: Source
    pages: int
    chunks: list[ChunkSpec]
    plan: PlanSummary | None = None
    # Bookmarks (title, level, page): chunk PDFs lose them, so the splitter keeps them here.
    outline: list[dict[str, Any]] = Field(default_factory=list)
    created_at: float
    split_s: float


class ChunkMessage(_Model):
    """The body of one message on the chunks queue."""

    job_id: str
    bucket: str
    chunk: ChunkSpec
    chunk_count: int  # the job's planned chunks; a half's message keeps it (ChunkSpec.halves)
    sent_at: float


class PageContent(_Model):
    """One converted page: a layout rendered at assembly (the text layer), or Markdown and the
    structure that assembly makes marker's document-wide decisions again on (marker)."""

    number: int
    markdown: str | None = None
    layout: dict[str, Any] | None = None
    structure: dict[str, Any] | None = None
    ocr: bool = False


class ChunkResult(_Model):
    job_id: str
    chunk: ChunkSpec
    status: ResultStatus
    attempts: int
    converter: str
    converter_version: str
    pages: list[PageContent] = Field(default_factory=list)
    assets: list[str] = Field(default_factory=list, description="names under jobs/<id>/assets/")
    inline_assets: dict[str, str] = Field(
        default_factory=dict,
        description="small images carried in the result itself: base64 by name (chunk_results.py)",
    )
    error: ErrorInfo | None = None  # why it failed, or why it was split
    halves: list[ChunkSpec] = Field(
        default_factory=list, description="a split chunk's two halves, converted in its place"
    )
    queue_wait_s: float = 0.0
    convert_s: float = 0.0
    upload_s: float = 0.0
    finished_at: float = 0.0

    @model_validator(mode="after")
    def _halves_split_the_chunk(self) -> ChunkResult:
        # Completion waits for the halves a split names, and walks down them: two non-empty
        # ranges that cover the chunk's pages lose no page, convert none twice, and shrink.
        if (self.status == "split") != bool(self.halves):
            raise ValueError("a split result names its halves, and no other result does")
        if self.halves:
            pages = [(h.first_page, h.last_page) for h in self.halves]
            first, last = self.chunk.first_page, self.chunk.last_page
            if len(pages) != 2 or not (
                first == pages[0][0] <= pages[0][1] < pages[1][0] <= pages[1][1] == last
                and pages[0][1] + 1 == pages[1][0]
            ):
                raise ValueError(f"halves {pages} do not split pages {first}-{last} in two")
        return self


class ChunkRecord(_Model):
    """A chunk as the job record reports it."""

    index: int
    first_page: int
    last_page: int
    status: ChunkStatus
    attempts: int
    seconds: float
    estimated_s: float | None = None  # the plan's estimate of ``seconds``
    error: ErrorInfo | None = None


class StageTimings(_Model):
    split_s: float = 0.0
    queue_wait_s: float = 0.0
    convert_s: float = 0.0
    result_upload_s: float = 0.0
    assemble_s: float = 0.0
    total_s: float = 0.0


class JobRecord(_Model):
    """``outbox/<rel>.json``: written last, so its presence means the job is over."""

    status: JobStatus
    job_id: str
    source: Source
    pages: int
    chunks: list[ChunkRecord] = Field(default_factory=list)
    converter: str | None = None
    converter_version: str | None = None
    ocr_pages: list[int] = Field(default_factory=list)
    markdown: str | None = None
    plan: PlanSummary | None = None
    timings: StageTimings = Field(default_factory=StageTimings)
    error: ErrorInfo | None = None
    finished_at: float = 0.0


class ChunkDelivery(_Model):
    """One delivery of a chunks-queue message: the lease's receipt and the parsed body."""

    receipt: str
    message: ChunkMessage
    receive_count: int  # SQS's ApproximateReceiveCount of this message
    # Attempts at the chunk before this message: a released chunk is sent again as a new
    # message (its receive count starts over) that carries them (pagefleet/queues.py).
    prior_attempts: int = 0
    # time.monotonic() as the receive that leased it was sent: its lease began no earlier.
    leased_at: float = float("-inf")

    @property
    def attempts(self) -> int:
        """Which attempt at the chunk this is, releases not counted."""
        return self.prior_attempts + self.receive_count

    def first_and_held(self, lease_s: float) -> bool:
        """Whether this is the chunk's first delivery and its first lease of ``lease_s``
        still holds: SQS hides a message from every other receive for its visibility
        timeout, so no other delivery of it can have begun since. (A standard queue may, on
        rare occasions, deliver a message twice: such a twin's count can go unseen, as one
        counted after a look always could.)"""
        return self.attempts == 1 and time.monotonic() < self.leased_at + lease_s


_Model_T = TypeVar("_Model_T", bound=BaseModel)


def parsed(model: type[_Model_T], key: str, body: bytes) -> _Model_T | None:
    """``body`` (the object at ``key``) as ``model``; None, with a warning, for an object users
    wrote there by hand: the operator's views show the rest (rule 4)."""
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        log.warning("%s is not a %s, left out: %s", key, model.__name__, exc)
        return None
