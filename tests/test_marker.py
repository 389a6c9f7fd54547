"""The marker converter: its own logic here; marker's real API where marker and weights exist."""

from __future__ import annotations

import http.server
import importlib.metadata
import logging
import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import PageContent
from pagefleet.settings import load_settings
from runner.converters.base import ASSET_LINK_PREFIX
from runner.converters.marker import (
    MarkerConverter,
    ModelServerError,
    asset_name,
    marker_config,
    relink,
    split_pages,
    surya_environment,
    wait_for_health,
)

SEPARATOR = "-" * 48


def test_split_pages_cuts_marker_pagination() -> None:
    # The shape MarkdownRenderer gives with paginate_output (marker/renderers/markdown.py).
    markdown = (
        f"\n\n{{0}}{SEPARATOR}\n\n# Title\n\nFirst page.\n\n"
        f"{{2}}{SEPARATOR}\n\n![](_page_2_Picture_1.jpeg)\n\nThird page.\n"
    )
    assert split_pages(markdown, 3) == [
        "# Title\n\nFirst page.",
        "",  # no marker for page 1: rendered empty
        "![](_page_2_Picture_1.jpeg)\n\nThird page.",
    ]


def test_asset_names_carry_the_document_page() -> None:
    assert asset_name("_page_3_Picture_7.jpeg", first_page=17) == "page-00020-picture-7.jpeg"
    assert asset_name("_page_0_FigureGroup_12.JPEG", first_page=1) == (
        "page-00001-figuregroup-12.jpeg"
    )
    with pytest.raises(ValueError, match="unexpected marker image name"):
        asset_name("cover.png", first_page=1)


def test_relink_points_links_at_assets() -> None:
    markdown = "a ![](_page_0_Picture_1.jpeg) b ![x](_page_0_Picture_10.jpeg)"
    renames = {
        "_page_0_Picture_1.jpeg": "page-00005-picture-1.jpeg",
        "_page_0_Picture_10.jpeg": "page-00005-picture-10.jpeg",
    }
    assert relink(markdown, renames) == (
        f"a ![]({ASSET_LINK_PREFIX}page-00005-picture-1.jpeg) "
        f"b ![x]({ASSET_LINK_PREFIX}page-00005-picture-10.jpeg)"
    )


def test_settings_become_marker_config_and_surya_environment() -> None:
    settings = load_settings(
        marker_mode="fast",
        marker_force_ocr=True,
        marker_ocr_error_batch_size=16,
        marker_inference_url="http://127.0.0.1:8000/v1",
        marker_inference_parallel=24,
        marker_vllm_gpu_type="l4",
        marker_layout_batch_size=12,
        marker_server_startup_timeout_s=45,
    )
    assert marker_config(settings) == {
        "mode": "fast",
        "force_ocr": True,
        "disable_ocr": False,
        "pdftext_workers": 1,
        "paginate_output": True,
        "disable_tqdm": True,
        "ocr_error_batch_size": 16,
    }
    assert surya_environment(settings) == {
        "SURYA_INFERENCE_STARTUP_TIMEOUT": "45.0",
        "FAST_LAYOUT_SERVER_STARTUP_TIMEOUT": "45.0",
        "OCR_ERROR_SERVER_STARTUP_TIMEOUT": "45.0",
        "DISABLE_TQDM": "true",
        "SURYA_INFERENCE_URL": "http://127.0.0.1:8000/v1",
        "SURYA_INFERENCE_PARALLEL": "24",
        "VLLM_GPU_TYPE": "l4",
        "FAST_LAYOUT_SERVER_MAX_BATCH": "12",
    }
    defaults = surya_environment(load_settings())
    assert "SURYA_INFERENCE_URL" not in defaults and "VLLM_GPU_TYPE" not in defaults
    assert "ocr_error_batch_size" not in marker_config(load_settings())


def test_convert_threads_cap_marker_s_thread_pools() -> None:
    threads = surya_environment(load_settings(convert_threads=3))
    assert {
        k: threads[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    } == {
        "OMP_NUM_THREADS": "3",
        "MKL_NUM_THREADS": "3",
        "OPENBLAS_NUM_THREADS": "3",
    }
    assert "OMP_NUM_THREADS" not in surya_environment(load_settings())  # 0: torch's own default


# --- failing fast on a missing model server (real HTTP) ---


class _Health(http.server.BaseHTTPRequestHandler):
    unhealthy_replies = 0  # set per server

    def do_GET(self) -> None:
        server = self.server
        if self.path != "/health":
            self.send_error(404)
        elif server.calls < server.unhealthy_replies:  # type: ignore[attr-defined]
            server.calls += 1  # type: ignore[attr-defined]
            self.send_error(503)
        else:
            self.send_response(200)
            self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def health_server() -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    server.calls = 0  # type: ignore[attr-defined]
    server.unhealthy_replies = 0  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server: http.server.ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_health_wait_returns_once_the_server_is_healthy(health_server) -> None:
    health_server.unhealthy_replies = 2  # loading, then ready
    wait_for_health(_url(health_server), deadline_s=10)
    assert health_server.calls == 2


def test_health_wait_fails_at_the_deadline_naming_the_server(health_server) -> None:
    health_server.unhealthy_replies = 10**6
    started = time.monotonic()
    with pytest.raises(ModelServerError, match=r"HTTP 503") as error:
        wait_for_health(_url(health_server), deadline_s=1.5)
    assert 1.0 <= time.monotonic() - started < 4
    assert f"{_url(health_server).removesuffix('/v1')}/health" in str(error.value)


def test_converter_fails_fast_when_nothing_listens() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = load_settings(
        converter="marker",
        marker_inference_url=f"http://127.0.0.1:{port}/v1",
        marker_server_startup_timeout_s=1,
    )
    started = time.monotonic()
    with pytest.raises(ModelServerError, match="PAGEFLEET_MARKER_INFERENCE_URL"):
        MarkerConverter(settings)
    assert time.monotonic() - started < 4
    # Raised before marker (and torch) were imported: no chunk waits on a dead server.
    assert "marker" not in sys.modules


# --- marker's real API ---


def _marker_or_skip() -> None:
    pytest.importorskip(
        "marker.converters.pdf",
        reason="marker-pdf is not installed (pip install 'pagefleet[marker]'; it pulls torch)",
    )
    from surya.common.rfdetr_torch import resolve_model_dir
    from surya.settings import settings

    for checkpoint in (settings.FAST_LAYOUT_MODEL_CHECKPOINT, settings.FAST_ORDER_MODEL_CHECKPOINT):
        try:
            resolve_model_dir(checkpoint)
        except Exception as exc:  # offline hub, missing cache: say which weights
            pytest.skip(f"marker's layout weights {checkpoint} are not available: {exc}")


def _pdf_with_picture(path: Path) -> Path:
    from fpdf import FPDF
    from PIL import Image

    picture = path.with_suffix(".png")
    Image.new("RGB", (400, 300), (200, 40, 40)).save(picture)
    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="Chapter one")
    pdf.ln(12)
    pdf.multi_cell(w=0, text="The first page of this chunk has only text. " * 20)
    pdf.add_page()
    pdf.multi_cell(w=0, text="The second page has a picture below. " * 10)
    pdf.image(str(picture), x=30, y=80, w=120)
    pdf.output(str(path))
    return path


def test_marker_converts_a_chunk_with_document_page_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _marker_or_skip()
    # Text layer only: no OCR server is needed, so this runs wherever the weights are.
    settings = load_settings(converter="marker", marker_mode="fast", marker_disable_ocr=True)
    converter = MarkerConverter(settings)
    assets = tmp_path / "assets"
    assets.mkdir()
    pages = converter.convert(_pdf_with_picture(tmp_path / "chunk.pdf"), 41, assets)

    assert [page.number for page in pages] == [41, 42]
    assert "Chapter one" in (pages[0].markdown or "")
    written = sorted(p.name for p in assets.iterdir())
    assert written and all(name.startswith("page-00042-") for name in written)
    for name in written:
        assert f"]({ASSET_LINK_PREFIX}{name})" in (pages[1].markdown or "")
    # The converter is reused: a second chunk gets its own page numbers.
    again = converter.convert(tmp_path / "chunk.pdf", 1, assets)
    assert [page.number for page in again] == [1, 2]


# --- model failures fail the chunk (fakes shaped like marker 2.0.0 and surya 0.22.1) ---


class _Rendered:
    """What marker's PdfConverter returns: MarkdownOutput's markdown, images and metadata."""

    def __init__(self, pages: int) -> None:
        self.markdown = "".join(f"{{{i}}}{SEPARATOR}\n\npage {i} text\n\n" for i in range(pages))
        self.images: dict[str, object] = {}
        self.metadata = {
            "page_stats": [{"page_id": i, "text_extraction_method": "surya"} for i in range(pages)]
        }


class _FakePdfConverter:
    """marker.converters.pdf.PdfConverter, logging what marker logs when surya's results come
    back with error=True: the warnings' text is marker's f-strings with their values filled."""

    warnings: tuple[str, ...] = ()

    renderer = "MarkdownRenderer"

    def __init__(self, artifact_dict: dict[str, object], config: dict[str, object]) -> None:
        self.config = config

    def build_document(self, path: str) -> types.SimpleNamespace:
        """Three pages with no blocks: marker's Document, as page_structure reads it."""
        logger = logging.getLogger("marker")
        for message in self.warnings:
            logger.warning(message)
        pages = [types.SimpleNamespace(page_id=i, children=[], structure=[]) for i in range(3)]
        return types.SimpleNamespace(pages=pages)

    def resolve_dependencies(self, renderer: str) -> Callable[[object], _Rendered]:
        return lambda document: _Rendered(3)


@pytest.fixture
def fake_marker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> type[_FakePdfConverter]:
    """marker's three modules that MarkerConverter imports, as stand-ins; the environment it
    sets is put back afterwards, and surya's cache is the test's own."""
    monkeypatch.setenv("HOME", str(tmp_path))
    converters = types.ModuleType("marker.converters.pdf")
    converters.PdfConverter = _FakePdfConverter  # type: ignore[attr-defined]
    models = types.ModuleType("marker.models")
    # Its layout client, which the converter warms once (no OCR: no OCR-error server).
    models.create_model_dict = lambda: {"fast_layout_model": lambda images: []}  # type: ignore[attr-defined]
    marker_settings = types.ModuleType("marker.settings")
    marker_settings.settings = types.SimpleNamespace(OUTPUT_IMAGE_FORMAT="JPEG")  # type: ignore[attr-defined]
    for name, module in (
        ("marker.converters.pdf", converters),
        ("marker.models", models),
        ("marker.settings", marker_settings),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.0.0")
    for key in surya_environment(load_settings(marker_disable_ocr=True)):
        monkeypatch.setenv(key, "")
    monkeypatch.setattr(_FakePdfConverter, "warnings", ())
    return _FakePdfConverter


def _convert(tmp_path: Path, first_page: int = 11) -> list[PageContent]:
    converter = MarkerConverter(load_settings(converter="marker", marker_disable_ocr=True))
    try:
        return converter.convert(tmp_path / "chunk.pdf", first_page, tmp_path)
    finally:
        converter.server_logs.close()


def test_a_clean_conversion_is_done(tmp_path: Path, fake_marker: type[_FakePdfConverter]) -> None:
    # A warning that is no model failure (marker/builders/layout.py:244-246) changes nothing.
    fake_marker.warnings = ("Unknown layout label Foo on page 1; skipping.",)
    pages = _convert(tmp_path)
    assert [(p.number, p.markdown, p.ocr) for p in pages] == [
        (11, "page 0 text", True),
        (12, "page 1 text", True),
        (13, "page 2 text", True),
    ]


def test_failed_model_calls_fail_the_chunk_naming_its_pages(
    tmp_path: Path, fake_marker: type[_FakePdfConverter]
) -> None:
    fake_marker.warnings = (
        # marker/builders/layout.py:231-233 for page_id 1 (surya/layout/__init__.py:79-82).
        "Layout inference failed for page 1; leaving page empty.",
        # marker/builders/ocr.py:229-231, two blocks of page_id 2 (full-page OCR).
        "OCR failed for a Text block on page 2",
        "OCR failed for a SectionHeader block on page 2",
        # marker/builders/ocr.py:268 (block mode), BlockId "/page/0/Text/4".
        "OCR failed for block /page/0/Text/4",
        # surya/inference/backends/openai_client.py:139, one try of several: not counted.
        "Inference error: Error code: 500",
    )
    logger = logging.getLogger("marker")
    handlers = list(logger.handlers)
    with pytest.raises(PagefleetError) as failed:
        _convert(tmp_path)
    assert failed.value.code == ErrorCode.INFERENCE_FAILED
    assert "3 page(s)" in failed.value.message
    assert "page 11: ocr x1; page 12: layout x1; page 13: ocr x2" in failed.value.message
    assert logger.handlers == handlers  # the counter is gone with its conversion


def test_failures_are_counted_whatever_marker_s_log_level(
    tmp_path: Path, fake_marker: type[_FakePdfConverter]
) -> None:
    # marker/logger.py:19 sets the "marker" logger to settings.LOGLEVEL (LOGLEVEL=ERROR, say).
    logger = logging.getLogger("marker")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        fake_marker.warnings = ("Layout inference failed for page 0; leaving page empty.",)
        with pytest.raises(PagefleetError, match=r"page 5: layout x1"):
            _convert(tmp_path, first_page=5)
        assert logger.level == logging.ERROR
    finally:
        logger.setLevel(level)


def test_an_empty_table_reply_is_no_failure(
    tmp_path: Path, fake_marker: type[_FakePdfConverter]
) -> None:
    """marker/processors/table.py:168-169 says the same for an empty reply as for an error, and
    a table the model reads as nothing would fail its chunk on every attempt."""
    fake_marker.warnings = ("Table OCR failed for block /page/1/Table/3",)
    assert len(_convert(tmp_path)) == 3


def test_the_server_start_limit_is_surya_s_own() -> None:
    """surya 0.22.1 waits 300 s for the layout and OCR-error servers it spawns
    (surya/settings.py:183 FAST_LAYOUT_SERVER_STARTUP_TIMEOUT, :144
    OCR_ERROR_SERVER_STARTUP_TIMEOUT); a shorter limit fails a cold instance's first chunk."""
    env = surya_environment(load_settings())
    assert env["FAST_LAYOUT_SERVER_STARTUP_TIMEOUT"] == "300.0"
    assert env["OCR_ERROR_SERVER_STARTUP_TIMEOUT"] == "300.0"
