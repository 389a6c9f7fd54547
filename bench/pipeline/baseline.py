"""The plain invocation: the converter over each whole document in one process.

Run as ``python -m bench.pipeline.baseline`` in a process of its own, so its time and peak RSS
are the converter's alone (no moto server or sampler beside it). It converts one round over the
files each time a line arrives on its stdin and answers each with one JSON line, so the bench
can measure a round just before each round of the pipeline (the host's speed drifts over
minutes) while the process stays warm, as one long-lived plain process would.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.pipeline.memory import peak_rss_mb


def plain_converter(name: str) -> Callable[[Path], str]:
    """Whole document in, Markdown out, as a user of the library would call it, with the
    pictures its Markdown links written (as the pipeline writes them: the same output)."""
    if name == "text-layer":
        from runner.converters.text_layer import convert_document

        def convert_text_layer(path: Path) -> str:
            with tempfile.TemporaryDirectory(prefix="pagefleet-bench-") as assets:
                return convert_document(path, assets_dir=Path(assets))

        return convert_text_layer
    from pagefleet.settings import load_settings
    from runner.converters import load_converter

    converter = load_converter(load_settings(converter=name))

    def convert(path: Path) -> str:
        with tempfile.TemporaryDirectory(prefix="pagefleet-bench-") as assets:
            pages = converter.convert(path, 1, Path(assets))
        return "\n\n".join((p.markdown or "") for p in pages)

    return convert


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline.baseline", description=__doc__)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--converter", default="text-layer")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    convert = plain_converter(args.converter)
    import_s = time.perf_counter() - started
    for _ in sys.stdin:
        seconds: dict[str, float] = {}
        cpu_seconds: dict[str, float] = {}
        for path in args.files:
            t0, cpu0 = time.perf_counter(), time.process_time()
            convert(path)
            seconds[str(path)] = time.perf_counter() - t0
            cpu_seconds[str(path)] = time.process_time() - cpu0
        round_ = {
            "import_s": import_s,
            "peak_rss_mb": peak_rss_mb(),
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
        }
        print(json.dumps(round_), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
