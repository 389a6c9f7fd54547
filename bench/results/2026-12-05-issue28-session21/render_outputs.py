"""Every cached document's Markdown, whole and chunked, for a byte-for-byte diff of two trees.

    PYTHONPATH=TREE .venv/bin/python \
        bench/results/2026-12-05-issue28-session21/render_outputs.py CACHE OUT

CACHE holds each PDF's page dicts and outline as JSON (``bench_render.py extract`` of
``../2026-12-05-issue28-render-session16/``). Each document is written three ways: whole
(``render_document``), and in chunks of 7 and of 16 pages, with a forecast (``write_chunks``)
after every landing but the last in a shuffled order, then ``render_chunks``. Run it in both
trees and ``diff -r`` the two OUTs; within one tree, the three files of a document are equal
(rule 5).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from pagefleet.layout import ChunkLayout, render_chunks, render_document, write_chunks

CHUNK_PAGES = (7, 16)


def main() -> None:
    cache, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(cache.glob("*.json")):
        doc = json.loads(path.read_text())
        pages, outline = doc["pages"], doc["outline"]
        (out / f"{path.stem}.whole.md").write_text(render_document(pages, outline))
        for size in CHUNK_PAGES:
            chunks = [
                ChunkLayout.of(pages[i : i + size], outline) for i in range(0, len(pages), size)
            ]
            order = list(range(len(chunks)))
            random.Random(size * 1000 + len(pages)).shuffle(order)
            landed: list[int] = []
            for index in order[:-1]:
                landed.append(index)
                write_chunks([chunks[i] for i in sorted(landed)], len(pages))
            (out / f"{path.stem}.c{size}.md").write_text(render_chunks(chunks))
    print(f"{len(list(out.iterdir()))} files in {out}")


if __name__ == "__main__":
    main()
