"""The conversion child hands the worker the pages as the JSON bytes it uploads."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from pathlib import Path

import pytest

from pagefleet.chunk_results import encode
from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import ChunkResult, ChunkSpec
from pagefleet.settings import Settings
from runner import conversion
from runner.conversion import ConversionProcess
from runner.converters.text_layer import TextLayerConverter
from tests import layout_pdfs


def test_the_child_s_bytes_are_the_result_s_pages(tmp_path: Path) -> None:
    pdf = layout_pdfs.structured(tmp_path)
    settings = Settings(ocr="off")
    process = ConversionProcess(settings)

    async def convert() -> bytes:
        await process.start()
        try:
            return await process.convert(pdf, 3, tmp_path)
        finally:
            process.stop()

    pages_json = asyncio.run(convert())
    result = ChunkResult(
        job_id="j",
        chunk=ChunkSpec(index=0, first_page=3, last_page=4, estimated_s=0.02),
        status="done",
        attempts=1,
        converter=process.name,
        converter_version=process.version,
        assets=["a.png"],
        convert_s=0.5,
    )
    parsed = ChunkResult.model_validate_json(encode(result, pages_json))
    expected = TextLayerConverter(settings).convert(pdf, 3, tmp_path)
    assert parsed.pages == expected
    assert parsed.model_copy(update={"pages": []}) == result


class _FailingConverter:
    name = "marker"
    version = "2.0.0"
    servers_restarted = ()

    def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> list[object]:
        raise PagefleetError(ErrorCode.INFERENCE_FAILED, "page 12: layout x1")


def test_a_converter_s_own_error_code_reaches_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's loop (run here in-process) sends the converter's PagefleetError with its
    code, so inference_failed is recorded as such, not as convert_error."""
    monkeypatch.setattr(conversion, "load_converter", lambda settings: _FailingConverter())
    worker_end, child_end = multiprocessing.Pipe()
    worker_end.send((str(tmp_path / "chunk.pdf"), 12, str(tmp_path)))
    serving = threading.Thread(target=conversion._serve, args=(child_end, Settings().model_dump()))
    serving.start()
    assert worker_end.recv() == ("ready", "marker", "2.0.0", [])
    reply = worker_end.recv()
    worker_end.close()
    serving.join(5)
    with pytest.raises(PagefleetError) as failed:
        conversion.chunk_outcome(reply)
    assert (failed.value.code, failed.value.message) == (
        ErrorCode.INFERENCE_FAILED,
        "page 12: layout x1",
    )
    with pytest.raises(PagefleetError) as crashed:
        conversion.chunk_outcome(("error", "ValueError: boom", "traceback"))
    assert crashed.value.code == ErrorCode.CONVERT_ERROR


def test_a_converter_that_cannot_be_built_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A converter whose build raises (a model server that never answered its warm-up) ends
    the start with its cause, for the worker's one log line, not an EOFError from a dead
    child."""

    def unbuildable(settings: Settings) -> None:
        raise RuntimeError("ocr_error server did not answer within 300 s")

    monkeypatch.setattr(conversion, "load_converter", unbuildable)
    worker_end, child_end = multiprocessing.Pipe()
    conversion._serve(child_end, Settings().model_dump())
    reply = worker_end.recv()
    assert reply == ("not_started", "RuntimeError: ocr_error server did not answer within 300 s")
