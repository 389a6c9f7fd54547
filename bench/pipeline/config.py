"""What one benchmark run measures and where: ``scripts/bench``'s options as one object."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class BenchConfig:
    inputs: list[Path] = field(default_factory=list)
    synthetic: list[int] = field(default_factory=list)
    scans: list[int] = field(default_factory=list)  # image-only synthetic documents, by pages
    xargs: bool = True  # also time `xargs -P W` plain processes over the same files
    cold: int = (
        0  # pairs of a cold `pagefleet run` and `xargs -P W` at each W (bench/pipeline/cold)
    )
    workers: list[int] = field(default_factory=lambda: [1, 2])
    repeat: int = 3
    converter: str = "text-layer"
    chunk_pages: int = 16
    chunk_min_cost_s: float | None = None  # PAGEFLEET_CHUNK_MIN_COST_S; None: its default
    splitter_pages: int = 2000  # the synthetic document the splitter is measured on; 0: none
    endpoint_url: str | None = None
    stack_outputs: Path | None = None
    bucket: str | None = None
    cache_dir: Path = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pagefleet"
    timeout_s: float = 900.0
    sample_interval_s: float = 0.5

    @property
    def deployed(self) -> bool:
        """A stack that already runs, rather than the embedded one."""
        return bool(self.endpoint_url or self.stack_outputs)
