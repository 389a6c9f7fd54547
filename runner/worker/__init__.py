"""One worker: long-poll the chunks queue, convert, write the result, delete the message.

Read top to bottom: :meth:`Worker.run` wraps :meth:`Worker._poll`, one iteration of which
receives a message and hands it to :meth:`Worker._handle`. While a chunk converts, a heartbeat
keeps its message invisible, so another worker takes it only if this one dies (rule 3). Once
converted, its result is written and its message deleted (:meth:`Worker._finish`) while the
loop already takes the next chunk: the converter does not wait on those round trips.

A chunk of two pages or more that fails on resources (time, memory) is not retried whole: its
halves are cut from its PDF, written and sent as chunks of their own, and its result says it was
split (:meth:`Worker._halves`), so a page too costly to convert costs only itself.

Shutdown (SIGTERM): stop taking work; finish what is in hand within ``drain_timeout_s``,
else release it (sent again, costing no attempt) so another worker converts it at once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import tempfile
import time
from pathlib import Path

from pagefleet import keys
from pagefleet.aws import async_client
from pagefleet.chunk_results import inlined, split_result, was_split, write_result_async
from pagefleet.conversions import conversions, count_conversion
from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import ChunkDelivery, ChunkMessage, ChunkResult, ChunkSpec, ErrorInfo
from pagefleet.process_exit import exit_process
from pagefleet.queues import AsyncQueue, queue_name
from pagefleet.settings import Settings
from pagefleet.storage import AsyncBucket, NotFound
from runner.conversion import ConversionProcess, ConverterNotStarted
from runner.converters import ConverterUnavailable
from runner.worker_state import CONFIG_ERROR_EXIT, WorkerState

log = logging.getLogger("pagefleet.worker")

# Failures a smaller chunk may not meet: the chunk is split rather than retried whole.
SPLIT_ON = frozenset({ErrorCode.TIMEOUT, ErrorCode.MEMORY})
# A half and its PDF, cut and waiting to be written and sent.
_Half = tuple[ChunkSpec, bytes]
# The task role may read chunk PDFs, results and manifests, not list the bucket
# (terraform/modules/runners): S3 then answers a missing key 403, which the bucket reads as such.
TASK_ROLE_CAN_LIST = False


class _JobEnded(Exception):
    """The chunk's job has ended and its files are gone."""


class Worker:
    def __init__(self, settings: Settings, state_file: Path | None = None) -> None:
        self.settings = settings
        self.state_file = state_file
        self.conversion = ConversionProcess(settings)
        self.stopping = False
        self.held = 0
        self.chunks_done = 0
        self.pages_done = 0
        self.convert_s = 0.0
        self._current: asyncio.Task[asyncio.Task[None] | None] | None = None
        self._finishing: set[asyncio.Task[None]] = set()

    @property
    def _poll_wait_s(self) -> int:
        return 1 if self.settings.burst else self.settings.poll_wait_s

    # --- lifecycle ---------------------------------------------------------------------------

    async def run(self) -> None:
        await self.conversion.start()  # warm before the first message, not after
        log.info("worker ready: converter %s %s", self.conversion.name, self.conversion.version)
        try:
            async with (
                async_client("s3", self.settings) as s3,
                async_client("sqs", self.settings) as sqs,
            ):
                self.s3 = s3
                self.queue = await AsyncQueue.named(
                    sqs, queue_name(self.settings.queue_prefix, "chunks")
                )
                self._write_state()
                await self._poll()
        finally:
            self.conversion.stop()

    def stop(self) -> None:
        """Stop taking work; drain what is held (SIGTERM)."""
        if self.stopping:
            return
        self.stopping = True
        if self._current is None and not self._finishing:
            # Idle in a long poll: let it end (within poll_wait_s) and release what it brings.
            # Cancelling it could orphan a message SQS already handed out, hidden until its
            # lease ran out.
            return
        loop = asyncio.get_running_loop()
        loop.call_later(self.settings.drain_timeout_s, self._abandon)

    def _abandon(self) -> None:
        in_hand = [*self._finishing, *([self._current] if self._current else [])]
        if in_hand:
            log.warning("drain timeout: releasing the chunks in hand")
        for task in in_hand:
            task.cancel()

    # --- the loop ---------------------------------------------------------------------------

    async def _poll(self) -> None:
        try:
            while not self.stopping:
                deliveries = await self.queue.receive(
                    wait_s=self._poll_wait_s, visibility_s=self.settings.visibility_timeout_s
                )
                self._reap()
                if not deliveries:
                    if self.settings.burst:
                        return
                    continue
                delivery = deliveries[0]
                if self.stopping:
                    await self._release(delivery)  # not ours to start
                    return
                self._current = asyncio.ensure_future(self._handle(delivery))
                try:
                    finishing = await self._current
                except asyncio.CancelledError:
                    return  # the drain deadline passed: _handle released the chunk
                finally:
                    self._current = None
                if finishing is not None:
                    self._finishing.add(finishing)
        finally:
            # Results still being written: their messages are only deleted once they are.
            await asyncio.gather(*self._finishing, return_exceptions=True)
            self._reap()

    def _reap(self) -> None:
        """Forget finished result writes; one that failed stops the worker, as a failure in
        the loop itself would (its message comes back when its lease ends)."""
        for task in [t for t in self._finishing if t.done()]:
            self._finishing.discard(task)
            if not task.cancelled() and (error := task.exception()) is not None:
                raise error

    async def _handle(self, delivery: ChunkDelivery) -> asyncio.Task[None] | None:
        """Convert one chunk; returns the task writing its result and deleting its message
        (None: nothing is left to write)."""
        receipt, chunk_message = delivery.receipt, delivery.message
        attempts = delivery.attempts
        self.held += 1
        self._write_state()
        heartbeat = asyncio.ensure_future(self._heartbeat(receipt))
        bucket = AsyncBucket(self.s3, chunk_message.bucket, can_list=TASK_ROLE_CAN_LIST)
        finishing: asyncio.Task[None] | None = None
        try:
            if attempts > 1 and await was_split(bucket, chunk_message.job_id, chunk_message.chunk):
                # A redelivery of a chunk split already (its lease ran out before the delete):
                # its halves were sent before its split result was written (rule 1).
                log.info("chunk %s was split already; message dropped", chunk_message.chunk.index)
                await self.queue.delete(receipt)
                return None
            try:
                result, pages_json, inline = await self._convert(bucket, chunk_message)
                halves = await self._halves(bucket, chunk_message, result)
            except _JobEnded:
                # A late or repeated delivery: the job finished and its files were removed
                # (the lifecycle rule, the local janitor). Nothing is left to convert or to
                # complete, and keeping the message would only send it to the DLQ.
                log.info(
                    "chunk of job %s: the job has ended; message dropped", chunk_message.job_id
                )
                await self.queue.delete(receipt)
                return None
            if halves:
                result = split_result(result, [half for half, _ in halves])
            elif result.status == "failed" and attempts < self.settings.max_attempts:
                log.warning(
                    "chunk %s/%d attempt %d failed: %s; it will be retried",
                    chunk_message.job_id,
                    chunk_message.chunk.index,
                    attempts,
                    result.error,
                )
                await self.queue.extend(receipt, 0)
                return None
            finishing = asyncio.ensure_future(
                self._finish(bucket, result, pages_json, inline, delivery, heartbeat, halves)
            )
            return finishing
        except asyncio.CancelledError:
            await self._release(delivery)
            raise
        finally:
            if finishing is None:
                heartbeat.cancel()
                self.held -= 1
                self._write_state()

    async def _finish(
        self,
        bucket: AsyncBucket,
        result: ChunkResult,
        pages_json: bytes,
        inline: dict[str, bytes],
        delivery: ChunkDelivery,
        heartbeat: asyncio.Task[None],
        halves: list[_Half],
    ) -> None:
        """Write the result, then delete the message: a result never goes missing (rule 3).
        A split's halves are written and sent first, so a split result never names a half
        that is not on its way. The heartbeat keeps the message until then."""
        try:
            if halves:
                await self._send_halves(bucket, delivery.message, halves)
            if result.attempts and not (
                result.attempts == 1 and delivery.first_and_held(self.settings.visibility_timeout_s)
            ):
                # A twin conversion (after a lapsed lease) may have started since this one did.
                # None can have where this conversion was the chunk's first and its message's
                # first lease still holds: no look needed, a request saved on every chunk.
                counted = await conversions(bucket, result.job_id, result.chunk.index)
                result = result.model_copy(update={"attempts": max(result.attempts, counted)})
            await write_result_async(bucket, result, pages_json, inline)
            await self.queue.delete(delivery.receipt)
            if result.status == "done":
                self.chunks_done += 1
                self.pages_done += delivery.message.chunk.pages
                self.convert_s += result.convert_s
        except asyncio.CancelledError:
            await self._release(delivery)
            raise
        finally:
            heartbeat.cancel()
            self.held -= 1
            self._write_state()

    async def _release(self, delivery: ChunkDelivery) -> None:
        """Hand a chunk in hand back at once, for another worker; it costs no attempt."""
        try:
            await asyncio.shield(self.queue.release(delivery))
        except Exception:
            log.exception("could not release a chunk; it returns when its lease ends")

    async def _convert(
        self, bucket: AsyncBucket, message: ChunkMessage
    ) -> tuple[ChunkResult, bytes, dict[str, bytes]]:
        """The chunk's result (without its pages), its pages as the child's JSON bytes, and
        the images that travel inside the result (pagefleet/chunk_results.py, INLINE_ASSETS;
        the others are stored, and the result names them); its ``attempts`` are the
        conversions of the chunk counted so far (0: none ran)."""
        started = time.time()
        base = dict(
            job_id=message.job_id,
            chunk=message.chunk,
            converter=self.conversion.name,
            converter_version=self.conversion.version,
            queue_wait_s=max(0.0, started - message.sent_at),
        )
        with tempfile.TemporaryDirectory(prefix="pagefleet-chunk-") as tmp:
            pdf_path, assets_dir = Path(tmp) / "chunk.pdf", Path(tmp) / "assets"
            assets_dir.mkdir()
            convert_started = time.perf_counter()
            counted: asyncio.Task[int] | None = None
            try:
                pdf_path.write_bytes(await self._chunk_pdf(bucket, message))
                convert_started = time.perf_counter()  # the download is not conversion
                # Counted as it starts, beside the conversion: its round trips cost no time.
                counted = asyncio.ensure_future(
                    count_conversion(bucket, message.job_id, message.chunk.index)
                )
                pages_json = await self.conversion.convert(
                    pdf_path, message.chunk.first_page, assets_dir
                )
            except PagefleetError as exc:
                failed = ChunkResult(
                    status="failed",
                    error=ErrorInfo(code=exc.code, message=exc.message),
                    attempts=await counted if counted is not None else 0,
                    convert_s=time.perf_counter() - convert_started,
                    finished_at=time.time(),
                    **base,
                )
                return failed, b"[]", {}
            except asyncio.CancelledError:
                if counted is not None:
                    counted.cancel()  # abandoned at the drain deadline; the worker is ending
                raise
            attempts = await counted
            convert_s = time.perf_counter() - convert_started
            upload_started = time.perf_counter()
            files = {p.name: p for p in assets_dir.iterdir()}
            inline_names = inlined({name: path.stat().st_size for name, path in files.items()})
            inline = {name: files[name].read_bytes() for name in sorted(inline_names)}
            assets = sorted(files.keys() - inline_names)
            await asyncio.gather(
                *(
                    bucket.put(keys.job_assets(message.job_id) + name, files[name].read_bytes())
                    for name in assets
                )
            )
        done = ChunkResult(
            status="done",
            attempts=attempts,
            assets=assets,
            convert_s=convert_s,
            upload_s=time.perf_counter() - upload_started,
            finished_at=time.time(),
            **base,
        )
        return done, pages_json, inline

    async def _halves(
        self, bucket: AsyncBucket, message: ChunkMessage, result: ChunkResult
    ) -> list[_Half]:
        """The halves, with their PDFs, of a chunk of two pages or more that failed on
        resources; none for any other result, or when its PDF cannot be cut again (the
        failure then stands, and is retried whole as any other)."""
        chunk = message.chunk
        if result.error is None or result.error.code not in SPLIT_ON or chunk.pages < 2:
            return []
        # pypdfium2 (~10 ms to import) for the rare split alone; the child has it already.
        from pagefleet.pdf import cut_halves

        halves = chunk.halves(message.chunk_count)
        try:
            pdf = await self._chunk_pdf(bucket, message)
            pdfs = await asyncio.to_thread(cut_halves, pdf, chunk, halves)
        except PagefleetError as exc:
            log.warning("chunk %s/%d cannot be split: %s", message.job_id, chunk.index, exc)
            return []
        log.warning(
            "chunk %s/%d (pages %d-%d) failed on %s; split at page %d",
            message.job_id,
            chunk.index,
            chunk.first_page,
            chunk.last_page,
            result.error.code,
            halves[1].first_page,
        )
        return list(zip(halves, pdfs, strict=True))

    async def _send_halves(
        self, bucket: AsyncBucket, message: ChunkMessage, halves: list[_Half]
    ) -> None:
        """Each half as a chunk of its own: its PDF, then its message. Done again by a repeat,
        this writes the same keys and sends the same chunks (a twin's conversion)."""
        await asyncio.gather(
            *(
                bucket.put(
                    keys.chunk_pdf(message.job_id, half.index), pdf, content_type="application/pdf"
                )
                for half, pdf in halves
            )
        )
        sent_at = time.time()
        await asyncio.gather(
            *(
                self.queue.send(
                    message.model_copy(update={"chunk": half, "sent_at": sent_at}).model_dump_json()
                )
                for half, _ in halves
            )
        )

    async def _chunk_pdf(self, bucket: AsyncBucket, message: ChunkMessage) -> bytes:
        key = keys.chunk_pdf(message.job_id, message.chunk.index)
        try:
            return await bucket.get(key)
        except NotFound:
            if not await bucket.exists(keys.manifest(message.job_id)):
                raise _JobEnded from None
            # The job is still open, so it must end with a record saying what went missing.
            raise PagefleetError(
                ErrorCode.CONVERT_ERROR, f"the chunk's PDF {key} is gone from the bucket"
            ) from None

    async def _heartbeat(self, receipt: str) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_s)
            await self.queue.extend(receipt, self.settings.visibility_timeout_s)

    def _write_state(self) -> None:
        """Tell the supervisor what this worker holds and has done."""
        if self.state_file is None:
            return
        WorkerState(
            pid=os.getpid(),
            held=self.held,
            chunks_done=self.chunks_done,
            pages_done=self.pages_done,
            convert_s=round(self.convert_s, 3),
            updated_at=time.time(),
        ).write(self.state_file)


async def run_worker(settings: Settings, state_file: Path | None = None) -> None:
    worker = Worker(settings, state_file)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, worker.stop)
    loop.add_signal_handler(signal.SIGINT, worker.stop)
    await worker.run()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    state = os.environ.get("PAGEFLEET_WORKER_STATE_FILE")
    try:
        asyncio.run(run_worker(Settings(), Path(state) if state else None))
    except ConverterUnavailable as exc:
        # Found before the first receive, so no chunk was taken; the same at every restart.
        log.error("%s", exc)
        raise SystemExit(CONFIG_ERROR_EXIT) from None
    except ConverterNotStarted as exc:
        # A chunk in hand returns when its lease ends; the supervisor starts the worker again
        # after its backoff, by when a model server may have come up.
        log.error("%s", exc)
        raise SystemExit(1) from None
    # Its clients closed and its conversion process stopped: nothing is left for the
    # interpreter's teardown to close, which its supervisor would wait ~0.14 s for.
    exit_process(0)
