"""Contract test: runner/converters/marker.py against the real marker-pdf 2.0.0 on the CPU.

The real ``PdfConverter`` (pdftext, page rendering, marker's builders, processors and renderer,
surya's clients) converts a generated three-page chunk in a real conversion process
(``runner/conversion.py``), with its model servers replaced by stubs that speak their real
protocols (``tests/marker_stubs.py``). So the page cutting, the asset renaming, the OCR flags,
the OCR concurrency the supervisor hands each worker and the conversion timeout are checked
against what marker really produces and sends. No weights are loaded: the stubs' "models" read
the layout off the page image and answer OCR with a fixed sentence.

It needs marker-pdf and torch (several GB), so it skips in the default environment and runs in
the runner image's environment: ``make marker-contract`` (docker/runner.mk), whose output is
committed under bench/results/.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "marker.converters.pdf",
    reason="marker-pdf is not installed: run `make marker-contract` (the runner image's env)",
)

from pydantic import TypeAdapter

from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import PageContent
from pagefleet.settings import Settings, load_settings
from runner.conversion import ConversionProcess
from runner.converters.base import ASSET_LINK_PREFIX
from runner.gpu import GpuInfo
from runner.worker_plan import (
    SURYA_GPU_VRAM_GB,
    Host,
    RunnerSettings,
    ocr_server_capacity,
    plan_workers,
)
from tests import marker_stubs

LAYOUT_MODEL = "hf://datalab-to/surya_layout2"
OCR_ERROR_MODEL = "s3://ocr_error_detection/2025_02_18"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
SCANS = 3


class Stubs:
    def __init__(self) -> None:
        self.vlm = marker_stubs.vlm_server().start()
        self.layout = marker_stubs.layout_server(LAYOUT_MODEL).start()
        self.ocr_error = marker_stubs.ocr_error_server(OCR_ERROR_MODEL).start()

    @property
    def all(self) -> list[marker_stubs.StubServer]:
        return [self.vlm, self.layout, self.ocr_error]

    def reset(self) -> None:
        for server in self.all:
            server.requests.clear()
            server.max_in_flight = 0
            server.delay_s = 0.0


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    stubs = Stubs()
    font = FONT
    if not font.exists():
        # marker only checks at construction that its font exists (it draws with it in debug
        # output and HTML inputs, neither used here); offline it cannot download its own.
        font = tmp_path_factory.mktemp("font") / "font.ttf"
        font.write_bytes(b"")
    # Conversion processes are spawned, so they inherit this environment: surya's clients
    # attach to the stubs instead of spawning servers, and nothing reaches a model hub.
    env = {
        "FAST_LAYOUT_SERVER_URL": stubs.layout.url,
        "OCR_ERROR_SERVER_URL": stubs.ocr_error.url,
        "SURYA_INFERENCE_BACKEND": "vllm",  # what surya picks on an NVIDIA GPU
        "FONT_PATH": str(font),
        "HF_HUB_OFFLINE": "1",
        "HOME": str(tmp_path_factory.mktemp("home")),  # surya's server sentinels: none here
    }
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    yield stubs
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    for server in stubs.all:
        server.stop()


@pytest.fixture(scope="module")
def chunk_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five pages: a text layer, a text layer with a picture, and three scans (images only)."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    folder = tmp_path_factory.mktemp("pdf")
    picture = folder / "picture.png"
    Image.new("RGB", (400, 300), (200, 40, 40)).save(picture)
    scan = Image.new("RGB", (1240, 1754), "white")
    draw = ImageDraw.Draw(scan)
    for line in range(12):  # twelve "lines of text" that only OCR can read
        draw.rectangle([150, 200 + line * 60, 1000, 225 + line * 60], fill="black")
    scan.save(folder / "scan.png")
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.set_y(50)  # a line near the top edge would be taken for a running header
    pdf.set_font("helvetica", style="B", size=16)
    pdf.cell(text="Chapter one")
    pdf.set_font("helvetica", size=12)
    pdf.ln(14)
    # Leading wider than the font's box: marker reads a page whose text lines overlap their
    # neighbours as a garbled text layer and OCRs it (LineBuilder.check_line_overlaps), which
    # fpdf2's default leading does.
    pdf.multi_cell(w=0, h=7, text="The first page of this chunk has only text. " * 20)
    pdf.add_page()
    pdf.multi_cell(w=0, h=7, text="The second page has a picture below. " * 6)
    pdf.image(str(picture), x=30, y=90, w=120)
    for _ in range(SCANS):
        pdf.add_page()
        pdf.image(str(folder / "scan.png"), x=0, y=0, w=210, h=297)
    path = folder / "chunk.pdf"
    pdf.output(str(path))
    scan_only = FPDF(format="A4")
    scan_only.add_page()
    scan_only.image(str(folder / "scan.png"), x=0, y=0, w=210, h=297)
    scan_only.output(str(folder / "scan.pdf"))
    return path


def marker_settings(stubs: Stubs, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "converter": "marker",
        "marker_inference_url": f"{stubs.vlm.url}/v1",
        "marker_server_startup_timeout_s": 10,
        "convert_timeout_s": 120,
        "convert_memory_mb": 8192,
        **overrides,
    }
    return load_settings(**values)


PAGES = TypeAdapter(list[PageContent])


async def convert(
    settings: Settings, pdf: Path, first_page: int, assets: Path
) -> list[PageContent]:
    process = ConversionProcess(settings)
    try:
        await process.start()
        assert (process.name, process.version) == ("marker", "2.0.0")
        assets.mkdir(parents=True, exist_ok=True)
        return PAGES.validate_json(await process.convert(pdf, first_page, assets))
    finally:
        process.stop()


def test_our_ocr_capacity_table_is_surya_s() -> None:
    from surya.inference.backends.vllm import GPU_VRAM_GB, _gpu_settings

    assert SURYA_GPU_VRAM_GB == GPU_VRAM_GB
    assert {t: ocr_server_capacity(t) for t in GPU_VRAM_GB} == {
        t: _gpu_settings(t)[1] for t in GPU_VRAM_GB
    }


async def test_fast_mode_cuts_pages_renames_assets_and_flags_ocr(
    stubs: Stubs, chunk_pdf: Path, tmp_path: Path
) -> None:
    stubs.reset()
    stubs.vlm.delay_s = 0.2  # long enough for concurrent OCR requests to overlap
    # The concurrency the supervisor gives each of W workers on an L4 host.
    plan = plan_workers(
        marker_settings(stubs, marker_vllm_gpu_type="l4"),
        RunnerSettings(mps="off"),
        _OneGpu(),
        tmp_path / "state",
        Host(cpu_count=8, memory_mb=60000),
    )
    ((_, sizing),) = plan.sizings
    assert sizing.inference_parallel == 8  # 6 workers, 48 requests in flight in all
    parallel = int(plan.specs[0].env["PAGEFLEET_MARKER_INFERENCE_PARALLEL"])
    settings = marker_settings(stubs, marker_mode="fast", marker_inference_parallel=parallel)

    started = time.monotonic()
    pages = await convert(settings, chunk_pdf, 41, tmp_path / "assets")
    convert_s = time.monotonic() - started

    assert [page.number for page in pages] == [41, 42, 43, 44, 45]
    text, picture, *scans = pages
    assert text.ocr is False and picture.ocr is False
    assert (text.markdown or "").startswith("**Chapter one**")  # a bold line of a Text block
    assert "The first page of this chunk has only text." in (text.markdown or "")
    assert marker_stubs.OCR_TEXT not in (text.markdown or "") + (picture.markdown or "")
    # Each scan was OCRed as a whole page through the VLM (its twelve blocks come back as
    # twelve paragraphs), the three requests in flight at once: fewer than `parallel`.
    for scan in scans:
        assert scan.ocr is True
        assert (scan.markdown or "").count(marker_stubs.OCR_TEXT) == 12
    assert len(stubs.vlm.requests) == SCANS
    assert stubs.vlm.max_in_flight == SCANS
    assert stubs.layout.requests and stubs.ocr_error.requests
    # The picture: saved under a document-wide name, linked from its own page only.
    written = sorted(p.name for p in (tmp_path / "assets").iterdir())
    assert len(written) == 1 and written[0].startswith("page-00042-picture-")
    assert f"]({ASSET_LINK_PREFIX}{written[0]})" in (picture.markdown or "")
    assert ASSET_LINK_PREFIX not in (text.markdown or "") + (scans[0].markdown or "")
    print(f"fast mode: {len(pages)} pages in {convert_s:.1f} s, conversion process start included")


async def test_balanced_mode_asks_the_vlm_for_layout_and_ocr(
    stubs: Stubs, chunk_pdf: Path, tmp_path: Path
) -> None:
    from surya.inference.prompts import PROMPT_MAPPING

    stubs.reset()
    stubs.vlm.delay_s = 0.2
    settings = marker_settings(stubs, marker_mode="balanced", marker_inference_parallel=2)
    pages = await convert(settings, chunk_pdf, 1, tmp_path / "assets")

    assert [page.number for page in pages] == [1, 2, 3, 4, 5]
    # PAGEFLEET_MARKER_INFERENCE_PARALLEL reached surya's client: never more than 2 at once.
    assert stubs.vlm.max_in_flight == 2
    prompts = [
        part["text"]
        for request in stubs.vlm.requests
        for part in request["messages"][0]["content"]
        if part["type"] == "text"
    ]
    assert prompts.count(PROMPT_MAPPING["layout"]) == 5  # one layout request per page
    assert stubs.layout.requests == []  # the rf-detr server is fast mode's
    assert pages[2].ocr is True and marker_stubs.OCR_TEXT in (pages[2].markdown or "")
    assert "Chapter one" in (pages[0].markdown or "")
    written = sorted(p.name for p in (tmp_path / "assets").iterdir())
    assert written and all(name.startswith("page-00002-picture-") for name in written)


async def test_text_layer_only_needs_no_ocr_server(
    stubs: Stubs, chunk_pdf: Path, tmp_path: Path
) -> None:
    stubs.reset()
    settings = marker_settings(
        stubs, marker_mode="fast", marker_disable_ocr=True, marker_inference_url=None
    )
    pages = await convert(settings, chunk_pdf, 7, tmp_path / "assets")
    assert [page.number for page in pages] == [7, 8, 9, 10, 11]
    assert [page.ocr for page in pages] == [False] * 5
    assert marker_stubs.OCR_TEXT not in "".join(page.markdown or "" for page in pages)
    assert stubs.vlm.requests == [] and stubs.ocr_error.requests == []


async def test_a_hung_ocr_server_fails_the_chunk_at_the_timeout_and_the_process_recovers(
    stubs: Stubs, chunk_pdf: Path, tmp_path: Path
) -> None:
    stubs.reset()
    settings = marker_settings(
        stubs, marker_mode="fast", marker_inference_parallel=2, convert_timeout_s=8
    )
    process = ConversionProcess(settings)
    try:
        await process.start()
        first_pid = process.pid
        stubs.vlm.delay_s = 60  # the scan's OCR requests hang
        started = time.monotonic()
        scan = chunk_pdf.with_name("scan.pdf")  # one page to OCR: converts well within 8 s
        with pytest.raises(PagefleetError) as failed:
            await process.convert(scan, 1, tmp_path)
        waited_s = time.monotonic() - started
        assert failed.value.code == ErrorCode.TIMEOUT
        assert 8 <= waited_s < 60  # the timeout, then the new process's start
        # A fresh conversion process replaced the stuck one and converts the next chunk.
        assert process.pid != first_pid
        stubs.vlm.delay_s = 0
        (tmp_path / "again").mkdir()
        pages = PAGES.validate_json(await process.convert(scan, 1, tmp_path / "again"))
        assert [(page.number, page.ocr) for page in pages] == [(1, True)]
    finally:
        process.stop()


class _OneGpu:
    def gpus(self) -> list[GpuInfo]:
        return [GpuInfo(0, "GPU-contract", "NVIDIA L4", 23034, 22000)]

    def sample(self) -> list[Any]:
        return []

    def close(self) -> None:
        pass
