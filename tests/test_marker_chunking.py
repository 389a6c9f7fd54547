"""A document marker converts in chunks reads as if marker had seen it whole (rule 5, marker).

Two parts. The first runs everywhere (``make test``): :mod:`pagefleet.marker_assembly` on
hand-made chunk pages, and :mod:`pagefleet.marker_headings` against scikit-learn's KMeans where
scikit-learn is installed. The second needs marker-pdf and torch, so it skips in the default
environment and runs in the runner image's (``make marker-chunking``, docker/runner.mk, whose
output is committed under bench/results/): the real marker 2.0.0 pipeline, its model servers
the stubs of tests/stub_models.py (the same page image and prompt give the same answer), on a
generated document whole, and the same document cut by the splitter's code into chunks of 1, 3
and 16 pages, converted by runner/converters/marker.py and assembled by pagefleet/assembly.py
(both runs: bench/quality/marker_runs.py, which ``scripts/quality --converter marker`` runs on
real documents). The Markdown must be the same.

What a chunk cannot see and assembly does not make again is left out of the documents:
running headers and footers repeated as text blocks (marker's IgnoreTextProcessor drops the
first or last block of a page when its text recurs on 20% of the pages,
marker/processors/ignoretext.py:44-95), and links to a page of another chunk (a chunk PDF
keeps no link whose target page it lacks).
"""

from __future__ import annotations

import importlib.util
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.quality.marker_runs import (
    chunked_markdown,
    settings_values,
    stub_servers,
    whole_markdown,
)
from pagefleet import marker_assembly
from pagefleet.marker_headings import bucket_headings


def _page(markdown: str, headings: list[tuple[int, float, int]] = (), **ends: Any) -> dict:
    """A marker chunk page: its Markdown and structure, headings as (id, height, level)."""
    structure: dict[str, Any] = {
        "headings": [{"id": i, "height": h} for i, h, _ in headings],
        "heading_lines": [{"id": i, "level": lv, "fixed": False} for i, _, lv in headings],
    }
    structure.update(ends)
    return {"number": 0, "markdown": markdown, "structure": structure}


TEXT_FIRST = {
    "type": "Text",
    "structure": True,
    "ignored": False,
    "starts_indented": False,
    "first_quadrant": True,
}
TEXT_LAST = {
    "type": "Text",
    "continued": False,
    "lines": 5,
    "ignored": False,
    "full_width": True,
    "hyphenated": False,
}


def test_heading_levels_are_ranked_over_every_chunk() -> None:
    # Five headers, one per chunk: each chunk alone saw one, ranked nothing, rendered "##"
    # (marker's default level); over the document they fall into four height ranges.
    heights = [30.0, 20.0, 14.0, 11.0, 20.0]
    chunks = [[_page(f"## Title {i}\n\nBody {i}.", [(1, h, 2)])] for i, h in enumerate(heights)]
    text = marker_assembly.render(chunks)
    assert [line for line in text.splitlines() if line.startswith("#")] == [
        "# Title 0",
        "## Title 1",
        "### Title 2",
        "#### Title 3",
        "## Title 4",
    ]


def test_a_paragraph_runs_on_across_a_chunk_boundary_as_marker_joins_it() -> None:
    first = [
        _page(
            "Intro.\n\nThe paragraph runs on-",
            first=TEXT_FIRST,
            last={**TEXT_LAST, "hyphenated": True},
        )
    ]
    second = [_page("to the next chunk.\n\nAnother.", first=TEXT_FIRST, last=TEXT_LAST)]
    assert marker_assembly.render([first, second]) == (
        "Intro.\n\nThe paragraph runs onto the next chunk.\n\nAnother.\n"
    )
    indented = [_page("Indented.", first={**TEXT_FIRST, "starts_indented": True}, last=TEXT_LAST)]
    assert marker_assembly.render([first, indented]) == (
        "Intro.\n\nThe paragraph runs on-\n\nIndented.\n"
    )


def test_within_a_chunk_marker_s_own_continuation_stands() -> None:
    chunk = [
        _page("Runs on ", first=TEXT_FIRST, last={**TEXT_LAST, "continued": True}),
        _page("here.", first=TEXT_FIRST, last=TEXT_LAST),
    ]
    assert marker_assembly.render([chunk]) == "Runs on here.\n"


# marker's modules, imported inside the tests, warn of their own deprecated pydantic use, and
# scikit-learn of clusters left empty (marker silences it: sectionheader.py:15-16).


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore:Number of distinct clusters")
@pytest.mark.skipif(
    importlib.util.find_spec("marker") is None, reason="scikit-learn comes with marker-pdf"
)
def test_the_ranking_is_scikit_learn_s_on_random_heights(marker_env: dict[str, Any]) -> None:
    """marker/processors/sectionheader.py:84-124 with scikit-learn's KMeans, against ours
    (marker_env: surya reads its servers' addresses when marker is first imported)."""
    from marker.processors.sectionheader import SectionHeaderProcessor

    processor = SectionHeaderProcessor({})
    rng = random.Random(7)
    differ = 0
    for trial in range(600):
        n = rng.randint(1, 60)
        if trial % 2:
            heights = [round(rng.uniform(8, 30), 3) for _ in range(n)]
        else:
            heights = [rng.choice([0.0, 9.6, 11.95, 12.0, 14.4, 18.0, 24.0]) for _ in range(n)]
        differ += processor.bucket_headings(heights) != bucket_headings(heights)
    # Heights exactly symmetric about a centre tie two k-means++ candidates; BLAS rounding
    # decides those in scikit-learn, one way on one CPU and another on the next.
    assert differ <= 2


# --- the real marker pipeline ---------------------------------------------------------------

PAGES = 18
TITLES = (
    "Scope",
    "Terms",
    "Design",
    "Inputs",
    "Outputs",
    "Limits",
    "Costs",
    "Risks",
    "Tests",
    "Faults",
    "Logs",
    "Tuning",
    "Upgrades",
    "Backups",
    "Access",
    "Audit",
    "Support",
    "Index",
)
CHUNK_SIZES = (1, 3, 16)


@pytest.fixture(scope="module")
def marker_env() -> Iterator[dict[str, Any]]:
    pytest.importorskip(
        "marker.converters.pdf",
        reason="marker-pdf is not installed: run `make marker-chunking` (the runner image's env)",
    )
    with stub_servers() as vlm_url:
        yield {"vlm_url": vlm_url}


def generated_document(path: Path) -> Path:
    """18 sections, each from the top of a page: a blue heading of one of four sizes (a chunk of
    3 pages sees too few headers to rank, the document enough), two long paragraphs that run on
    to the next page (sections 3 and 14: across the chunk boundaries at pages 3/4 and 16/17), a
    purple table that runs on to the next page, green footnotes, red pictures (21 pages)."""
    from fpdf import FPDF
    from PIL import Image

    from bench import stub_models

    picture = path.with_name("picture.png")
    Image.new("RGB", (400, 300), (200, 40, 40)).save(picture)
    sizes = [24, 18, 14, 12, 18, 14]
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod".split()
    rng = random.Random(3)

    def prose(count: int) -> str:
        return " ".join(rng.choice(words) for _ in range(count)).capitalize() + "."

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(True, margin=25)
    for number in range(1, PAGES + 1):
        pdf.add_page()
        pdf.set_y(30)
        pdf.set_text_color(*stub_models.HEADING_INK)
        pdf.set_font("helvetica", style="B", size=sizes[number % len(sizes)])
        # Titles differ in words, not only in number: marker drops a page's first block when
        # its text less numbers recurs (IgnoreTextProcessor), and a chunk cannot know that.
        pdf.cell(text=f"{TITLES[number - 1]} {words[number % len(words)]}")
        pdf.ln(16)
        pdf.set_text_color(0, 0, 0)
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(w=0, h=7, text=prose(40))
        pdf.ln(6)
        if number in (2, 11):
            pdf.image(str(picture), x=30, w=80)
            pdf.ln(6)
        if number in (3, 14):  # a paragraph long enough to run onto the next page
            pdf.set_y(200)
            pdf.multi_cell(w=0, h=7, text=prose(220))
            continue
        if number == 6:  # a table that runs onto page 7
            pdf.set_y(190)
            pdf.set_text_color(*stub_models.TABLE_INK)
            pdf.set_draw_color(*stub_models.TABLE_INK)
            with pdf.table(line_height=8) as table:
                for row in range(24):
                    cells = table.row()
                    for col in range(3):
                        cells.cell(f"r{row} c{col}" if row else f"Head {col}")
            pdf.set_text_color(0, 0, 0)
            continue
        if number in (5, 9, 12):
            pdf.set_y(262)
            pdf.set_text_color(*stub_models.FOOTNOTE_INK)
            pdf.set_font("helvetica", size=8)
            pdf.cell(text=f"{number} A footnote on page {number}.")
            pdf.set_text_color(0, 0, 0)
    pdf.output(str(path))
    return path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore:Number of distinct clusters")
async def test_marker_in_chunks_gives_marker_s_whole_document_markdown(
    marker_env: dict[str, Any], tmp_path: Path
) -> None:
    from pagefleet.settings import load_settings

    pdf = generated_document(tmp_path / "doc.pdf")
    values = settings_values(marker_env["vlm_url"])
    started = time.monotonic()
    whole = whole_markdown(pdf, values)
    print(f"whole ({PAGES} sections): {time.monotonic() - started:.1f} s, process start included")
    (tmp_path / "whole.md").write_text(whole)
    # The document holds what the property is about, as marker renders it whole.
    headings = [line for line in whole.splitlines() if line.startswith("#")]
    assert len({line.split(" ")[0] for line in headings}) >= 3, headings
    assert "Head 0" in whole and "r23 c2" in whole
    assert "A footnote on page 9." in whole
    assert whole.count(".jpeg)") >= 2
    failures = []
    for size in CHUNK_SIZES:
        started = time.monotonic()
        chunked = await chunked_markdown(
            pdf, load_settings(**values), size, tmp_path / f"by-{size}"
        )
        print(f"chunks of {size}: {time.monotonic() - started:.1f} s, process start included")
        (tmp_path / f"chunked-{size}.md").write_text(chunked)
        if chunked != whole:
            import difflib

            diff = difflib.unified_diff(
                whole.splitlines(True), chunked.splitlines(True), "whole", f"chunks of {size}"
            )
            print("".join(diff))
            failures.append(size)
    assert failures == [], f"chunked Markdown differs from whole for chunk sizes {failures}"
