"""The conversion child hands the worker the pages as the JSON bytes it uploads."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pagefleet.chunk_results import encode
from pagefleet.models import ChunkResult, ChunkSpec
from pagefleet.settings import Settings
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
