"""The quality harness behind scripts/quality, on PDFs the tests make."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

from bench import quality
from pagefleet.layout.schema import OutlineEntry
from tests import layout_pdfs

ROOT = Path(__file__).resolve().parents[1]


def test_ordered_recall_counts_words_in_order() -> None:
    assert quality.ordered_recall(["a", "b", "c", "d"], ["a", "b", "c", "d"]) == 1.0
    # A word moved out of order counts as lost once.
    assert quality.ordered_recall(["a", "b", "c", "d"], ["b", "a", "c", "d"]) == 0.75
    assert quality.ordered_recall(["a", "b"], []) == 0.0
    assert quality.ordered_recall([], ["a"]) is None


def test_order_free_recall_and_precision() -> None:
    reference = ["a", "b", "c", "d"]
    assert quality.bag_recall(reference, ["d", "c", "b", "a"]) == 1.0
    assert quality.bag_recall(reference, ["a", "a", "b"]) == 0.5
    # Words the text layer lacks (a ruler's numbers, a made-up word) lower precision only.
    assert quality.precision(reference, ["a", "b", "c", "d", "7", "8"]) == 4 / 6
    assert quality.precision(reference, []) is None


def test_order_free_recall_forgives_a_word_cut_elsewhere() -> None:
    # pdfium cuts "S" from its subscript "r" (a line break between them) and glues another
    # subscript to the next word ("QSLret"); the Markdown has "Sr" and "QSLr et".
    reference = ["soit", "s", "r", "un", "qslret", "m"]
    found = ["soit", "sr", "un", "qslr", "et", "m"]
    assert quality.bag_recall(reference, found) == 1.0
    assert quality.precision(reference, found) == 1.0
    # Only adjacent leftovers join: "s" and "r" apart do not make "sr", and a word matched
    # as itself is not used again.
    assert quality.bag_recall(["s", "x", "r"], ["sr", "x"]) == 1 / 3
    assert quality.bag_recall(["s", "r", "sr"], ["sr"]) == 1 / 3
    # A word truly lost stays lost.
    assert quality.bag_recall(["a", "b"], ["a"]) == 0.5


def test_in_order_recall_compares_words_cut_alike() -> None:
    # pdfium puts R's superscript n on a line of its own ("r n"), the Markdown has "rn"; it
    # glues a subscript to the next word ("qslret"), the Markdown has "qslr et".
    reference = ["in", "r", "n", "ist", "qslret", "m", "r", "n"]
    found = ["in", "rn", "ist", "qslr", "et", "m", "rn"]
    assert quality.ordered_recall(reference, found) == 3 / 8
    recut = quality.recut(reference, found)
    assert recut == reference
    assert quality.ordered_recall(reference, recut) == 1.0
    # Words cut alike stay as they are; a word truly missing or moved still costs.
    assert quality.recut(["a", "b", "c"], ["c", "a"]) == ["c", "a"]
    assert (
        quality.ordered_recall(["r", "n", "x"], quality.recut(["r", "n", "x"], ["x", "rn"]))
        == 2 / 3
    )


def test_lcs_matches_dynamic_programming() -> None:
    rng = random.Random(5)
    for _ in range(300):
        a = rng.choices("abc", k=rng.randint(0, 12))
        b = rng.choices("abc", k=rng.randint(0, 12))
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = (
                    table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
                )
        assert quality.lcs_length(a, b) == table[-1][-1]


def test_words_ignore_markup_and_hyphenation() -> None:
    assert quality.words("**Bold** [link](x) docu-\nmented well-known") == [
        "bold", "link", "x", "documented", "wellknown",
    ]  # fmt: skip
    assert quality.words("com\ufffepile") == ["compile"]
    # Letters and digits split alike on both sides; emphasis inside a word is no break.
    assert quality.words("x0 R2") == ["x", "0", "r", "2"]
    assert quality.markdown_words("*t*x [site](https://a.example/b) fz\\_var") == [
        "tx", "site", "fz", "var",
    ]  # fmt: skip


def test_heading_score() -> None:
    outline: list[OutlineEntry] = [
        {"title": "Intro", "level": 1, "page": 1},
        {"title": "Detail", "level": 2, "page": 1},
        {"title": "Missing", "level": 2, "page": 2},
        {"title": "End", "level": 1, "page": 3},
    ]
    score = quality.heading_score("# Intro\n\ntext\n\n### Detail\n\n# End\n", outline)
    assert score.recall == 0.75
    assert score.levels == 1.0  # down then up, as in the outline
    flat = quality.heading_score("# Intro\n\n# Detail\n\n# End\n", outline)
    assert flat.levels == 0.0
    # A heading holds a title when the title's words are in it, in order; a running head
    # set as a heading far ahead does not cost the titles in between.
    numbered = quality.heading_score(
        "# 1 Intro (2019)\n\n# End of Detail\n\n## Detail\n\n# End\n", outline
    )
    assert numbered.recall == 0.75
    # Word breaks made differently on the two sides, as real bookmarks have them (mineru's
    # demo1, grobid's 0807.3577): the letters of a run of the heading's words hold the title,
    # accents aside; a run starts and ends at word breaks.
    broken: list[OutlineEntry] = [
        {"title": "Adjusted FDCs-magnitude of flow", "level": 1, "page": 1},
        {"title": "3. The Lema{^i }tre--Tolman model", "level": 1, "page": 1},
        {"title": "Art", "level": 1, "page": 2},
    ]
    markdown = (
        "# 4.2. Adjusted FDCs\u2014magnitude of flow\n\n"
        "# 3. The Lema\u00eetre\u2013Tolman model\n\n# Start\n"
    )
    assert quality.heading_score(markdown, broken).recall == 2 / 3


def test_measure_a_generated_report(tmp_path: Path) -> None:
    report = quality.measure(layout_pdfs.long_report(tmp_path, pages=3))
    assert report.pages == 3
    assert report.ocr_pages == 0
    # Everything but the running header and page numbers is in the Markdown, in order.
    assert report.ours.in_order is not None and report.ours.in_order >= 0.995
    assert report.ours.order_free == 1.0
    assert report.ours.precision == 1.0
    assert report.ref_words > 500
    assert report.convert_s > 0 and report.floor_s > 0


def test_launcher_prints_the_table(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    layout_pdfs.with_outline(tmp_path / "mine")
    out = tmp_path / "report.md"
    result = subprocess.run(  # paths relative to where the user stands, outside the repository
        [str(ROOT / "scripts" / "quality"), "mine", "--peers", "none", "--out", "report.md"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    # The main table, then the per-document comparison with pdftext.
    rows = [r for r in result.stdout.splitlines() if r.startswith("| with_outline.pdf")]
    assert len(rows) == 2
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[7] == "6"  # outline entries
    assert cells[8] == "100.0%"  # headings found once the outline is given
    assert out.read_text() == result.stdout
