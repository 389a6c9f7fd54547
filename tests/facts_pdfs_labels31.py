"""A vector diagram between paragraphs (issue 31): its labels are read as text after its
picture, as a reader reads the diagram. Written with fpdf2's built-in fonts; the facts are in
bench/quality/facts/generated_labels31.tsv."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from tests.layout_pdfs import LOREM

# The stages of the diagram's first row, left to right, each a filled box; a label of two
# lines is one label.
STAGES = (("Field survey",), ("Sample", "sieving"), ("Lab analysis",), ("Budget report",))
FILL = (205, 225, 245)


def _arrow(pdf: FPDF, x0: float, y0: float, x1: float, y1: float) -> None:
    """A shaft from (x0, y0) to (x1, y1), level or upright, and a filled head at its end."""
    pdf.line(x0, y0, x1, y1)
    if y0 == y1:
        head = [(x1, y1), (x1 - 7, y1 - 4), (x1 - 7, y1 + 4)]
    else:
        head = [(x1, y1), (x1 - 4, y1 - 7), (x1 + 4, y1 - 7)]
    pdf.polygon(head, style="F")


def survey_diagram(folder: Path) -> Path:
    """A title, a paragraph, a diagram drawn with paths (four filled boxes in a row joined by
    arrows, "weekly" over the first arrow, an arrow down from the third box to a fifth box),
    its caption, and a paragraph: slides and reports draw their pipelines this way (grobid's
    grobid-04-2015 slides)."""
    pdf = FPDF(unit="pt", format="Letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.set_xy(60, 50)
    pdf.cell(492, 20, "Sediment Survey Workflow")
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(60, 84)
    pdf.multi_cell(492, 12, "BEFORETEXT The survey runs in four stages, drawn below. " + LOREM)
    top, width, height, step = 160.0, 96.0, 40.0, 128.0
    pdf.set_line_width(0.8)
    pdf.set_fill_color(*FILL)
    pdf.set_font("Helvetica", "", 9)
    for k, label in enumerate(STAGES):
        x = 60 + step * k
        pdf.rect(x, top, width, height, style="DF")
        for r, text in enumerate(label):
            baseline = top + height / 2 + 3 + 11 * (r - (len(label) - 1) / 2)
            pdf.text(x + (width - pdf.get_string_width(text)) / 2, baseline, text)
        if k:
            _arrow(pdf, x - step + width, top + height / 2, x, top + height / 2)
    pdf.set_font("Helvetica", "", 8)
    pdf.text(60 + width + 8, top + height / 2 - 6, "weekly")
    archive = 60 + 2 * step
    _arrow(pdf, archive + width / 2, top + height, archive + width / 2, top + height + 40)
    pdf.rect(archive, top + height + 40, width, height, style="DF")
    pdf.set_font("Helvetica", "", 9)
    pdf.text(archive + (width - pdf.get_string_width("Archive")) / 2, top + 103, "Archive")
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(60, top + 2 * height + 64)
    pdf.multi_cell(492, 12, "Figure 1: The stages of a survey.")
    pdf.set_xy(60, pdf.get_y() + 12)
    pdf.multi_cell(492, 12, "AFTERTEXT Each stage keeps its own records. " + LOREM)
    path = folder / "survey_diagram.pdf"
    pdf.output(str(path))
    return path
