"""Quality of the text-layer converter on a folder of PDFs: recall, headings, OCR, speed.

Per document and overall:

- word recall: share of the words of pdfium's text layer (less the header/footer lines the
  renderer removed) found in the Markdown in the same order (exact longest common
  subsequence over words, bit-parallel);
- heading recall: share of outline titles that appear as Markdown headings, rendered without
  and with the outline, and how often consecutive headings step up/down as the outline does;
- OCR word recall: for PDFs whose scans carry a hidden OCR layer, our OCR (``ocr="force"``)
  against that layer;
- speed: pages/s of ``convert_document`` next to ``pdftext.plain_text_output``, same run.

Run through ``scripts/quality``; ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pypdfium2 as pdfium
from pdftext.extraction import plain_text_output

from pagefleet.layout.outline import read_outline
from pagefleet.layout.render import find_furniture, render_document, title_key
from pagefleet.layout.schema import OutlineEntry, Page
from pagefleet.layout.segment import line_text
from runner.converters.text_layer import extract_pages

DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
# Scans that carry an OCR layer of their own, to check our OCR against.
OCR_LAYER_DOCS = ("pypdf__vicksburg-scan-ocr.pdf",)

_WORD = re.compile(r"[^\W_]+")
# A hyphen between letters, possibly at a line break, is dropped on both sides of the
# comparison: "docu-\nmented", "documented" and "well-known" each make one word.
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\x02\u00ad\ufffe]\s*(?=[^\W\d_])")
_HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)


def words(text: str) -> list[str]:
    return _WORD.findall(_INNER_HYPHEN.sub("", text).lower())


def ordered_recall(reference: list[str], found: list[str]) -> float | None:
    """Share of ``reference`` matched in order in ``found``; None for an empty reference."""
    if not reference:
        return None
    return lcs_length(reference, found) / len(reference)


def lcs_length(a: list[str], b: list[str]) -> int:
    """Exact length of the longest common subsequence, bit-parallel (Allison-Dix, Hyyro).

    One bit per word of ``a`` in a Python integer, so each word of ``b`` costs a few
    big-integer operations: about a second for 65k x 50k words. difflib's matcher is not an
    LCS and misaligns repetitive text (running heads, repeated phrases).
    """
    masks: dict[str, int] = {}
    for i, word in enumerate(a):
        masks[word] = masks.get(word, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for word in b:
        u = v & masks.get(word, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def reference_words(pdf_path: Path, pages: Sequence[Page]) -> list[str]:
    """pdfium's text layer, page by page, less the lines the renderer took for furniture."""
    furniture = find_furniture(pages)
    removed: dict[int, list[list[str]]] = {}
    for pi, bi, li in furniture:
        block = pages[pi]["blocks"][bi]
        assert "lines" in block  # furniture is found among text lines only
        removed.setdefault(pi, []).append(words(line_text(block["lines"][li])))
    out: list[str] = []
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            page_words = words(textpage.get_text_range())
            textpage.close()
            page.close()
            for drop in removed.get(index, ()):
                _remove_run(page_words, drop)
            out += page_words
    finally:
        pdf.close()
    return out


def _remove_run(haystack: list[str], run: list[str]) -> None:
    """Delete the first occurrence of ``run`` from ``haystack``."""
    if not run:
        return
    for i in range(len(haystack) - len(run) + 1):
        if haystack[i : i + len(run)] == run:
            del haystack[i : i + len(run)]
            return


@dataclass
class HeadingScore:
    recall: float | None  # share of outline titles found as headings
    levels: float | None  # share of consecutive found titles whose level steps agree


def heading_score(markdown: str, outline: Sequence[OutlineEntry]) -> HeadingScore:
    if not outline:
        return HeadingScore(None, None)
    headings = [
        (len(m.group(1)), title_key(m.group(2).replace("\\", "")))
        for m in _HEADING.finditer(markdown)
    ]
    found: list[tuple[int, int]] = []  # (outline level, markdown level)
    start = 0
    for entry in outline:
        key = title_key(entry["title"])
        for i in range(start, len(headings)):
            if headings[i][1] == key:
                found.append((entry["level"], headings[i][0]))
                start = i + 1
                break
    steps = list(pairwise(found))
    agree = sum((b[0] > a[0]) == (b[1] > a[1]) and (b[0] < a[0]) == (b[1] < a[1]) for a, b in steps)
    return HeadingScore(len(found) / len(outline), agree / len(steps) if steps else None)


@dataclass
class DocReport:
    name: str
    pages: int
    ocr_pages: int
    ref_words: int
    word_recall: float | None
    outline: int
    headings: HeadingScore
    headings_with_outline: HeadingScore
    ocr_recall: float | None
    convert_s: float
    floor_s: float


def measure(pdf_path: Path) -> DocReport:
    started = time.perf_counter()
    pages = extract_pages(pdf_path, 1)
    markdown = render_document(pages)
    convert_s = time.perf_counter() - started
    started = time.perf_counter()
    plain_text_output(str(pdf_path))
    floor_s = time.perf_counter() - started
    outline = read_outline(pdf_path)
    reference = reference_words(pdf_path, pages)
    ocr_recall = None
    if pdf_path.name in OCR_LAYER_DOCS:
        ocr_markdown = render_document(extract_pages(pdf_path, 1, ocr="force"))
        layer = [w for page in _page_texts(pdf_path) for w in words(page)]
        ocr_recall = ordered_recall(layer, words(ocr_markdown))
    return DocReport(
        name=pdf_path.name,
        pages=len(pages),
        ocr_pages=sum(p["ocr"] for p in pages),
        ref_words=len(reference),
        word_recall=ordered_recall(reference, words(markdown)),
        outline=len(outline),
        headings=heading_score(markdown, outline),
        headings_with_outline=heading_score(render_document(pages, outline), outline),
        ocr_recall=ocr_recall,
        convert_s=convert_s,
        floor_s=floor_s,
    )


def _page_texts(pdf_path: Path) -> list[str]:
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def table(reports: list[DocReport]) -> str:
    head = (
        "| document | pages | OCR pages | words | word recall | outline | heading recall "
        "| levels | heading recall (outline) | levels (outline) | OCR recall | pages/s "
        "| plain_text pages/s | speed ratio |"
    )
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in reports:
        rows.append(
            f"| {r.name} | {r.pages} | {r.ocr_pages} | {r.ref_words} | {_pct(r.word_recall)} "
            f"| {r.outline or '–'} | {_pct(r.headings.recall)} | {_pct(r.headings.levels)} "
            f"| {_pct(r.headings_with_outline.recall)} | {_pct(r.headings_with_outline.levels)} "
            f"| {_pct(r.ocr_recall)} | {r.pages / r.convert_s:.1f} | {r.pages / r.floor_s:.1f} "
            f"| {r.floor_s / r.convert_s:.2f} |"
        )
    rows.append(_overall(reports))
    return "\n".join(rows)


def _overall(reports: list[DocReport]) -> str:
    text = [(r.word_recall, r.ref_words) for r in reports if r.word_recall is not None]
    total_words = sum(n for _, n in text)
    recall = sum(v * n for v, n in text) / total_words if total_words else None
    with_outline = [r for r in reports if r.outline]
    titles = sum(r.outline for r in with_outline)

    def weighted(pick: Callable[[DocReport], float | None]) -> float | None:
        """Mean of ``pick`` over the documents with an outline, weighted by its titles."""
        vals = [(v, r.outline) for r in with_outline if (v := pick(r)) is not None]
        return sum(v * n for v, n in vals) / sum(n for _, n in vals) if vals else None

    pages = sum(r.pages for r in reports)
    convert_s = sum(r.convert_s for r in reports)
    floor_s = sum(r.floor_s for r in reports)
    ocr = [r.ocr_recall for r in reports if r.ocr_recall is not None]
    return (
        f"| **overall** | {pages} | {sum(r.ocr_pages for r in reports)} | {total_words} "
        f"| {_pct(recall)} | {titles} | {_pct(weighted(lambda r: r.headings.recall))} "
        f"| {_pct(weighted(lambda r: r.headings.levels))} "
        f"| {_pct(weighted(lambda r: r.headings_with_outline.recall))} "
        f"| {_pct(weighted(lambda r: r.headings_with_outline.levels))} "
        f"| {_pct(sum(ocr) / len(ocr) if ocr else None)} | {pages / convert_s:.1f} "
        f"| {pages / floor_s:.1f} | {floor_s / convert_s:.2f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    pdfs = sorted(args.folder.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.folder}", file=sys.stderr)
        return 2
    reports = []
    for pdf in pdfs:
        reports.append(measure(pdf))
        print(f"measured {pdf.name}", file=sys.stderr)
    result = table(reports)
    print(result)
    if args.out:
        args.out.write_text(result + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
