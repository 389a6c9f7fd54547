"""What one marker bench run measured: ``results.json``, which the report renders."""

from __future__ import annotations

import statistics

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkRun(_Model):
    """One chunk converted by one conversion process."""

    kind: str
    pages: int
    warm: bool  # False: the process's first chunk of this kind (marker's lazy imports)
    cpu_s: float  # the conversion process's user + system CPU, its children's included
    wall_s: float
    markdown_chars: int
    ocr_pages: int
    requests: dict[str, int]  # to each stub server, for this chunk (all W processes' when W > 1)

    @property
    def cpu_s_per_page(self) -> float:
        return self.cpu_s / self.pages


class ProcessRun(_Model):
    """One conversion process: its start and every chunk it converted, and its memory after."""

    start_cpu_s: float
    start_wall_s: float
    threads: int
    rss_mb: float
    pss_mb: float
    uss_mb: float
    peak_rss_mb: float
    chunks: list[ChunkRun]


class Case(_Model):
    """One marker mode with W conversion processes converting side by side."""

    mode: str
    workers: int
    convert_threads: int
    inference_parallel: int
    processes: list[ProcessRun]

    def warm(self, kind: str) -> list[ChunkRun]:
        return [c for p in self.processes for c in p.chunks if c.kind == kind and c.warm]

    def cpu_s_per_page(self, kind: str) -> float:
        """The median over warm chunks of CPU seconds per page."""
        return statistics.median(c.cpu_s_per_page for c in self.warm(kind))

    def kinds(self) -> list[str]:
        return list(dict.fromkeys(c.kind for p in self.processes for c in p.chunks))


class Machine(_Model):
    cpus: int
    physical_cores: int | None
    cpu_model: str
    load_average_before: list[float]
    load_average_after: list[float]
    marker_pdf: str
    surya_ocr: str
    torch: str


class MarkerBench(_Model):
    command: str
    date: str
    chunk_pages: int
    repeat: int
    documents: dict[str, str]  # kind -> what it is
    machine: Machine
    cases: list[Case]
