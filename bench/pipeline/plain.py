"""What a user runs first: one plain converter process per file, W of them side by side.

``python -m bench.pipeline.plain FILE --ocr-threads T`` converts FILE as the library's user would
(:func:`runner.converters.text_layer.extract_pages` and the renderer, in one fresh process)
with OCR on at most T threads, writing the pictures its Markdown links as the pipeline does
(into a temporary folder: the same output, the same work), and prints one JSON line: the
file, its wall and CPU seconds. :func:`bench.pipeline.standalone.xargs_round` runs it under
``xargs -P W``, each with the same OCR thread share (cores // W) as the pipeline's W workers.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline.plain", description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--ocr-threads", type=int, default=0, help="0: every core")
    args = parser.parse_args(argv)
    started, cpu0 = time.perf_counter(), time.process_time()
    from pagefleet.layout import render_document
    from pagefleet.layout.outline import read_outline
    from runner.converters.text_layer import extract_pages

    with tempfile.TemporaryDirectory(prefix="pagefleet-plain-") as assets:
        pages = extract_pages(
            args.file, 1, ocr="auto", ocr_threads=args.ocr_threads, assets_dir=Path(assets)
        )
        render_document(pages, outline=read_outline(args.file))
    line = {
        "file": str(args.file),
        "seconds": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu0,
    }
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
