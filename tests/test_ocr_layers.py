"""Scans read by OCR: a hidden OCR layer worse than ours is read again, a good one is kept, and
a Latin page decodes in its own script with its word gaps (facts in generated_ocr.tsv)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from bench.quality.facts import FACTS_DIR, FactsScore, load_facts
from pagefleet.layout import render_document
from runner.converters.ocr import _decode_page, _Dictionary
from runner.converters.text_layer import convert_document, extract_pages
from tests import facts_pdfs_facts31, facts_pdfs_ocr


@pytest.mark.parametrize(
    "generate",
    [
        facts_pdfs_ocr.bad_ocr_layer,
        facts_pdfs_ocr.tight_latin_scan,
        # Columns a narrow gutter apart between lines across the page (generated_facts31.tsv).
        facts_pdfs_facts31.columns_flyer_scan,
    ],
    ids=lambda g: g.__name__,
)
def test_scans_hold_their_facts(tmp_path: Path, generate: Callable[[Path], Path]) -> None:
    pdf = generate(tmp_path)
    markdown = convert_document(pdf, ocr="auto", ocr_threads=1)
    score = FactsScore.of(load_facts(FACTS_DIR)[pdf.name], markdown)
    assert not score.failed, [str(f) for f in score.failed]
    assert not any(ord(c) >= 0x2E80 for c in markdown)  # a Latin page: no CJK


def test_a_bad_layer_is_kept_where_ocr_is_off(tmp_path: Path) -> None:
    pages = extract_pages(facts_pdfs_ocr.bad_ocr_layer(tmp_path), 1, ocr="off")
    assert not pages[0]["ocr"]
    assert "gaugc kccpers" in render_document(pages)


def test_a_good_hidden_layer_is_kept(tmp_path: Path) -> None:
    image = facts_pdfs_ocr._image(tmp_path, facts_pdfs_ocr.SCAN_LINES, 0.3, "good.png")
    pdf = facts_pdfs_ocr._scan(tmp_path, image, "good.pdf", facts_pdfs_ocr.SCAN_LINES)
    pages = extract_pages(pdf, 1)
    assert not pages[0]["ocr"]
    assert "gauge keepers could warn" in render_document(pages)


# A dictionary as RapidOCR builds one: "blank" first, the model's characters, the space last.
DICTIONARY = _Dictionary(["blank", "a", "b", "l", "1", "I", "A", "河", "水", " "])


def _steps(*frames: dict[str, float]) -> np.ndarray:
    """Per step, the probability of each character named (the rest to "blank")."""
    steps = np.zeros((len(frames), len(DICTIONARY.characters)), dtype=np.float32)
    for row, frame in zip(steps, frames, strict=True):
        for char, p in frame.items():
            row[DICTIONARY.characters.index(char)] = p
        row[0] = 1.0 - sum(frame.values())
    return steps


def test_a_latin_page_reads_no_cjk_and_keeps_its_word_gaps() -> None:
    # "ab", a gap the space scores low, "河" likelier than "b" at one step, then capitals
    # with an "l" among them where the model gives "1" the second place.
    line = _steps(
        {"a": 0.9},
        {"b": 0.9},
        {" ": 0.1},
        {"a": 0.9},
        {"河": 0.5, "b": 0.4},
        {" ": 0.3},
        {"A": 0.9},
        {},
        {"A": 0.9},
        {"l": 0.7, "1": 0.2},
    )
    # A second line of Latin letters: the page's one Han character is under a tenth of them.
    texts = _decode_page([line, _steps(*[{"a": 0.9}, {"b": 0.9}] * 6)], DICTIONARY)
    assert [t for t, _ in texts] == ["ab ab AA1", "ab" * 6]


def test_a_cjk_page_reads_as_the_model_reads_it() -> None:
    line = _steps({"河": 0.9}, {" ": 0.1}, {"水": 0.9}, {"l": 0.6, "1": 0.3})
    assert [t for t, _ in _decode_page([line], DICTIONARY)] == ["河水l"]


def test_a_narrow_gap_needs_a_likelier_space() -> None:
    narrow = _steps({"a": 0.9}, {" ": 0.05}, {}, {"b": 0.9})
    wide = _steps({"a": 0.9}, {" ": 0.05}, {}, {}, {"b": 0.9})
    assert [t for t, _ in _decode_page([narrow, wide], DICTIONARY)] == ["ab", "a b"]
