"""PDFs the project makes itself: the ``make run`` demo set and test documents.

Deterministic (seeded), so two runs produce the same bytes and the same Markdown.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from fpdf import FPDF

_WORDS = """
queue chunk page runner bucket worker latency throughput document heading paragraph
manifest completion assembly converter retry lease backlog capacity instance region
message visibility timeout budget memory process supervisor scaling record archive
the a of to and in for with on by from that this is are was be as at it an or
""".split()


def sentence(rng: random.Random, words: int | None = None) -> str:
    n = words or rng.randint(8, 18)
    text = " ".join(rng.choice(_WORDS) for _ in range(n))
    return text[0].upper() + text[1:] + "."


def paragraph(rng: random.Random, sentences: int | None = None) -> str:
    return " ".join(sentence(rng) for _ in range(sentences or rng.randint(3, 6)))


class _Report(FPDF):
    """Running header and page-number footer on every page, as real reports have."""

    running_title = ""
    _widths: dict[tuple[str, str, float, str], float]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._widths = {}

    def paragraph(self, height: float, text: str) -> None:
        """``multi_cell(0, height, text)``, left-aligned, its lines broken here: fpdf2 measures
        a line again for each character it adds (quadratic), which made these reports the
        test suite's slowest fixture."""
        room = self.epw - 2 * self.c_margin
        space = self._width(" ")
        lines: list[list[str]] = [[]]
        used = 0.0
        for word in text.split(" "):
            width = self._width(word)
            if lines[-1] and used + space + width > room:
                lines.append([])
                used = 0.0
            used += (space if lines[-1] else 0.0) + width
            lines[-1].append(word)
        for words in lines:
            self.cell(0, height, " ".join(words), new_x="LMARGIN", new_y="NEXT")

    def _width(self, word: str) -> float:
        # The reports draw from a few dozen words: each measured once per font.
        key = (self.font_family, self.font_style, self.font_size_pt, word)
        if key not in self._widths:
            self._widths[key] = self.get_string_width(word)
        return self._widths[key]

    def header(self) -> None:
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 6, self.running_title, align="R")
        self.ln(10)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "", 8)
        self.cell(0, 6, str(self.page_no()), align="C")


def report_pdf(path: Path, *, sections: int = 12, seed: int = 7, title: str = "Report") -> Path:
    """A multi-page report: title, numbered sections with paragraphs that run across pages,
    bulleted lists, a running header and page numbers."""
    rng = random.Random(seed)
    pdf = _Report(format="A4")
    pdf.running_title = title
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 22)
    pdf.multi_cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    for number in range(1, sections + 1):
        pdf.set_font("Helvetica", "B", 15)
        pdf.multi_cell(0, 8, f"{number}. {sentence(rng, 4)[:-1]}", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        for _ in range(rng.randint(2, 4)):
            pdf.set_font("Helvetica", "", 11)
            pdf.paragraph(5.5, paragraph(rng, rng.randint(4, 9)))
            pdf.ln(3)
        if number % 3 == 0:
            pdf.set_font("Helvetica", "", 11)
            for _ in range(4):
                pdf.paragraph(5.5, "- " + sentence(rng, 7))
            pdf.ln(3)
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))
    return path


def write_demo_set(root: Path) -> list[Path]:
    """A handful of documents under nested folders and awkward names."""
    return [
        report_pdf(root / "annual report.pdf", sections=80, seed=1, title="Annual report"),
        report_pdf(
            root / "manuals" / "runner+guide.pdf", sections=14, seed=2, title="Runner guide"
        ),
        report_pdf(root / "archive" / "2026" / "note été.PDF", sections=2, seed=3, title="Note"),
    ]
