"""marker's model servers as stubs: stand-ins that speak the servers' real protocols, and
:func:`attached`, which starts them and points surya at them by URL. The contract test
(tests/test_marker_contract.py), the marker CPU bench (:mod:`bench.marker`) and the
chunked-against-whole comparison (:mod:`bench.quality.marker_runs`) all convert against them.

The VLM stub stands in for the OCR VLM marker 2.x calls (vLLM's OpenAI-compatible server, the
ECS task's sidecar). No weights are needed.

Read from surya-ocr 0.22.1: ``GET /health``, ``GET /v1/models``, ``POST /v1/chat/completions``
with one page or block image and one of surya's prompts (``surya/inference/prompts.py``):
layout as a JSON array of ``{"label", "bbox": "x0 y0 x1 y1" (0-1000), "count"}``, a block as
HTML, a full page as ``<div data-label data-bbox>`` blocks, table structure as a JSON array
(``surya/inference/parsers.py``).

The "model" is honest about the pages it is given: the layout is read off the page image (ink
rows grouped into text blocks, the red area of the test PDF's picture as an image block), and
recognised text is a fixed sentence, so a test can tell OCR output from the text layer.

It can also fail as a sick server does (:data:`FAILURES`, :meth:`StubServer.fail`), on the
requests only: ``/health`` stays green, as vLLM's does while its engine is stuck or erring.

The layout stub reads its boxes off the page image (typed by ink colour, so black text is plain
text), the same boxes for the same image whichever chunk the page is in. Conversion processes
are spawned, so they inherit the environment: surya's clients attach to the stubs instead of
spawning servers, and nothing reaches a model hub.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

OCR_TEXT = "Recognised by the stub OCR model."
VLM_MODEL = "datalab-to/surya-ocr-2"
# How a request can fail: an error status with vLLM's error body (ErrorResponse: one "error"
# object, as OpenAI's API has it), a 200 whose body is cut off mid-JSON, a reply whose layout is not
# the JSON surya parses (surya/inference/parsers.py:parse_layout), and a server that takes the
# request and never answers. A reply slower than the client's timeout is ``delay_s``.
FAILURES = ("http_500", "malformed_body", "malformed_layout", "never_answers")


def page_blocks(image: Any) -> list[tuple[str, tuple[int, int, int, int]]]:
    """(raw label, pixel bbox) of each block on a page image: red area = Image, ink = Text."""
    import numpy as np

    pixels = np.asarray(image.convert("RGB")).astype(int)
    red = (pixels[:, :, 0] > 150) & (pixels[:, :, 1] < 110) & (pixels[:, :, 2] < 110)
    ink = (pixels.sum(axis=2) < 450) & ~red
    blocks: list[tuple[str, tuple[int, int, int, int]]] = []
    if red.any():
        ys, xs = np.nonzero(red)
        blocks.append(
            ("Image", (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))
        )
    rows = [int(row) for row in np.nonzero(ink.any(axis=1))[0]]
    gap = max(4, pixels.shape[0] // 60)  # a blank band this tall separates two blocks
    start: int | None = None
    previous = 0  # read only once a block has started
    for row in [*rows, None]:
        if start is not None and (row is None or row - previous > gap):
            cols = np.nonzero(ink[start : previous + 1].any(axis=0))[0]
            blocks.append(("Text", (int(cols.min()), start, int(cols.max()) + 1, previous + 1)))
            start = None
        if row is not None:
            start = row if start is None else start
            previous = row
    return sorted(blocks, key=lambda block: (block[1][1], block[1][0]))


def _decode_image(data: str) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


class StubServer:
    """One HTTP server on 127.0.0.1 with a handler per (method, path); counts concurrency."""

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay_s = 0.0
        self.failure: str | None = None
        self._answer = threading.Event()  # set: requests held by "never_answers" end
        self._lock = threading.Lock()
        self._routes: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def route(
        self, method: str, path: str, handler: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> None:
        self._routes[(method, path)] = handler

    def start(self) -> StubServer:
        self._thread.start()
        return self

    def fail(self, failure: str | None) -> None:
        """Fail every request from now on as ``failure`` says (one of :data:`FAILURES`), or
        answer them again (None); requests held unanswered are let go."""
        if failure is not None and failure not in FAILURES:
            raise ValueError(f"unknown failure {failure!r}")
        self._answer.set()
        self._answer = threading.Event()
        self.failure = failure

    def stop(self) -> None:
        self._answer.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, code: int, payload: dict[str, Any]) -> None:
                self._send(code, json.dumps(payload).encode())

            def _send(self, code: int, body: bytes) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (its timeout), as it should

            def do_GET(self) -> None:
                path = self.path.rstrip("/")
                if path == "/health":
                    return self._reply(200, {"status": "ok"})
                if path.endswith("/models"):
                    model = {"id": stub.model_name, "object": "model"}
                    return self._reply(200, {"object": "list", "data": [model]})
                return self._reply(404, {"error": "not found"})

            def do_POST(self) -> None:
                handler = stub._routes.get(("POST", self.path.rstrip("/")))
                if handler is None:
                    return self._reply(404, {"error": "not found"})
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with stub._lock:
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                    stub.requests.append(body)
                    failure, answer = stub.failure, stub._answer
                try:
                    if failure == "never_answers":
                        answer.wait()
                        self.close_connection = True
                        return None
                    if stub.delay_s:
                        time.sleep(stub.delay_s)
                    if failure == "http_500":
                        error = {"message": "stub engine error", "type": "InternalServerError"}
                        return self._reply(500, {"error": {**error, "param": None, "code": 500}})
                    reply = handler(body)
                finally:
                    with stub._lock:
                        stub.in_flight -= 1
                if failure == "malformed_body":
                    return self._send(200, json.dumps(reply).encode()[:40])
                self._reply(200, reply)

        return Handler


def vlm_server() -> StubServer:
    """The OCR VLM behind vLLM's OpenAI-compatible API, answering surya's four prompts."""

    def norm(box: tuple[int, int, int, int], width: int, height: int) -> str:
        x0, y0, x1, y1 = box
        return " ".join(
            str(round(v * 1000 / size))
            for v, size in ((x0, width), (y0, height), (x1, width), (y1, height))
        )

    def answer(prompt: str, image: Any, failure: str | None) -> str:
        from surya.inference.prompts import PROMPT_MAPPING

        blocks = page_blocks(image)
        if prompt == PROMPT_MAPPING["layout"]:
            if failure == "malformed_layout":
                return '[{"label": "Text", "bbox": "100 1'  # cut off at the token limit
            return json.dumps(
                [
                    {"label": raw, "bbox": norm(box, image.width, image.height), "count": 50}
                    for raw, box in blocks
                ]
            )
        if prompt == PROMPT_MAPPING["table_rec"]:
            return "[]"
        if prompt == PROMPT_MAPPING["high_accuracy_bbox"]:
            return "".join(
                f'<div data-label="{raw}" data-bbox="{norm(box, image.width, image.height)}">'
                + ("" if raw == "Image" else f"<p>{OCR_TEXT}</p>")
                + "</div>"
                for raw, box in blocks
            )
        return f"<p>{OCR_TEXT}</p>"  # BLOCK_PROMPT, or a custom prompt

    def completions(body: dict[str, Any]) -> dict[str, Any]:
        (message,) = body["messages"]
        parts = {part["type"]: part for part in message["content"]}
        image_url = parts["image_url"]["image_url"]["url"]
        image = _decode_image(image_url.split(",", 1)[1])
        content = answer(parts["text"]["text"], image, server.failure)
        tokens = max(1, len(content) // 4)
        logprobs = {
            "content": [{"token": "x", "logprob": -0.01, "bytes": [120], "top_logprobs": []}]
            * tokens
        }
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                    "logprobs": logprobs if body.get("logprobs") else None,
                }
            ],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": tokens,
                "total_tokens": 100 + tokens,
            },
        }

    server = StubServer(VLM_MODEL)
    server.route("POST", "/v1/chat/completions", completions)
    return server


# --- a layout model that tells block types apart, for tests/test_marker_chunking.py ---
# Its "model" reads a block's type off the colour of its ink, which the generated documents
# choose: blue headings, green footnotes, purple tables; the rest is text, the red area an
# image. Like page_blocks, it answers the same for the same page image, whichever chunk the
# page is in. The labels are the model's raw ones (surya.layout.label.LAYOUT_PRED_RELABEL).
HEADING_INK = (0, 0, 160)
FOOTNOTE_INK = (0, 110, 0)
TABLE_INK = (120, 0, 120)


def typed_page_blocks(image: Any) -> list[tuple[str, tuple[int, int, int, int]]]:
    """page_blocks, a text block relabelled by its ink's colour (INK_LABELS)."""
    import numpy as np

    pixels = np.asarray(image.convert("RGB")).astype(int)
    typed = []
    for raw, (x0, y0, x1, y1) in page_blocks(image):
        if raw == "Text":
            area = pixels[y0:y1, x0:x1].reshape(-1, 3)
            ink = area[area.sum(axis=1) < 450]
            r, g, b = ink.mean(axis=0) if len(ink) else (0, 0, 0)
            if b > r + 60 and b > g + 60:
                raw = "Section-Header"
            elif g > r + 40 and g > b + 40:
                raw = "Footnote"
            elif r > g + 40 and b > g + 40:
                raw = "Table"
        typed.append((raw, (x0, y0, x1, y1)))
    return typed


def typed_layout_server(model_name: str) -> StubServer:
    """surya's fast-layout batch server, attached by URL rather than spawned: pages in,
    rf-detr-style boxes out (typed_page_blocks), the same boxes for the same page image. The
    chunking property needs a layout that finds headings, tables and footnotes; the stand-in
    weights surya spawns in the contract test find no boxes."""

    def infer(body: dict[str, Any]) -> dict[str, Any]:
        from surya.layout.label import LAYOUT_PRED_RELABEL

        results = []
        for item in body["items"]:
            image = _decode_image(item)
            boxes = [
                {
                    "polygon": [[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
                    "label": LAYOUT_PRED_RELABEL.get(raw, raw),
                    "raw_label": raw,
                    "position": position,
                    "confidence": 0.99,
                    "count": 0,
                }
                for position, (raw, (x0, y0, x1, y1)) in enumerate(typed_page_blocks(image))
            ]
            results.append(
                {
                    "bboxes": boxes,
                    "image_bbox": [0.0, 0.0, image.width, image.height],
                    "error": False,
                }
            )
        return {"results": results}

    server = StubServer(model_name)
    server.route("POST", "/v1/infer", infer)
    return server


def ocr_error_server(model_name: str) -> StubServer:
    """surya's OCR-error batch server, attached by URL beside typed_layout_server: every text
    is "good", so marker keeps the text layer it read."""

    def infer(body: dict[str, Any]) -> dict[str, Any]:
        return {"results": [{"label": "good", "score": 0.01} for _ in body["items"]]}

    server = StubServer(model_name)
    server.route("POST", "/v1/infer", infer)
    return server


# The model names surya's clients check on their servers (surya/settings.py, FAST_LAYOUT_MODEL
# and OCR_ERROR_MODEL_CHECKPOINT).
LAYOUT_MODEL = "hf://datalab-to/surya_layout2"
OCR_ERROR_MODEL = "s3://ocr_error_detection/2025_02_18"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@contextlib.contextmanager
def attached(vlm: Any) -> Iterator[tuple[Any, Any, Any]]:
    """``vlm`` (a stub, not yet started), the layout and the OCR-error stubs, started and named
    in the environment; yields the three servers and stops them afterwards."""
    servers = (
        vlm.start(),
        typed_layout_server(LAYOUT_MODEL).start(),
        ocr_error_server(OCR_ERROR_MODEL).start(),
    )
    with tempfile.TemporaryDirectory(prefix="marker-stubs-") as scratch:
        font = FONT
        if not font.exists():
            # marker only checks at construction that its font exists; offline it cannot
            # download its own.
            font = Path(scratch) / "font.ttf"
            font.write_bytes(b"")
        env = {
            "FAST_LAYOUT_SERVER_URL": servers[1].url,
            "OCR_ERROR_SERVER_URL": servers[2].url,
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
            for server in servers:
                server.stop()
