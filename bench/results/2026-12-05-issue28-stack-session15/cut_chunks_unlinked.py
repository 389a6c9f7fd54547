"""The splitter's chunk PDFs of some corpora, cut as the splitter cuts them: their digest, the
CPU of measuring and of cutting, and the pages loaded to mend links.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-stack-session15/cut_chunks_unlinked.py \
        /work/shared/corpus/real [/work/facts-corpus /work/shared/corpus/bad]

As ``../2026-12-05-issue28-stack-3/cut_chunks_cpu.py`` (the same digest, less what pdfium writes
new at every save), but each chunk is cut with the pages the measuring found without links to
mend (``PageCosts.unlinked``) where the tree has them, as ``pagefleet/splitting.py`` does; on a
tree without them, as before. Prints the digest, measuring and cutting CPU seconds, and the
pages ``FPDF_LoadPage`` loaded while cutting.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from pathlib import Path
from typing import Any

import pypdfium2.raw as pdfium_c

from pagefleet.costs import measure_pages, plan_policy
from pagefleet.pdf import cut_chunk, open_pdf
from pagefleet.planning import plan_by_cost
from pagefleet.settings import load_settings

_PER_SAVE = re.compile(rb"/ID\s*\[\s*<[0-9A-Fa-f]*>\s*<[0-9A-Fa-f]*>\s*\]|/CreationDate\(D:\d+\)")
LOADS = [0]
_load = pdfium_c.FPDF_LoadPage


def _counting(document: Any, index: int) -> Any:
    LOADS[0] += 1
    return _load(document, index)


def main() -> None:
    settings = load_settings(workers=2)
    digest, measure_cpu, cut_cpu, loads = hashlib.sha256(), 0.0, 0.0, 0
    for folder in sys.argv[1:]:
        for path in sorted(Path(folder).glob("*.pdf")):
            try:
                doc = open_pdf(
                    path.read_bytes(), max_bytes=settings.max_bytes, max_pages=settings.max_pages
                )
            except Exception as exc:
                digest.update(repr(exc).encode())
                continue
            started = time.process_time()
            costs = measure_pages(doc, settings)
            measure_cpu += time.process_time() - started
            # A tree from before PageCosts.unlinked cuts as it did.
            kwargs: dict[str, Any] = (
                {"unlinked": costs.unlinked} if hasattr(costs, "unlinked") else {}
            )
            for chunk in plan_by_cost(costs.seconds, plan_policy(settings, costs)):
                started = time.process_time()
                pdfium_c.FPDF_LoadPage = _counting
                try:
                    data = cut_chunk(doc, chunk, **kwargs)
                except Exception as exc:
                    data = repr(exc).encode()
                finally:
                    pdfium_c.FPDF_LoadPage = _load
                cut_cpu += time.process_time() - started
                digest.update(_PER_SAVE.sub(b"", data))
            doc.close()
    loads = LOADS[0]
    print(
        digest.hexdigest(),
        f"measure CPU {measure_cpu:.3f} s, cut CPU {cut_cpu:.3f} s, pages loaded to cut {loads}",
    )


if __name__ == "__main__":
    main()
