"""marker's model servers as the contract test's stubs (``tests/marker_stubs.py``), answering at
once with page-sized text, so that every CPU second the bench counts is the runner's own.

The stubs speak the servers' real protocols and read the layout off the page image; their OCR
answer is one short sentence a block. Here each block's answer is a paragraph instead
(:data:`OCR_PARAGRAPH`), so a scanned page comes back with about as much text as the page holds
and marker post-processes, renders and writes as much as it would for a real reply.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Imported by name: the contract test's stubs live outside the strictly typed paths.
marker_stubs: Any = importlib.import_module("tests.marker_stubs")

# The model names surya's clients check on their servers (surya/settings.py, FAST_LAYOUT_MODEL
# and OCR_ERROR_MODEL_CHECKPOINT, as tests/test_marker_contract.py uses them).
LAYOUT_MODEL = "hf://datalab-to/surya_layout2"
OCR_ERROR_MODEL = "s3://ocr_error_detection/2025_02_18"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
# About 400 characters: a page of a scan falls into roughly eight such blocks.
OCR_PARAGRAPH = (
    "The agency shall review each report within thirty days of its receipt and notify the "
    "program office of any section that requires further work, together with the reasons for "
    "the finding and the date by which a revised report is due. Where the office does not "
    "answer within that time the review is closed and the report is filed as received, with "
    "a note of the open items for the next annual review of the program."
)
CHAT = ("POST", "/v1/chat/completions")


@dataclass
class Servers:
    vlm: Any  # tests.marker_stubs.StubServer, each
    layout: Any
    ocr_error: Any

    @property
    def all(self) -> list[Any]:
        return [self.vlm, self.layout, self.ocr_error]

    def requests(self) -> dict[str, int]:
        return {
            "vlm": len(self.vlm.requests),
            "layout": len(self.layout.requests),
            "ocr_error": len(self.ocr_error.requests),
        }


def page_sized_vlm() -> Any:
    """The contract test's VLM stub, its one-sentence OCR answers widened to paragraphs."""
    server = marker_stubs.vlm_server()
    answer = server._routes[CHAT]  # the stub's own handler, wrapped rather than copied

    def completions(body: dict[str, Any]) -> dict[str, Any]:
        reply = answer(body)
        choice = reply["choices"][0]
        content = choice["message"]["content"].replace(marker_stubs.OCR_TEXT, OCR_PARAGRAPH)
        choice["message"]["content"] = content
        tokens = max(1, len(content) // 4)
        if choice["logprobs"] is not None:
            token = choice["logprobs"]["content"][0]
            choice["logprobs"]["content"] = [token] * tokens
        reply["usage"]["completion_tokens"] = tokens
        reply["usage"]["total_tokens"] = reply["usage"]["prompt_tokens"] + tokens
        return reply

    server.route(*CHAT, completions)
    return server


@contextlib.contextmanager
def running_servers() -> Iterator[Servers]:
    """The three stub servers, with this process's environment pointing surya at them.

    Conversion processes are spawned, so they inherit the environment: surya's clients attach to
    the stubs instead of spawning servers, and nothing reaches a model hub.
    """
    servers = Servers(
        vlm=page_sized_vlm().start(),
        layout=marker_stubs.layout_server(LAYOUT_MODEL).start(),
        ocr_error=marker_stubs.ocr_error_server(OCR_ERROR_MODEL).start(),
    )
    with tempfile.TemporaryDirectory(prefix="marker-bench-") as scratch:
        font = FONT
        if not font.exists():
            # marker only checks at construction that its font exists; offline it cannot
            # download its own.
            font = Path(scratch) / "font.ttf"
            font.write_bytes(b"")
        env = {
            "FAST_LAYOUT_SERVER_URL": servers.layout.url,
            "OCR_ERROR_SERVER_URL": servers.ocr_error.url,
            "SURYA_INFERENCE_BACKEND": "vllm",  # what surya picks on an NVIDIA GPU
            "FONT_PATH": str(font),
            "HF_HUB_OFFLINE": "1",
            "HOME": scratch,  # surya's server sentinels: none here
        }
        saved = {name: os.environ.get(name) for name in env}
        os.environ.update(env)
        try:
            yield servers
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            for server in servers.all:
                server.stop()
