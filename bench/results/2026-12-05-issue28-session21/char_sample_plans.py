"""What sampling 16 pages instead of 32 for a document's characters (``costs._CHAR_SAMPLE``)
would do to the splitter's plans: each PDF's estimated text-page seconds and its chunks with
32, 16 and every page counted, and whether the plans of 32 and 16 differ.

    PYTHONPATH=. .venv/bin/python \
        bench/results/2026-12-05-issue28-session21/char_sample_plans.py PDF_FOLDER...
"""

from __future__ import annotations

import sys
from pathlib import Path

import pypdfium2 as pdfium

from pagefleet import costs
from pagefleet.planning import plan_by_cost
from pagefleet.settings import load_settings

SAMPLES = (32, 16, 10**9)  # the default, half of it, every page


def main() -> None:
    settings = load_settings(bucket="char-sample", workers=2)
    differ = 0
    for pdf in sorted(p for folder in sys.argv[1:] for p in Path(folder).glob("*.pdf")):
        doc = pdfium.PdfDocument(pdf.read_bytes())
        seen = []
        for sample in SAMPLES:
            costs._CHAR_SAMPLE = sample
            measured = costs.measure_pages(doc, settings)
            plan = plan_by_cost(measured.seconds, costs.plan_policy(settings, measured))
            seen.append((measured.text_page_s, [(c.first_page, c.last_page) for c in plan]))
        same = seen[0][1] == seen[1][1]
        differ += not same
        print(
            f"{pdf.stem[:40]:40} pages {len(doc):4}"
            f" text page s {seen[0][0]:.4f} / {seen[1][0]:.4f} / {seen[2][0]:.4f}"
            f" chunks {len(seen[0][1])} / {len(seen[1][1])} / {len(seen[2][1])}"
            f"{'' if same else '  plans differ'}"
        )
    print(f"plans that differ between 32 and 16 sampled pages: {differ}")


if __name__ == "__main__":
    main()
