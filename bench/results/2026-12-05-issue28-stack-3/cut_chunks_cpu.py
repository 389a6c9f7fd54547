"""The splitter's chunk PDFs of some corpora: their digest and the CPU of cutting them.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-stack-3/cut_chunks_cpu.py \
        /work/shared/corpus/real [/work/facts-corpus /work/shared/corpus/bad]

Each PDF is opened, measured and planned as the splitter does (2 lanes), and each chunk cut
with ``cut_chunk``; the digest covers every chunk PDF (or the error a cut raised), less what
pdfium writes new at every save (the trailer's /ID, the /CreationDate), so two trees that cut
the same chunks print the same digest.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from pathlib import Path

from pagefleet.costs import measure_pages, plan_policy
from pagefleet.pdf import cut_chunk, open_pdf
from pagefleet.planning import plan_by_cost
from pagefleet.settings import load_settings

_PER_SAVE = re.compile(rb"/ID\s*\[\s*<[0-9A-Fa-f]*>\s*<[0-9A-Fa-f]*>\s*\]|/CreationDate\(D:\d+\)")


def main() -> None:
    settings = load_settings(workers=2)
    digest, cpu = hashlib.sha256(), 0.0
    for folder in sys.argv[1:]:
        for path in sorted(Path(folder).glob("*.pdf")):
            try:
                doc = open_pdf(
                    path.read_bytes(), max_bytes=settings.max_bytes, max_pages=settings.max_pages
                )
            except Exception as exc:
                digest.update(repr(exc).encode())
                continue
            costs = measure_pages(doc, settings)
            for chunk in plan_by_cost(costs.seconds, plan_policy(settings, costs)):
                started = time.process_time()
                try:
                    data = cut_chunk(doc, chunk)
                except Exception as exc:
                    data = repr(exc).encode()
                cpu += time.process_time() - started
                digest.update(_PER_SAVE.sub(b"", data))
            doc.close()
    print(digest.hexdigest(), f"cut CPU {cpu:.3f} s")


if __name__ == "__main__":
    main()
