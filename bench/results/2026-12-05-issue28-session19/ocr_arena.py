"""The OCR of the scanned service bulletin, warm, with onnxruntime's CPU memory arena as RapidOCR
sets it (off) or on: user and system CPU seconds of each conversion.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session19/ocr_arena.py \
        /work/shared/corpus/real/pdfminer__175-scanned-service-bulletin.pdf none|arena
"""

import os
import sys
import time

from rapidocr_onnxruntime.utils import infer_engine

_options = infer_engine.OrtInferSession._init_sess_opts
MODE = sys.argv[2]


def _patched(config: dict) -> infer_engine.SessionOptions:
    options = _options(config)
    if MODE == "arena":
        options.enable_cpu_mem_arena = True
    return options


infer_engine.OrtInferSession._init_sess_opts = staticmethod(_patched)

from runner.converters.text_layer import extract_pages  # noqa: E402  (after the patch)

extract_pages(sys.argv[1], 1, ocr_threads=1)
for _ in range(3):
    before, started = os.times(), time.perf_counter()
    extract_pages(sys.argv[1], 1, ocr_threads=1)
    after = os.times()
    print(
        MODE,
        f"user {after.user - before.user:.2f} sys {after.system - before.system:.2f}",
        f"wall {time.perf_counter() - started:.2f}",
    )
