"""marker-pdf 2.x as a pagefleet converter.

In marker 2.x every model runs in a shared server and ``create_model_dict()`` builds only thin
clients: surya's OCR VLM behind an OpenAI-compatible server (in the ECS task, a vLLM sidecar at
``PAGEFLEET_MARKER_INFERENCE_URL``), and the rf-detr layout and OCR-error models in local
servers that the first client on the machine spawns and the others attach to. So a conversion
process is light, and W of them share one GPU (through MPS) with those servers.

surya and marker read their settings from the environment when first imported, so
:class:`MarkerConverter` sets them (:func:`surya_environment`) before importing either.

A model call that fails does not raise: surya's OpenAI client catches every request error and,
after its retries, returns ``error=True``; marker then logs a warning and leaves the page or
block without text. :class:`InferenceFailures` counts those warnings per page, so a chunk that
lost text fails (``inference_failed``) and is retried instead of being recorded ``done``.

The servers surya spawns for marker are started, checked and their logs forwarded by
:mod:`runner.converters.marker_servers` when the converter is built.

Beside each page's Markdown a chunk returns the page's structure (:func:`page_structure`): the
inputs of the decisions marker makes over a whole document, which a chunk sees only a part of.
Assembly (:mod:`pagefleet.marker_assembly`) makes them again, once, for the whole document.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import math
import os
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.marker_assembly import ends_hyphenated
from pagefleet.models import PageContent
from runner.converters import unavailable
from runner.converters.base import ASSET_LINK_PREFIX
from runner.converters.marker_servers import (
    LogForwarder,
    ModelServerError,
    ModelServers,
    servers_in_use,
)

if TYPE_CHECKING:
    from pagefleet.settings import Settings

# marker's paginated Markdown puts "{<0-based page id>}" and 48 dashes before each page.
PAGE_MARKER = re.compile(r"^\{(\d+)\}-{48}$", re.MULTILINE)
# marker names images after their block id: "/page/3/Picture/7" -> "_page_3_Picture_7.jpeg".
IMAGE_NAME = re.compile(r"^_page_(\d+)_(\w+)_(\d+)\.(\w+)$")
# An internal link's target and its anchor, named after the 0-based page of the file by pdftext
# (pdftext/schema.py:229-235, Reference.ref and .url), rendered by marker as <span id="..."> and
# a link to "#..." (marker/renderers/markdown.py:228-237).
REF_ANCHOR = re.compile(r'(?<=<span id=")page-(\d+)-(\d+)(?=")|(?<=\]\(#)page-(\d+)-(\d+)(?=\))')
# The block types marker's TextProcessor and ListProcessor pass over when they look for the
# block after a paragraph or a list (marker/processors/text.py:18, list.py:9-12).
PASSED_OVER = ("PageHeader", "PageFooter")
HEALTH_POLL_S = 0.5

# marker 2.0.0's warnings for a model result that came back with surya 0.22.1's error flag, the
# 0-based page of the chunk in group 1. Each leaves text out; none raises.
INFERENCE_FAILURE_WARNINGS = (
    # marker/builders/layout.py:230-233, a LayoutResult with error=True (surya/layout/__init__.py
    # :79-92: the VLM's reply failed or was empty): the page gets no blocks at all.
    ("layout", re.compile(r"Layout inference failed for page (\d+); leaving page empty\.")),
    # marker/builders/ocr.py:228-232, full-page OCR: a block with error=True
    # (surya/recognition/__init__.py:232-244) is dropped from the page.
    ("ocr", re.compile(r"OCR failed for a \S+ block on page (\d+)")),
    # marker/builders/ocr.py:267-269, block-mode OCR: the block keeps no OCR text. Its id is
    # "/page/<page>/<type>/<n>" (marker/schema/blocks/base.py:46-49, BlockId.__str__).
    ("ocr", re.compile(r"OCR failed for block /page/(\d+)/")),
)
# Left out on purpose: "Table OCR failed" (marker/processors/table.py:168-169) and "Equation
# recognition failed" (marker/processors/equation.py:153-154) are logged for an empty reply as
# for an error, and a table the model reads as nothing would fail its chunk on every attempt.


def surya_environment(settings: Settings) -> dict[str, str]:
    """The surya/marker environment variables that the ``PAGEFLEET_MARKER_*`` settings imply."""
    startup_s = str(settings.marker_server_startup_timeout_s)
    env = {
        # marker's defaults wait 300 s (layout, OCR-error) and 600 s (VLM) before failing.
        "SURYA_INFERENCE_STARTUP_TIMEOUT": startup_s,
        "FAST_LAYOUT_SERVER_STARTUP_TIMEOUT": startup_s,
        "OCR_ERROR_SERVER_STARTUP_TIMEOUT": startup_s,
        "DISABLE_TQDM": "true",
    }
    if settings.marker_inference_url:
        env["SURYA_INFERENCE_URL"] = settings.marker_inference_url
    if settings.marker_inference_parallel:
        env["SURYA_INFERENCE_PARALLEL"] = str(settings.marker_inference_parallel)
    if settings.marker_vllm_gpu_type:
        env["VLLM_GPU_TYPE"] = settings.marker_vllm_gpu_type
    if settings.marker_layout_batch_size:
        env["FAST_LAYOUT_SERVER_MAX_BATCH"] = str(settings.marker_layout_batch_size)
    if settings.convert_threads:
        # PAGEFLEET_CONVERT_THREADS, the supervisor's share for each of W workers, caps the
        # process's torch/OpenMP/BLAS pools, as marker's CLI caps each of its workers' (marker/
        # scripts/convert.py:15-19 and 220-222); torch reads it when first imported, after this.
        # The servers the first worker spawns inherit it, as the CLI's servers do.
        threads = str(settings.convert_threads)
        env |= {
            name: threads for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
        }
    return env


def marker_config(settings: Settings) -> dict[str, Any]:
    """marker's converter config (its CLI options) from the settings."""
    config: dict[str, Any] = {
        "mode": settings.marker_mode,
        "force_ocr": settings.marker_force_ocr,
        "disable_ocr": settings.marker_disable_ocr,
        "pdftext_workers": settings.marker_pdftext_workers,
        # Page markers let one render of the chunk be cut into its pages.
        "paginate_output": True,
        "disable_tqdm": True,
    }
    if settings.marker_ocr_error_batch_size:
        config["ocr_error_batch_size"] = settings.marker_ocr_error_batch_size
    return config


def wait_for_health(base_url: str, deadline_s: float) -> None:
    """Return once ``<server>/health`` answers 200; raise :class:`ModelServerError` at the deadline.

    ``base_url`` is the OpenAI-style URL (``.../v1``); vLLM and llama.cpp serve ``/health``
    beside it. An external server offers nothing to await, so it is polled.
    """
    health = base_url.rstrip("/").removesuffix("/v1") + "/health"
    deadline = time.monotonic() + deadline_s
    while True:
        remaining = deadline - time.monotonic()
        try:
            with urllib.request.urlopen(health, timeout=max(0.1, min(2.0, remaining))) as reply:
                if reply.status == 200:
                    return
                last = f"HTTP {reply.status}"
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
        if time.monotonic() + HEALTH_POLL_S > deadline:
            raise ModelServerError(
                f"the OCR model server at {health} was not healthy within {deadline_s:g} s "
                f"(last: {last}); start the vLLM sidecar or fix PAGEFLEET_MARKER_INFERENCE_URL"
            )
        time.sleep(HEALTH_POLL_S)


def split_pages(markdown: str, page_count: int) -> list[str]:
    """The Markdown of each page of a paginated render (a page marker missing: empty page)."""
    parts = PAGE_MARKER.split(markdown)
    pages = [""] * page_count
    for page_id, text in zip(parts[1::2], parts[2::2], strict=True):
        pages[int(page_id)] = text.strip("\n")
    return pages


def asset_name(marker_name: str, first_page: int) -> str:
    """A name unique in the whole document: the chunk's page id becomes the document page."""
    match = IMAGE_NAME.match(marker_name)
    if match is None:
        raise ValueError(f"unexpected marker image name {marker_name!r}")
    page_id, block_type, block_id, extension = match.groups()
    page = first_page + int(page_id)
    return f"page-{page:05d}-{block_type.lower()}-{block_id}.{extension.lower()}"


def relink(markdown: str, renames: dict[str, str], first_page: int = 1) -> str:
    """Point marker's image links at the renamed assets, and its internal links and their
    anchors at the document's 0-based page instead of the chunk's."""
    for old, new in renames.items():
        markdown = markdown.replace(f"]({old})", f"]({ASSET_LINK_PREFIX}{new})")

    def document_ref(match: re.Match[str]) -> str:
        page, index = (g for g in match.groups() if g is not None)
        return f"page-{int(page) + first_page - 1}-{index}"

    return REF_ANCHOR.sub(document_ref, markdown)


def page_structure(document: Any, page: Any) -> dict[str, Any]:
    """What assembly needs of one page of marker's document tree to decide, for the whole
    document, what marker decides over all its pages (:mod:`pagefleet.marker_assembly`).

    - ``headings``: every section header the text layer gave (not OCR's HTML, whose level is
      the model's), in ``page.children`` order, with its line height: the input of marker's
      heading ranking (marker/processors/sectionheader.py:42-62);
    - ``heading_lines``: the headers the Markdown shows, in reading order, with the level they
      were rendered at in this chunk (``fixed``: OCR's level, which stays);
    - ``first``/``last``: the page's first and last block as marker's TextProcessor and
      ListProcessor see a paragraph's or list's next block across a page break
      (marker/processors/text.py:27-100, list.py:125-150), with what those rules read of it.
    """
    headings = [
        {
            "id": block.block_id,
            "height": float(block.line_height(document)) if block.structure else 0.0,
        }
        for block in page.children or []
        if block.block_type.name == "SectionHeader" and not block.html
    ]
    heading_lines = [
        {"id": block.block_id, "level": block.heading_level or 2, "fixed": bool(block.html)}
        for block in _reading_order(page, page.structure)
        if block.block_type.name == "SectionHeader" and not block.ignore_for_output
    ]
    top = [page.get_block(i) for i in page.structure or [] if i.block_type.name not in PASSED_OVER]
    structure: dict[str, Any] = {"headings": headings, "heading_lines": heading_lines}
    if top:
        structure["first"] = _next_block_facts(document, page, top[0])
        structure["last"] = _previous_block_facts(document, top[-1])
    return structure


def _reading_order(page: Any, block_ids: list[Any] | None) -> Iterator[Any]:
    """The blocks under ``block_ids`` in the order marker renders them (depth first)."""
    for block_id in block_ids or []:
        block = page.get_block(block_id)
        yield block
        yield from _reading_order(page, block.structure)


def _next_block_facts(document: Any, page: Any, block: Any) -> dict[str, Any]:
    """What TextProcessor and ListProcessor read of the block after a page break
    (marker/processors/text.py:39-44, 62-80; list.py:131-148)."""
    lines = block.structure_blocks(document)
    indented = True
    if lines:
        min_x = math.ceil(min(line.polygon.x_start for line in lines))
        indented = bool(lines[0].polygon.x_start > min_x)
    return {
        "type": block.block_type.name,
        "structure": block.structure is not None,
        "ignored": bool(block.ignore_for_output),
        "starts_indented": indented,
        "first_quadrant": bool(
            block.polygon.x_start < page.polygon.width // 2
            and block.polygon.y_start < page.polygon.height // 2
        ),
    }


def _previous_block_facts(document: Any, block: Any) -> dict[str, Any]:
    """What TextProcessor reads of a paragraph before a page break
    (marker/processors/text.py:29-34, 82-93)."""
    lines = [line for line in block.structure_blocks(document) if line.polygon.width > 1]
    full_width = hyphenated = False
    if lines:
        max_x = math.floor(max(line.polygon.x_end for line in lines))
        full_width = bool(lines[-1].polygon.x_end >= max_x)
        hyphenated = ends_hyphenated(lines[-1].raw_text(document).strip())
    return {
        "type": block.block_type.name,
        "continued": bool(getattr(block, "has_continuation", False)),
        "lines": len(block.structure or []),
        "ignored": bool(block.ignore_for_output),
        "full_width": full_width,
        "hyphenated": hyphenated,
    }


class InferenceFailures(logging.Handler):
    """The model calls marker gave up on during one conversion, per document page."""

    def __init__(self, first_page: int) -> None:
        super().__init__(logging.WARNING)
        self.first_page = first_page
        self.pages: dict[int, Counter[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        for kind, pattern in INFERENCE_FAILURE_WARNINGS:
            if (match := pattern.match(message)) is not None:
                page = self.first_page + int(match.group(1))
                self.pages.setdefault(page, Counter())[kind] += 1
                return

    def error(self) -> PagefleetError | None:
        """``inference_failed`` naming the pages and what failed on each; None if nothing did."""
        if not self.pages:
            return None
        named = "; ".join(
            f"page {page}: " + ", ".join(f"{kind} x{n}" for kind, n in sorted(kinds.items()))
            for page, kinds in sorted(self.pages.items())
        )
        return PagefleetError(
            ErrorCode.INFERENCE_FAILED,
            f"marker's model servers failed on {len(self.pages)} page(s) after surya's retries, "
            f"which would lose their text ({named})",
        )


@contextlib.contextmanager
def watch_inference(first_page: int) -> Iterator[InferenceFailures]:
    """Count marker's failure warnings while the block runs, whatever marker's LOGLEVEL."""
    logger = logging.getLogger("marker")
    failures = InferenceFailures(first_page)
    level = logger.level
    if not logger.isEnabledFor(logging.WARNING):
        logger.setLevel(logging.WARNING)
    logger.addHandler(failures)
    try:
        yield failures
    finally:
        logger.removeHandler(failures)
        logger.setLevel(level)


class MarkerConverter:
    """One marker ``PdfConverter`` per conversion process, reused for every chunk.

    ``servers_restarted`` names the model servers found hung and killed as it was built (the
    conversion process says so to the worker, which then converts the timed-out chunk again).
    """

    name = "marker"

    def __init__(self, settings: Settings) -> None:
        os.environ.update(surya_environment(settings))
        if settings.marker_inference_url and not settings.marker_disable_ocr:
            # Fail here, before a chunk is held, rather than 600 s into the first OCR request.
            wait_for_health(settings.marker_inference_url, settings.marker_server_startup_timeout_s)
        try:
            from marker.converters.pdf import PdfConverter
            from marker.models import create_model_dict
            from marker.settings import settings as marker_settings
        except ImportError as exc:  # installed, but a module it needs is missing or broken
            raise unavailable("marker", exc) from exc

        self.version = importlib.metadata.version("marker-pdf")
        self._image_format = marker_settings.OUTPUT_IMAGE_FORMAT
        models = create_model_dict()
        servers = servers_in_use(settings)
        self.server_logs = LogForwarder(servers)
        self.server_logs.start()  # first, so that a server's start is in the log stream too
        model_servers = ModelServers(servers, models, settings)
        try:
            model_servers.start()
        except ModelServerError:
            self.server_logs.poll()  # the failing server's last lines, before this process ends
            raise
        self.servers_restarted = tuple(model_servers.restarted)
        self._converter = PdfConverter(artifact_dict=models, config=marker_config(settings))

    def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> list[PageContent]:
        with watch_inference(first_page) as failures:
            # PdfConverter.__call__ (marker/converters/pdf.py:225-231), keeping the document.
            document = self._converter.build_document(str(pdf_path))
            rendered = self._converter.resolve_dependencies(self._converter.renderer)(document)
        if (error := failures.error()) is not None:
            raise error
        structures = {page.page_id: page_structure(document, page) for page in document.pages}
        page_stats = rendered.metadata["page_stats"]
        renames = {}
        for marker_name, image in rendered.images.items():
            name = asset_name(marker_name, first_page)
            # JPEG has no alpha or palette; marker converts the same way when it saves.
            if image.mode != "RGB":
                image = image.convert("RGB")
            image.save(assets_dir / name, format=self._image_format)
            renames[marker_name] = name
        texts = split_pages(relink(rendered.markdown, renames, first_page), len(page_stats))
        return [
            PageContent(
                number=first_page + stats["page_id"],
                markdown=texts[stats["page_id"]],
                structure=structures[stats["page_id"]],
                ocr=stats["text_extraction_method"] == "surya",
            )
            for stats in page_stats
        ]
