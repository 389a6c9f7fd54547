"""One peer converter on one PDF, for bench/quality: ``peers.py PEER PDF``.

Runs under the side venv of ``make quality-peers`` (``.venv-peers``), never under the project's
own: the peers are measured, not used (pymupdf4llm is AGPL, so it is never a dependency of
pagefleet). Prints JSON: the Markdown, the CPU seconds the conversion took (imports excluded) and
the peak RSS in MB.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import time
from collections.abc import Callable
from typing import Any


def _pdf_oxide(path: str) -> str:
    module: Any = importlib.import_module("pdf_oxide")
    markdown: str = module.PdfDocument(path).to_markdown_all()
    return markdown


def _markitdown(path: str) -> str:
    module: Any = importlib.import_module("markitdown")
    markdown: str = module.MarkItDown().convert(path).text_content
    return markdown


def _pymupdf4llm(path: str) -> str:
    module: Any = importlib.import_module("pymupdf4llm")
    markdown: str = module.to_markdown(path)
    return markdown


PEERS: dict[str, Callable[[str], str]] = {
    "pdf-oxide": _pdf_oxide,
    "markitdown": _markitdown,
    "pymupdf4llm": _pymupdf4llm,
}


def main(argv: list[str]) -> int:
    peer, path = argv
    convert = PEERS[peer]
    started = time.process_time()
    markdown = convert(path)
    seconds = time.process_time() - started
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    json.dump({"markdown": markdown, "s": seconds, "rss_mb": rss_mb}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
