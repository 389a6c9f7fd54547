"""The text-layer converter's CPU over the shared corpus's chunk PDFs, warm, in one process
with its heap frozen as the conversion child's is: run alone, then two at once, to tell the
converter's own cost from what the embedded stack's round adds to it.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session19/chunk_loop.py prep
    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session19/chunk_loop.py solo
    (... chunk_loop.py A & ... chunk_loop.py B; wait)

``prep`` cuts each document's chunks as the splitter plans them into CHUNKS.
"""

import gc
import glob
import json
import sys
import tempfile
import time
from pathlib import Path

import pypdfium2 as pdfium

from pagefleet.costs import measure_pages, plan_policy
from pagefleet.pdf import cut_chunk
from pagefleet.planning import plan_by_cost
from pagefleet.settings import load_settings
from runner.converters.text_layer import TextLayerConverter

CHUNKS = Path("/work/tmp19/chunks")
INDEX = CHUNKS / "index.json"


def prep() -> None:
    settings = load_settings()
    CHUNKS.mkdir(exist_ok=True)
    index = []
    for name in sorted(glob.glob("/work/shared/corpus/real/*.pdf")):
        doc = pdfium.PdfDocument(name)
        costs = measure_pages(doc, settings)
        for chunk in plan_by_cost(costs.seconds, plan_policy(settings, costs)):
            path = CHUNKS / f"{Path(name).stem}-{chunk.index}.pdf"
            path.write_bytes(cut_chunk(doc, chunk, unlinked=costs.unlinked))
            index.append((str(path), chunk.first_page))
        doc.close()
    INDEX.write_text(json.dumps(index))


def rounds(label: str) -> None:
    converter = TextLayerConverter(load_settings())
    converter.ocr_threads = 1  # the share of each of 2 workers on 2 cores
    index = json.loads(INDEX.read_text())
    gc.collect()
    gc.freeze()
    for round_ in range(3):  # the first is a warm-up
        started = time.process_time()
        for path, first_page in index:
            with tempfile.TemporaryDirectory() as assets:
                converter.convert(Path(path), first_page, Path(assets))
        if round_:
            print(label, f"round cpu {time.process_time() - started:.2f}", flush=True)


if __name__ == "__main__":
    prep() if sys.argv[1] == "prep" else rounds(sys.argv[1])
