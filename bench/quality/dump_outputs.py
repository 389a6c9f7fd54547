"""The text-layer converter's page dicts and Markdown of each PDF, written to compare two trees.

``python -m bench.quality.dump_outputs OUT PDF...`` writes ``OUT/<name>.json`` (the page dicts)
and ``OUT/<name>.md`` (the Markdown) per PDF, OCR off (what the text layer gives; OCR pages
do not go through it). Run it in each tree (its root the working directory: ``-m`` puts that
first on the path), then ``diff -r`` the two folders: a change meant to make the converter
faster must leave them byte for byte the same.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pagefleet.layout import render_document
from pagefleet.layout.outline import read_outline
from runner.converters.text_layer import extract_pages


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for pdf in map(Path, sys.argv[2:]):
        pages = extract_pages(pdf, 1, ocr="off")
        (out / f"{pdf.stem}.json").write_text(
            json.dumps(pages, sort_keys=True, indent=0, ensure_ascii=False)
        )
        (out / f"{pdf.stem}.md").write_text(render_document(pages, outline=read_outline(pdf)))


if __name__ == "__main__":
    main()
