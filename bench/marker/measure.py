"""Drive real marker conversion processes (``runner.conversion.ConversionProcess``, as a worker
does) against the stub servers, and count each process's CPU seconds and memory."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psutil
from pydantic import TypeAdapter

from bench.marker.documents import Chunk
from bench.marker.models import ChunkRun, ProcessRun
from bench.marker.stubs import Servers
from pagefleet.models import PageContent
from pagefleet.settings import Settings
from runner.conversion import ConversionProcess

PAGES = TypeAdapter(list[PageContent])
MB = 1024 * 1024


def cpu_s(proc: psutil.Process) -> float:
    """User + system CPU of the process and of the children it waited for."""
    t = proc.cpu_times()
    return t.user + t.system + t.children_user + t.children_system


def peak_rss_mb(pid: int) -> float:
    """The process's high-water RSS (VmHWM), which a sample after the chunk would miss."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


class Measured:
    """One conversion process and the chunks it converted so far."""

    def __init__(self, settings: Settings) -> None:
        self.process = ConversionProcess(settings)
        self.chunks: list[ChunkRun] = []
        self.start_cpu_s = self.start_wall_s = 0.0
        self._proc: psutil.Process | None = None

    async def start(self) -> None:
        started = time.monotonic()
        await self.process.start()
        self.start_wall_s = time.monotonic() - started
        assert self.process.pid is not None
        self._proc = psutil.Process(self.process.pid)
        self.start_cpu_s = cpu_s(self._proc)

    async def convert(self, chunk: Chunk, assets: Path, warm: bool) -> ChunkRun:
        assert self._proc is not None
        assets.mkdir(parents=True, exist_ok=True)
        before, started = cpu_s(self._proc), time.monotonic()
        pages = PAGES.validate_json(await self.process.convert(chunk.path, 1, assets))
        run = ChunkRun(
            kind=chunk.kind,
            pages=len(pages),
            warm=warm,
            cpu_s=cpu_s(self._proc) - before,
            wall_s=time.monotonic() - started,
            markdown_chars=sum(len(page.markdown or "") for page in pages),
            ocr_pages=sum(page.ocr for page in pages),
            requests={},
        )
        self.chunks.append(run)
        return run

    def finish(self) -> ProcessRun:
        assert self._proc is not None
        memory = self._proc.memory_full_info()
        run = ProcessRun(
            start_cpu_s=self.start_cpu_s,
            start_wall_s=self.start_wall_s,
            threads=self._proc.num_threads(),
            rss_mb=memory.rss / MB,
            pss_mb=memory.pss / MB,
            uss_mb=memory.uss / MB,
            peak_rss_mb=peak_rss_mb(self._proc.pid),
            chunks=self.chunks,
        )
        self.process.stop()
        return run


async def side_by_side(
    settings: Settings,
    workers: int,
    chunks: list[Chunk],
    repeat: int,
    servers: Servers,
    scratch: Path,
) -> list[ProcessRun]:
    """W conversion processes, started one after another, then converting each chunk at once:
    a first untimed-as-warm round of every kind, and ``repeat`` warm rounds."""
    measured = [Measured(settings) for _ in range(workers)]
    try:
        for m in measured:
            await m.start()
        for round_ in range(repeat + 1):
            for chunk in chunks:
                before = servers.requests()
                runs = await asyncio.gather(
                    *(
                        m.convert(chunk, scratch / f"assets-{i}-{round_}-{chunk.kind}", round_ > 0)
                        for i, m in enumerate(measured)
                    )
                )
                after = servers.requests()
                for run in runs:
                    run.requests = {name: after[name] - before[name] for name in after}
        return [m.finish() for m in measured]
    finally:
        for m in measured:
            m.process.stop()
