"""marker's internal links and their anchors, whole and in chunks: a link whose target page is
in its own chunk reads in the chunked Markdown as in the whole document's, whether the link
names its destination or gives the page (pagefleet/pdf.py keeps both in a chunk PDF).

Needs marker-pdf and torch, so it skips in the default environment; run in the runner image's
(``PYTHONPATH=$PWD /work/venv-marker/bin/python -m pytest --noconftest -p no:cacheprovider
tests/test_marker_links.py``), the model servers the stubs of bench/stub_models.py. On
2026-12-05, load average 31: passes in 104 s; with main's pagefleet/pdf.py it fails (the links
of pages 1 and 3 and their anchors missing from the chunked Markdown).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF

from bench.quality.marker_runs import chunked_markdown, settings_values, whole_markdown
from tests.test_marker_chunking import marker_env  # noqa: F401 (the stub servers' fixture)

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


# Each page's link: to a named destination, or to a page given (2 back to 1; 3 forward to 4, the
# array pdfium's import drops).
TARGETS: dict[int, str | int] = {1: "#dest2", 2: 1, 3: 4, 4: "#dest3"}


def linked_document(path: Path) -> Path:
    """Four pages of prose, each with a named destination at its top and a link (TARGETS)
    to the other page of its pair (1-2, 3-4)."""
    # Each page its own /MediaBox (a size other than the document's default): pdftext flattens
    # a page for marker (marker/providers/pdf.py:43-46, flatten_pdf), and pdfium's flattening
    # gives a page with annotations and an inherited box a US Letter one instead, so the whole
    # document's links would miss their text (a chunk's pages carry their box, copied).
    pdf = FPDF(format=(200, 280))
    pdf.set_font("helvetica", size=11)
    for page, target in TARGETS.items():
        pdf.add_page(format="A4")
        pdf.set_y(30)
        # Each page's first block its own words: marker drops a first block that recurs.
        words = WORDS[page * 5 :] + WORDS[: page * 5]
        pdf.multi_cell(w=0, h=7, text=" ".join(words * 3) + ".")
        pdf.set_link(name=f"dest{page}", y=30, page=page)
        pdf.ln(8)
        link = target if isinstance(target, str) else pdf.add_link(y=30, page=target)
        pdf.write(7, "Plain words before ")
        pdf.write(7, f"the link of page {page}", link=link)
        pdf.write(7, " and plain words after it.")
    pdf.output(str(path))
    return path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_links_within_a_chunk_read_as_in_the_whole_document(
    marker_env: dict[str, Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    from pagefleet.settings import load_settings

    pdf = linked_document(tmp_path / "linked.pdf")
    values = settings_values(marker_env["vlm_url"])
    whole = whole_markdown(pdf, values)
    # Each page's link, to page 2, 1, 4 and 3 (0-based 1, 0, 3, 2), and the anchors there.
    assert re.findall(r"\]\(#page-(\d+)-\d+\)", whole) == ["1", "0", "3", "2"], whole
    assert len(re.findall(r'<span id="page-\d+-\d+">', whole)) == 4, whole
    chunked = await chunked_markdown(pdf, load_settings(**values), 2, tmp_path / "by-2")
    assert chunked == whole
