"""marker's model servers as the stubs of :mod:`bench.stub_models`, answering at
once with page-sized text, so that every CPU second the bench counts is the runner's own.

The stubs speak the servers' real protocols and read the layout off the page image; their OCR
answer is one short sentence a block. Here each block's answer is a paragraph instead
(:data:`OCR_PARAGRAPH`), so a scanned page comes back with about as much text as the page holds
and marker post-processes, renders and writes as much as it would for a real reply.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench import stub_models
from bench.stub_models import attached

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
    vlm: Any  # tests.stub_models.StubServer, each
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
    server = stub_models.vlm_server()
    answer = server._routes[CHAT]  # the stub's own handler, wrapped rather than copied

    def completions(body: dict[str, Any]) -> dict[str, Any]:
        reply = answer(body)
        choice = reply["choices"][0]
        content = choice["message"]["content"].replace(stub_models.OCR_TEXT, OCR_PARAGRAPH)
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
    """The three stub servers (bench.stub_models), the VLM's answers page-sized."""
    with attached(page_sized_vlm()) as (vlm, layout, ocr_error):
        yield Servers(vlm=vlm, layout=layout, ocr_error=ocr_error)
