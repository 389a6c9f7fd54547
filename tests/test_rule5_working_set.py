"""Rule 5 on the working set (``bench/quality/working_set.tsv``: 35 documents the converter
was not tuned on): each PDF cut into 3-page chunk PDFs as the splitter cuts them (short
chunks, so that most of these short documents are cut at all), each chunk converted on its
own, and the chunks' Markdown equal to the whole document's, byte for byte.

The shared corpus goes through the whole pipeline in ``test_corpus.py``; these documents are
kept out of the repository as the corpus is, collected with ``python -m
bench.quality.working_set MIRRORS FOLDER`` into ``../facts-corpus`` beside the checkout (or
``$PAGEFLEET_WORKING_SET``). OCR stays off: a page's OCR is its own whichever file holds it, and
the document-wide decisions rule 5 is about are all made on the text layers' pages.
"""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from bench.quality import working_set
from pagefleet.layout import ChunkLayout, render_chunks, render_document
from pagefleet.layout.outline import read_outline
from runner.converters.text_layer import extract_pages
from tests import layout_pdfs

WORKING_SET = Path(
    os.environ.get("PAGEFLEET_WORKING_SET", Path(__file__).resolve().parents[2] / "facts-corpus")
)
CHUNK_PAGES = 3


def _chunked_differs(pdf: Path) -> str | None:
    """The PDF's name if its chunks' Markdown is not the whole document's."""
    outline = read_outline(pdf)
    whole = render_document(extract_pages(pdf, 1, ocr="off"), outline=outline)
    with tempfile.TemporaryDirectory(prefix="pagefleet-rule5-") as folder:
        chunks = [
            ChunkLayout.of(extract_pages(chunk, first, ocr="off"), outline)
            for chunk, first in layout_pdfs.split(pdf, Path(folder), CHUNK_PAGES)
        ]
    return None if render_chunks(chunks) == whole else pdf.name


def test_rule_5_on_every_working_set_pdf() -> None:
    if not WORKING_SET.is_dir():
        pytest.skip(
            f"the working set is absent ({WORKING_SET} not found: "
            "python -m bench.quality.working_set MIRRORS FOLDER collects it)"
        )
    pdfs = sorted(WORKING_SET.glob("*.pdf"))
    assert {p.name for p in pdfs} >= {e.name for e in working_set.entries()}
    with ProcessPoolExecutor(2) as pool:
        differ = [name for name in pool.map(_chunked_differs, pdfs) if name]
    assert differ == []
