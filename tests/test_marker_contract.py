"""Contract test: runner/converters/marker.py against the real marker-pdf 2.0.0 on the CPU.

The real ``PdfConverter`` (pdftext, page rendering, marker's builders, processors and renderer,
surya's clients) converts a generated five-page chunk in a real conversion process
(``runner/conversion.py``). So the page cutting, the asset renaming, the OCR flags, the OCR
concurrency the supervisor hands each worker, the conversion timeout and marker's inference
failures are checked against what marker really produces and sends.

The model servers are the ones production has:

- surya spawns its own layout (rf-detr) and OCR-error servers, as in the runner image: no URL
  points marker at them, so surya's sentinel, lock and spawn (and our warm-up, log forwarding
  and restart around them, runner/converters/marker_servers.py) run for real. Their weights are
  random-initialised models of the real architectures written where surya looks for
  downloaded weights, with ``HF_HUB_OFFLINE=1`` (tests/surya_models.py): the layout model finds
  no boxes, the OCR-error model calls every text good.
- the OCR VLM, which the ECS task's vLLM sidecar serves at a URL, is a stub speaking vLLM's
  OpenAI API (``tests/stub_models.py``) whose "model" reads the layout off the page image and
  answers OCR with a fixed sentence, and which can be made to fail as a sick server does.

It needs marker-pdf and torch (several GB), so it skips in the default environment and runs in
the runner image's environment: ``make marker-contract`` (docker/runner.mk), whose output is
committed under bench/results/.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "marker.converters.pdf",
    reason="marker-pdf is not installed: run `make marker-contract` (the runner image's env)",
)

import psutil
from pydantic import TypeAdapter

from bench import stub_models
from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import PageContent
from pagefleet.settings import Settings, load_settings
from runner.conversion import ConversionProcess
from runner.converters import marker_servers
from runner.converters.base import ASSET_LINK_PREFIX
from runner.gpu import GpuInfo
from runner.worker_plan import (
    SURYA_GPU_VRAM_GB,
    Host,
    RunnerSettings,
    ocr_server_capacity,
    plan_workers,
)
from tests import surya_models

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
SCANS = 3
# The module each of surya's batch servers runs as (surya/ocr_error/config.py,
# surya/fast_layout/config.py: server_module), by surya's backend name.
SURYA_SERVERS = {
    "ocr_error": "surya.ocr_error.server",
    "fast_layout": "surya.fast_layout.server",
}
# Client settings that would attach marker to a server instead of letting surya spawn it
# (surya/settings.py); none may reach the conversion processes.
SERVER_URL_SETTINGS = ("FAST_LAYOUT_SERVER_URL", "OCR_ERROR_SERVER_URL", "DETECTOR_SERVER_URL")


@dataclass
class Machine:
    """One runner machine's worth of model servers: the VLM stub (the sidecar) and the HOME
    under which surya keeps the sentinels, locks and logs of the servers it spawns."""

    vlm: stub_models.StubServer
    home: Path

    def reset(self) -> None:
        self.vlm.requests.clear()
        self.vlm.max_in_flight = 0
        self.vlm.delay_s = 0.0
        self.vlm.fail(None)


def surya_servers(home: Path) -> dict[str, list[psutil.Process]]:
    """The servers surya spawned for conversion processes running with this HOME."""
    found: dict[str, list[psutil.Process]] = {backend: [] for backend in SURYA_SERVERS}
    for proc in psutil.process_iter():
        try:
            cmdline = proc.cmdline()
            if not any(module in cmdline for module in SURYA_SERVERS.values()):
                continue
            if proc.environ().get("HOME") != str(home):
                continue
        except psutil.Error:
            continue
        for backend, module in SURYA_SERVERS.items():
            if module in cmdline:
                found[backend].append(proc)
    return found


def stop_surya_servers(home: Path) -> None:
    """Kill what surya spawned under this HOME: it outlives the conversion processes by design
    (surya/common/batch_service/client.py:91-95), each in a session of its own (:68-70)."""
    procs = [proc for group in surya_servers(home).values() for proc in group]
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    psutil.wait_procs(procs, timeout=30)


def sentinel(home: Path, backend: str) -> dict[str, Any]:
    # surya/inference/backends/spawn.py: _write_sentinel, under ~/.cache/datalab/surya.
    data: dict[str, Any] = json.loads(
        (home / ".cache/datalab/surya" / f"{backend}_server.json").read_text()
    )
    return data


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    models = tmp_path_factory.mktemp("models")
    # Where the runner image keeps its baked weights (docker/runner.Dockerfile: HF_HOME and
    # MODEL_CACHE_DIR), here with the stand-ins in them.
    hf_home, model_cache = models / "hf", models / "datalab"
    surya_models.write_ocr_error_model(model_cache)
    surya_models.write_layout_model(hf_home)
    font = FONT
    if not font.exists():
        # marker only checks at construction that its font exists (it draws with it in debug
        # output and HTML inputs, neither used here); offline it cannot download its own.
        font = tmp_path_factory.mktemp("font") / "font.ttf"
        font.write_bytes(b"")
    machine = Machine(stub_models.vlm_server().start(), tmp_path_factory.mktemp("home"))
    # Conversion processes are spawned, and spawn surya's servers, so both inherit this
    # environment: the image's, with nothing that could reach a model hub.
    env = {
        "SURYA_INFERENCE_BACKEND": "vllm",  # what surya picks on an NVIDIA GPU
        "FONT_PATH": str(font),
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(hf_home),
        "MODEL_CACHE_DIR": str(model_cache),
        "HOME": str(machine.home),
    }
    saved = {name: os.environ.get(name) for name in [*env, *SERVER_URL_SETTINGS]}
    for name in SERVER_URL_SETTINGS:
        os.environ.pop(name, None)
    os.environ.update(env)
    yield machine
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    machine.vlm.stop()
    stop_surya_servers(machine.home)


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


def prompt_names(requests: list[dict[str, Any]]) -> list[str]:
    """surya's name (surya/inference/prompts.py: PROMPT_MAPPING) for the prompt of each request."""
    from surya.inference.prompts import PROMPT_MAPPING

    names = {text: name for name, text in PROMPT_MAPPING.items()}
    return [
        names.get(part["text"], "other")
        for request in requests
        for part in request["messages"][0]["content"]
        if part["type"] == "text"
    ]


def marker_settings(machine: Machine, **overrides: Any) -> Settings:
    """Production's settings (the start limit, the memory budget), the VLM at the stub."""
    values: dict[str, Any] = {
        "converter": "marker",
        "marker_inference_url": f"{machine.vlm.url}/v1",
        "convert_timeout_s": 120,
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


def test_the_stand_in_weights_are_for_the_checkpoints_surya_loads() -> None:
    from surya.settings import Settings as SuryaSettings

    defaults = {name: field.default for name, field in SuryaSettings.model_fields.items()}
    assert defaults["OCR_ERROR_MODEL_CHECKPOINT"] == surya_models.OCR_ERROR_CHECKPOINT
    assert defaults["FAST_LAYOUT_MODEL_CHECKPOINT"] == surya_models.LAYOUT_CHECKPOINT
    assert defaults["FAST_ORDER_MODEL_CHECKPOINT"] == (
        f"{surya_models.LAYOUT_CHECKPOINT}/{surya_models.ORDER_SUBFOLDER}"
    )


async def test_workers_starting_at_once_share_one_spawned_server_of_each_model(
    machine: Machine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Two conversion processes start together on a machine where no server runs yet: surya's
    lock lets one spawn each server and the other attach (surya/inference/backends/spawn.py
    :240-351), the servers load their weights offline within the start limit, and their logs
    reach the conversion processes' stderr once (runner/converters/marker_servers.py)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # this machine's own sentinels: none yet
    settings = marker_settings(machine, marker_mode="fast")  # both servers in use
    processes = [ConversionProcess(settings) for _ in range(2)]
    try:
        started = time.monotonic()
        await asyncio.gather(*(process.start() for process in processes))
        start_s = time.monotonic() - started
        servers = surya_servers(home)
        for backend in SURYA_SERVERS:
            # One server per model, the one its sentinel names, still running.
            assert [proc.pid for proc in servers[backend]] == [sentinel(home, backend)["pid"]]
        assert start_s < settings.marker_server_startup_timeout_s
        # Each server's "listening" line, from its log file, in the runner's log stream.
        lines = {}
        for backend in SURYA_SERVERS:
            url = f"http://{marker_servers.HOST}:{sentinel(home, backend)['port']}"
            lines[backend] = f"{backend} server listening on {url}"
        err = ""
        deadline = time.monotonic() + 30  # the forwarder copies once a second
        while time.monotonic() < deadline and not all(line in err for line in lines.values()):
            err += capfd.readouterr().err
            await asyncio.sleep(0.2)
        for backend, line in lines.items():
            forwarded = [text for text in err.splitlines() if line in text]
            assert len(forwarded) == 1 and forwarded[0].startswith(f"{backend}_server | ")
        with capfd.disabled():
            print(f"two conversion processes and both servers up in {start_s:.1f} s")
    finally:
        for process in processes:
            process.stop()
        stop_surya_servers(home)


async def test_fast_mode_cuts_pages_and_flags_ocr_through_the_spawned_servers(
    machine: Machine, chunk_pdf: Path, tmp_path: Path
) -> None:
    machine.reset()
    machine.vlm.delay_s = 0.2  # long enough for concurrent OCR requests to overlap
    # The concurrency the supervisor gives each of W workers on an L4 host.
    plan = plan_workers(
        marker_settings(machine, marker_vllm_gpu_type="l4"),
        RunnerSettings(mps="off"),
        _OneGpu(),
        tmp_path / "state",
        Host(cpu_count=8, memory_mb=60000),
    )
    ((_, sizing),) = plan.sizings
    assert sizing.inference_parallel == 8  # 6 workers, 48 requests in flight in all
    parallel = int(plan.specs[0].env["PAGEFLEET_MARKER_INFERENCE_PARALLEL"])
    settings = marker_settings(machine, marker_mode="fast", marker_inference_parallel=parallel)

    started = time.monotonic()
    pages = await convert(settings, chunk_pdf, 41, tmp_path / "assets")
    convert_s = time.monotonic() - started

    assert [page.number for page in pages] == [41, 42, 43, 44, 45]
    text, picture, *scans = pages
    assert text.ocr is False and picture.ocr is False
    assert (text.markdown or "").startswith("**Chapter one**")  # a bold line of a Text block
    assert "The first page of this chunk has only text." in (text.markdown or "")
    assert stub_models.OCR_TEXT not in (text.markdown or "") + (picture.markdown or "")
    # Each scan was OCRed as a whole page through the VLM (its twelve blocks come back as
    # twelve paragraphs), the three requests in flight at once: fewer than `parallel`.
    for scan in scans:
        assert scan.ocr is True
        assert (scan.markdown or "").count(stub_models.OCR_TEXT) == 12
    assert len(machine.vlm.requests) == SCANS
    assert machine.vlm.max_in_flight == SCANS
    # Served by the layout and OCR-error servers surya spawned, one of each on the machine.
    assert {b: len(procs) for b, procs in surya_servers(machine.home).items()} == {
        backend: 1 for backend in SURYA_SERVERS
    }
    # The rf-detr stand-in finds no boxes, so the picture is no Picture block and is not saved:
    # the balanced test below checks the assets, from the stub VLM's layout.
    assert list((tmp_path / "assets").iterdir()) == []
    print(f"fast mode: {len(pages)} pages in {convert_s:.1f} s, conversion process start included")


async def test_balanced_mode_asks_the_vlm_for_layout_and_ocr_and_renames_assets(
    machine: Machine, chunk_pdf: Path, tmp_path: Path
) -> None:
    machine.reset()
    machine.vlm.delay_s = 0.2
    settings = marker_settings(machine, marker_mode="balanced", marker_inference_parallel=2)
    pages = await convert(settings, chunk_pdf, 1, tmp_path / "assets")

    assert [page.number for page in pages] == [1, 2, 3, 4, 5]
    # PAGEFLEET_MARKER_INFERENCE_PARALLEL reached surya's client: never more than 2 at once.
    assert machine.vlm.max_in_flight == 2
    assert prompt_names(machine.vlm.requests).count("layout") == 5  # one per page
    assert pages[2].ocr is True and stub_models.OCR_TEXT in (pages[2].markdown or "")
    assert "Chapter one" in (pages[0].markdown or "")
    # The picture: saved under a document-wide name, linked from its own page only.
    written = sorted(p.name for p in (tmp_path / "assets").iterdir())
    assert written and all(name.startswith("page-00002-picture-") for name in written)
    assert all(f"]({ASSET_LINK_PREFIX}{name})" in (pages[1].markdown or "") for name in written)
    assert ASSET_LINK_PREFIX not in (pages[0].markdown or "") + (pages[2].markdown or "")


async def test_text_layer_only_needs_no_ocr_server(
    machine: Machine, chunk_pdf: Path, tmp_path: Path
) -> None:
    machine.reset()
    settings = marker_settings(
        machine, marker_mode="fast", marker_disable_ocr=True, marker_inference_url=None
    )
    pages = await convert(settings, chunk_pdf, 7, tmp_path / "assets")
    assert [page.number for page in pages] == [7, 8, 9, 10, 11]
    assert [page.ocr for page in pages] == [False] * 5
    assert stub_models.OCR_TEXT not in "".join(page.markdown or "" for page in pages)
    assert machine.vlm.requests == []


async def test_a_vlm_that_answers_late_or_never_fails_the_chunk_at_its_timeout(
    machine: Machine, chunk_pdf: Path, tmp_path: Path
) -> None:
    """A sidecar that takes the requests and answers after the chunk's time, or never: the chunk
    fails ``timeout`` (retried, and split in halves if it has pages to split) and a fresh
    conversion process converts the next one. surya's client would give up only after
    ``SURYA_INFERENCE_TIMEOUT_SECONDS`` (600 s, surya/settings.py) per try, past any chunk's
    ``PAGEFLEET_CONVERT_TIMEOUT_S``, so the chunk's own timeout is what ends it."""
    machine.reset()
    # The restart probes the spawned servers for a fifth of this (runner/converters/
    # marker_servers.py): long enough for the rf-detr stand-in on a busy CPU.
    timeout_s = 30
    settings = marker_settings(
        machine, marker_mode="fast", marker_inference_parallel=2, convert_timeout_s=timeout_s
    )
    scan = chunk_pdf.with_name("scan.pdf")  # one page to OCR: converts well within that
    process = ConversionProcess(settings)
    try:
        await process.start()
        for late in ("slow_reply", "never_answers"):
            first_pid = process.pid
            if late == "slow_reply":
                machine.vlm.delay_s = 60
            else:
                machine.vlm.fail("never_answers")
            started = time.monotonic()
            with pytest.raises(PagefleetError) as failed:
                await process.convert(scan, 1, tmp_path)
            waited_s = time.monotonic() - started
            assert failed.value.code == ErrorCode.TIMEOUT
            assert timeout_s <= waited_s < 4 * timeout_s  # the timeout, the new process's start
            # A fresh conversion process replaced the stuck one and converts the next chunk.
            assert process.pid != first_pid
            machine.reset()
            (tmp_path / late).mkdir()
            pages = PAGES.validate_json(await process.convert(scan, 1, tmp_path / late))
            assert [(page.number, page.ocr) for page in pages] == [(1, True)]
    finally:
        process.stop()


# Replies that come back wrong; one that never comes is the chunk's timeout (the test below).
VLM_ERRORS = ("http_500", "malformed_body", "malformed_layout")


@pytest.mark.timeout(900)  # surya's retries with back-off, three times over
async def test_a_vlm_that_errs_or_answers_garbage_fails_the_chunk_naming_its_pages(
    machine: Machine, chunk_pdf: Path, tmp_path: Path
) -> None:
    """A sidecar that stays healthy but answers 500s, cut-off bodies or a layout that is not
    JSON: surya retries each request (surya/inference/backends/openai_client.py:155-205, after
    the OpenAI client's own retries of a 500) and then hands marker an error flag, marker leaves
    the page empty with a warning, and the chunk fails ``inference_failed`` naming the page,
    never ``done`` without its text; the worker retries it and, after its attempts, records it
    failed (runner/worker/__init__.py, ``_handle``)."""
    settings = marker_settings(machine, marker_mode="balanced", marker_inference_parallel=2)
    scan = chunk_pdf.with_name("scan.pdf")  # one page, whose layout only the VLM gives
    process = ConversionProcess(settings)
    outcomes: dict[str, tuple[str, str]] = {}
    asked: dict[str, Counter[str]] = {}  # requests per prompt
    try:
        await process.start()
        for failure in VLM_ERRORS:
            machine.reset()
            machine.vlm.fail(failure)
            (tmp_path / failure).mkdir()
            started = time.monotonic()
            try:
                pages = PAGES.validate_json(await process.convert(scan, 7, tmp_path / failure))
                outcomes[failure] = ("done", repr([page.markdown for page in pages]))
            except PagefleetError as exc:
                outcomes[failure] = (exc.code, exc.message)
            asked[failure] = Counter(prompt_names(machine.vlm.requests))
            print(
                f"{failure}: {outcomes[failure][0]} after {time.monotonic() - started:.1f} s, "
                f"requests {dict(asked[failure])}: {outcomes[failure][1]}"
            )
        # Answering again, the same conversion process reads the page.
        machine.reset()
        (tmp_path / "healthy").mkdir()
        pages = PAGES.validate_json(await process.convert(scan, 7, tmp_path / "healthy"))
    finally:
        process.stop()
    assert {f: outcome[0] for f, outcome in outcomes.items()} == {
        f: ErrorCode.INFERENCE_FAILED for f in VLM_ERRORS
    }
    # Counted from marker's one warning, the layout's. After it marker OCRs the empty page whole
    # (the "high_accuracy_bbox" requests), which fails too on a 500 or a cut-off body, silently.
    # A layout that does not parse is different: that OCR succeeds and the page has its text
    # (checked by hand with the counting off), yet the chunk fails on the layout warning, so
    # such a page fails every attempt. marker's warnings alone cannot tell the two apart.
    for _, message in outcomes.values():
        assert message.endswith("(page 7: layout x1)")
    # The layout request was sent again after a failed reply; one that parsed badly was not.
    assert {f: prompts["layout"] > 1 for f, prompts in asked.items()} == {
        f: f != "malformed_layout" for f in VLM_ERRORS
    }
    assert [(page.number, page.ocr) for page in pages] == [(7, True)]
    assert stub_models.OCR_TEXT in (pages[0].markdown or "")


class _OneGpu:
    def gpus(self) -> list[GpuInfo]:
        return [GpuInfo(0, "GPU-contract", "NVIDIA L4", 23034, 22000)]

    def sample(self) -> list[Any]:
        return []

    def close(self) -> None:
        pass
