"""marker's model servers as the stubs of tests/marker_stubs.py, attached by URL, with this
process's environment pointing surya at them: what the marker CPU bench (:mod:`bench.marker`) and
the chunked-against-whole comparison (:mod:`bench.quality.marker_runs`) both convert against.

The layout stub reads its boxes off the page image (typed by ink colour, so black text is plain
text), the same boxes for the same image whichever chunk the page is in. Conversion processes
are spawned, so they inherit the environment: surya's clients attach to the stubs instead of
spawning servers, and nothing reaches a model hub.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Imported by name: the stubs live with the tests, outside the strictly typed paths.
marker_stubs: Any = importlib.import_module("tests.marker_stubs")

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
        marker_stubs.typed_layout_server(LAYOUT_MODEL).start(),
        marker_stubs.ocr_error_server(OCR_ERROR_MODEL).start(),
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
