"""CPU seconds of the Markdown renderer on the shared corpus, two trees compared, paired.

    python bench_render.py extract CACHE PDF...       # page dicts + outline, once, as JSON
    python bench_render.py pair CACHE OLD NEW [ROUNDS] [REPEATS]

``extract`` runs the text-layer converter (OCR off) of the tree on PYTHONPATH and caches each
PDF's pages and outline, so that only rendering is timed. ``pair`` times the renderer of tree
OLD, then NEW, then OLD... (ROUNDS each, in fresh processes, so the two share the machine's
load alike); a process renders every cached document REPEATS times and reports, per path, the
median of the repeats' CPU seconds (``time.process_time``) over the whole corpus:

- whole: ``render_document`` of each whole document (the one-process conversion);
- chunked: what the completion does, 16-page chunks (the splitter's default): a forecast with
  the last chunk out (``write_chunks``, as ``assembly.prepare`` calls it), then the document
  from all of them (``render_chunks``, as ``assembly.render_markdown``); fresh chunk layouts
  per repeat, as a job's results are read once.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHUNK = 16


def extract(cache: Path, pdfs: list[str]) -> None:
    from pagefleet.layout.outline import read_outline
    from runner.converters.text_layer import extract_pages

    cache.mkdir(parents=True, exist_ok=True)
    for pdf in map(Path, pdfs):
        doc = {"pages": extract_pages(pdf, 1, ocr="off"), "outline": read_outline(pdf)}
        (cache / f"{pdf.stem}.json").write_text(json.dumps(doc))


def measure(cache: Path, repeats: int) -> dict[str, float]:
    """Median CPU seconds, over ``repeats``, of rendering every cached document each way."""
    from pagefleet.layout import ChunkLayout, render_chunks, render_document, write_chunks

    docs = [json.loads(p.read_text()) for p in sorted(cache.glob("*.json"))]

    def whole() -> None:
        for doc in docs:
            render_document(doc["pages"], doc["outline"])

    def chunked() -> None:
        for doc in docs:
            pages = doc["pages"]
            chunks = [
                ChunkLayout.of(pages[i : i + CHUNK], doc["outline"])
                for i in range(0, len(pages), CHUNK)
            ]
            if len(chunks) > 1:
                write_chunks(chunks[:-1], len(pages))
            render_chunks(chunks)

    out = {}
    for name, run in (("whole", whole), ("chunked", chunked)):
        run()  # warm: imports, regex compiles
        times = []
        for _ in range(repeats):
            start = time.process_time()
            run()
            times.append(time.process_time() - start)
        out[name] = statistics.median(times)
    return out


def pair(cache: Path, old: str, new: str, rounds: int, repeats: int) -> None:
    results: dict[str, list[dict[str, float]]] = {old: [], new: []}
    for r in range(rounds):
        for tree in (old, new):
            env = {**os.environ, "PYTHONPATH": tree}
            got = subprocess.run(
                [sys.executable, __file__, "measure", str(cache), str(repeats)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            results[tree].append(json.loads(got))
            print(f"round {r + 1} {tree}: {got.strip()}", flush=True)
    for path in ("whole", "chunked"):
        before = statistics.median(x[path] for x in results[old])
        after = statistics.median(x[path] for x in results[new])
        print(f"{path}: {before:.3f} -> {after:.3f} CPU s ({after / before - 1:+.1%})")


if __name__ == "__main__":
    cmd, cache = sys.argv[1], Path(sys.argv[2])
    if cmd == "extract":
        extract(cache, sys.argv[3:])
    elif cmd == "measure":
        print(json.dumps(measure(cache, int(sys.argv[3]))))
    else:
        rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
        repeats = int(sys.argv[6]) if len(sys.argv) > 6 else 3
        pair(cache, sys.argv[3], sys.argv[4], rounds, repeats)
