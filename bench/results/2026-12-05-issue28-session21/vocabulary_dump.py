"""Each chunk's vocabulary as the renderer counts it (``ChunkStats.vocabulary``), one line per
chunk with a digest of its sorted words, for a diff of two trees.

    PYTHONPATH=TREE .venv/bin/python \
        bench/results/2026-12-05-issue28-session21/vocabulary_dump.py CACHE OUT_FILE

CACHE as for ``render_outputs.py``; chunks of 7 and 16 pages and the whole document.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from pagefleet.layout import ChunkLayout
from pagefleet.layout.analysis import analyse


def main() -> None:
    lines = []
    for path in sorted(Path(sys.argv[1]).glob("*.json")):
        doc = json.loads(path.read_text())
        pages, outline = doc["pages"], doc["outline"]
        for size in (7, 16, len(pages)):
            chunks = [
                ChunkLayout.of(pages[i : i + size], outline)
                for i in range(0, len(pages), max(size, 1))
            ]
            analyse(chunks, len(pages))
            for index, chunk in enumerate(chunks):
                assert chunk.stats is not None  # analyse counted it
                words = sorted(chunk.stats.vocabulary)
                digest = hashlib.md5(json.dumps(words).encode()).hexdigest()
                lines.append(f"{path.stem} {size} {index} {digest} {len(words)}")
    Path(sys.argv[2]).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
