"""A long-lived child process that owns one converter, with a time and a memory budget.

Conversion runs out of the worker's process so its event loop (heartbeats, signals) never
blocks, and so a hostile chunk that hangs, balloons or crashes pdfium takes down only this
child: the worker kills it, records why, and starts a fresh one. The child is reused for every
chunk because building a converter costs more than converting a chunk (docs/DESIGN.md,
"Facts that shape the design").

A converter with model servers (marker's) checks them as the child starts and names any it
found hung and restarted; a chunk that timed out is then converted once more, as the time it
ran out of went to the hung server rather than to the chunk.

The child hands back the pages as the JSON bytes the worker uploads: the worker never
validates, copies or re-serialises them (:func:`pagefleet.chunk_results.encode` splices them
into the result).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import multiprocessing.connection
import os
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import PageContent
from pagefleet.settings import Settings
from runner.converters import ConverterUnavailable, load_converter

log = logging.getLogger("pagefleet.conversion")

_MEMORY_CHECK_S = 0.2
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _serve(conn: multiprocessing.connection.Connection, settings: dict[str, Any]) -> None:
    """The child's loop: build the converter once, then convert what the worker sends."""
    as_json = TypeAdapter(list[PageContent])  # built in the child alone: the worker never parses
    try:
        converter = load_converter(Settings(**settings))
    except ConverterUnavailable as exc:
        conn.send(("unavailable", str(exc)))
        return
    except Exception as exc:  # a model server that never came up, say: the worker says why
        conn.send(("not_started", f"{type(exc).__name__}: {exc}"))
        return
    # What is alive now (the imports, the converter, its models' clients) lives as long as the
    # child: moved out of the collector's sight, so the collections a chunk's allocations set off
    # stop walking it again and again: marker's client CPU per text-layer page -7% in balanced
    # mode, -14% in fast mode; the text-layer converter's -3% (bench/results/
    # 2026-12-05-issue28-session18/). What the child drops is still freed by reference counting;
    # the start-up's own garbage is collected first, or it would stay frozen with the rest.
    gc.collect()
    gc.freeze()
    conn.send(("ready", converter.name, converter.version, list(converter.servers_restarted)))
    while True:
        try:
            pdf_path, first_page, assets_dir = conn.recv()
        except EOFError:
            return  # the worker went away
        try:
            pages = converter.convert(Path(pdf_path), first_page, Path(assets_dir))
            conn.send(("ok", as_json.dump_json(pages, exclude_none=True)))
        except PagefleetError as exc:  # the converter's own verdict keeps its code
            conn.send(("failed", str(exc.code), exc.message))
        except Exception as exc:
            conn.send(("error", f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=5)))


class ConverterNotStarted(RuntimeError):
    """Building the converter raised: the worker exits, and its supervisor starts it again
    after a backoff (a model server may come up meanwhile)."""


def chunk_outcome(reply: tuple[Any, ...]) -> bytes:
    """The pages JSON of the child's reply to a chunk, or the :class:`PagefleetError` it says."""
    if reply[0] == "ok":
        pages_json: bytes = reply[1]
        return pages_json
    if reply[0] == "failed":
        raise PagefleetError(ErrorCode(reply[1]), reply[2])
    raise PagefleetError(ErrorCode.CONVERT_ERROR, reply[1])


@contextlib.contextmanager
def resident_memory(pid: int) -> Iterator[Callable[[], int]]:
    """A reader of process ``pid``'s resident memory in bytes, as psutil's
    ``memory_info().rss``; it raises :class:`ProcessLookupError` once the process is gone.

    Under /proc, the second field (pages) of /proc/<pid>/statm, the file psutil reads
    (psutil/_pslinux.py), read through one descriptor: each read from offset 0 makes the file
    anew (a seq_file), 1.5 us against psutil's 13.7 us of opening, reading and parsing it
    (timed), and the descriptor stays the process's even if its pid is reused. Without /proc,
    psutil."""
    try:
        statm = os.open(f"/proc/{pid}/statm", os.O_RDONLY)
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            raise ProcessLookupError(pid) from None
        yield _psutil_resident(pid)
        return
    try:
        # A zombie reads as 0 pages, a reaped process raises ESRCH (ProcessLookupError).
        yield lambda: int(os.pread(statm, 128, 0).split()[1]) * _PAGE_SIZE
    finally:
        os.close(statm)


def _psutil_resident(pid: int) -> Callable[[], int]:
    import psutil  # only where there is no /proc: the worker does without it otherwise

    def resident() -> int:
        try:
            return int(psutil.Process(pid).memory_info().rss)
        except psutil.NoSuchProcess:
            raise ProcessLookupError(pid) from None

    return resident


class ConversionProcess:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.name = settings.converter
        self.version = ""
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: multiprocessing.connection.Connection | None = None
        self._last_exit: int | None = None
        self.restarted_servers: list[str] = []  # by the latest start
        self.server_restarts: Counter[str] = Counter()  # by every start, per server

    async def start(self) -> None:
        # spawn: a fork of a process holding aiobotocore's sockets and threads is not safe.
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._process = ctx.Process(
            target=_serve,
            args=(child, self.settings.model_dump()),
            daemon=True,
            name="pagefleet-convert",
        )
        self._process.start()
        child.close()
        self._conn = parent
        reply = await self._receive()
        if reply[0] == "unavailable":
            self.stop()
            raise ConverterUnavailable(reply[1])
        if reply[0] != "ready":
            self.stop()
            raise ConverterNotStarted(f"the {self.name} converter failed to start: {reply[1]}")
        _, self.name, self.version, self.restarted_servers = reply
        if self.restarted_servers:
            self.server_restarts.update(self.restarted_servers)
            log.warning(
                "model servers found hung and restarted: %s (restarts so far: %s)",
                ", ".join(self.restarted_servers),
                dict(self.server_restarts),
            )

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    async def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> bytes:
        """Convert one chunk into its pages as JSON (a list of :class:`PageContent`);
        :class:`PagefleetError` (timeout, memory, convert_error, or the converter's own code,
        such as inference_failed) if not."""
        if self._process is None or not self._process.is_alive():
            await self.start()
        try:
            return await self._convert(pdf_path, first_page, assets_dir)
        except PagefleetError as exc:
            # The restart after a timeout found a model server hung: the chunk never had its time.
            if exc.code != ErrorCode.TIMEOUT or not self.restarted_servers:
                raise
        log.warning("a chunk timed out on a hung model server; converting it again")
        return await self._convert(pdf_path, first_page, assets_dir)

    async def _convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> bytes:
        assert self._conn is not None
        self._conn.send((str(pdf_path), first_page, str(assets_dir)))
        watchdog = asyncio.ensure_future(self._watch_memory())
        reply_task = asyncio.ensure_future(self._receive())
        try:
            done, _ = await asyncio.wait(
                {reply_task, watchdog},
                timeout=self.settings.convert_timeout_s,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except asyncio.CancelledError:
            reply_task.cancel()
            await asyncio.gather(reply_task, return_exceptions=True)
            self.stop()  # abandoned mid-chunk (drain deadline): its result is unwanted
            raise
        finally:
            watchdog.cancel()
        if reply_task not in done:
            reply_task.cancel()
            await asyncio.gather(reply_task, return_exceptions=True)
            await self.restart()
            if watchdog in done:
                raise PagefleetError(
                    ErrorCode.MEMORY,
                    f"conversion grew past {self.settings.convert_memory_mb} MB and was stopped",
                )
            raise PagefleetError(
                ErrorCode.TIMEOUT,
                f"conversion ran past {self.settings.convert_timeout_s:g} s and was stopped",
            )
        try:
            reply = reply_task.result()
        except EOFError:
            await self.restart()
            raise PagefleetError(
                ErrorCode.CONVERT_ERROR,
                f"the conversion process died (exit code {self._last_exit})",
            ) from None
        return chunk_outcome(reply)

    async def _receive(self) -> Any:
        """Wait for the child's next message without blocking the event loop."""
        assert self._conn is not None
        conn = self._conn
        loop = asyncio.get_running_loop()
        readable = loop.create_future()
        fd = conn.fileno()  # kept: after a restart the same number may be the new pipe's

        def wake() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(fd, wake)
        try:
            await readable
        finally:
            loop.remove_reader(fd)
        return conn.recv()

    async def _watch_memory(self) -> None:
        """Returns (ends the wait) once the child's RSS passes the budget."""
        limit = self.settings.convert_memory_mb * 1024 * 1024
        try:
            with resident_memory(self.pid or 0) as resident:
                while resident() <= limit:
                    await asyncio.sleep(_MEMORY_CHECK_S)
        except ProcessLookupError:
            await asyncio.Future()  # the reply side reports the death

    async def restart(self) -> None:
        self.stop()
        await self.start()

    def stop(self) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._process.pid or 0, 9)
            self._process.join(5)
            self._last_exit = self._process.exitcode
            self._process = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
