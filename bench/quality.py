"""Quality of the text-layer converter on a folder of PDFs, with the peers side by side.

Per document and overall:

- in-order word recall: share of the words of pdfium's text layer of the visible page (less
  the header/footer lines the renderer removed) found in the Markdown in the same order (exact
  longest common subsequence over words, bit-parallel), the Markdown's words first cut where
  pdfium cuts them (:func:`recut`: a sub- or superscript pdfium cuts off or glues on);
- order-free recall: the same words counted as a multiset, order ignored (adjacent leftover
  words of one side that join into a leftover word of the other match it: a subscript pdfium
  cuts off or glues on);
- precision: share of the Markdown's words that are words of the visible text layer
  (multiset, running heads included), OCR pages left out on both sides: a ruler or slug line
  outside the crop box, or a word made up, lowers it;
- heading recall: share of outline titles found as Markdown headings, in outline order (a
  heading holds a title when the title's words are in it in order), and how often consecutive
  found headings step up/down as the outline does;
- OCR word recall: for PDFs whose scans carry a hidden OCR layer, our OCR (``ocr="force"``)
  against that layer;
- speed: pages per CPU second of ``convert_document`` next to ``pdftext.plain_text_output``,
  timed one after the other in the same child process (the least of three runs each under 30 s),
  so machine load hits both alike; peak RSS of that child after our conversion (OCR pages
  included).

Peers (pdftext's plain text; pdf-oxide, markitdown and pymupdf4llm when the side venv of
``make quality-peers`` exists) are scored on the same reference in the same pass, one child
process per document and peer (see :mod:`bench.quality_peers`).

Run through ``scripts/quality``; ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDER = ROOT.parent / "shared" / "corpus" / "real"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
PEERS = ("pdf-oxide", "markitdown", "pymupdf4llm")
# A peer that takes longer than this (wall time) on one document is left out of it ("failed");
# pymupdf4llm with its layout model takes minutes a document on two shared cores.
PEER_TIMEOUT_S = 240.0
# Scans that carry an OCR layer of their own, to check our OCR against.
OCR_LAYER_DOCS = ("pypdf__vicksburg-scan-ocr.pdf",)

# Letters and digits are separate words: where pdfium joins a subscript to its base ("x0")
# and Markdown splits it with emphasis ("*x*0"), or the other way round, both read alike.
# Chinese and Japanese have no spaces between words, and a line may wrap between any two
# characters: each character is a word of its own.
_CJK = "\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W\d_{_CJK}]+|\d+")
# A hyphen between letters, possibly at a line break, is dropped on both sides of the
# comparison: "docu-\nmented", "documented" and "well-known" each make one word.
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\x02\u00ad\ufffe]\s*(?=[^\W\d_])")
_HEADING = re.compile(r"^(#{1,6}) (.*)$", re.MULTILINE)
# Link and image targets are markup, not words of the page.
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
# Emphasis markers: unescaped asterisks, underscores at a word's edge.
_EMPHASIS = re.compile(r"(?<!\\)\*+|(?<![\\\w])_+|(?<!\\)_+(?!\w)")


def words(text: str) -> list[str]:
    return _WORD.findall(_INNER_HYPHEN.sub("", text).lower())


def markdown_words(markdown: str) -> list[str]:
    """Words of Markdown as a reader sees them: link targets and emphasis markers dropped,
    so ``*t*x`` reads as the one word "tx" it renders as."""
    return words(_EMPHASIS.sub("", _LINK_TARGET.sub("]", markdown)))


def ordered_recall(reference: list[str], found: list[str]) -> float | None:
    """Share of ``reference`` matched in order in ``found``; None for an empty reference."""
    if not reference:
        return None
    return lcs_length(reference, found) / len(reference)


def bag_recall(reference: list[str], found: list[str]) -> float | None:
    """Share of ``reference`` found in ``found`` as a multiset (order ignored).

    A word the two sides cut at a different place still counts (see :func:`_rejoined`).
    """
    if not reference:
        return None
    ref, got = Counter(reference), Counter(found)
    common = ref & got
    return (sum(common.values()) + _rejoined(reference, found, ref - common, got - common)) / len(
        reference
    )


# At most this many adjacent words of one side make one word of the other.
_MAX_PIECES = 3


def _rejoined(
    reference: list[str], found: list[str], missing: Counter[str], extra: Counter[str]
) -> int:
    """Words of ``reference`` left unmatched only because a word boundary differs.

    pdfium cuts a line where a sub- or superscript leaves the baseline, and sometimes glues a
    subscript to the next word: ``S``, a line break, ``r`` and ``QSLret`` for the S-sub-r and
    the QSL-sub-r ``et`` a reader sees, while the same page elsewhere gives ``QSLr``. No output
    can cut these alike, so adjacent unmatched words of one side whose letters, joined, make an
    unmatched word of the other side are matched: ``s r`` against ``sr`` counts two reference
    words, ``qslret`` against ``qslr et`` one. Only words left over by the plain multiset
    comparison take part, each once, so nothing matched there is counted twice.
    """
    missing, extra = Counter(missing), Counter(extra)
    matched = 0
    # Reference words split where the output has one word, then one reference word the
    # output splits; longest runs first.
    for seq, pieces, whole, ref_side in (
        (reference, missing, extra, True),
        (found, extra, missing, False),
    ):
        for n in range(_MAX_PIECES, 1, -1):
            for i in range(len(seq) - n + 1):
                if pieces[seq[i]] <= 0:
                    continue
                run = seq[i : i + n]
                need = Counter(run)
                if any(pieces[w] < k for w, k in need.items()):
                    continue
                joined = "".join(run)
                if whole[joined] <= 0:
                    continue
                pieces.subtract(need)
                whole[joined] -= 1
                matched += n if ref_side else 1
    return matched


def precision(reference: list[str], found: list[str]) -> float | None:
    """Share of ``found`` that are words of ``reference`` (multiset); None when empty."""
    return bag_recall(found, reference)


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


def recut(reference: list[str], found: list[str]) -> list[str]:
    """``found`` with its words cut where ``reference`` cuts them (see :func:`_rejoined`).

    Where adjacent unmatched reference words join into an unmatched found word (``r n`` for
    ``rn``, R to the n-th: pdfium puts a superscript on a line of its own) that found word is
    cut into them; where adjacent unmatched found words join into an unmatched reference word
    (``qslr et`` for pdfium's ``qslret``) they become that word. In-order recall then compares
    both sides cut alike, as order-free recall does.
    """
    ref, got = Counter(reference), Counter(found)
    common = ref & got
    missing, extra = ref - common, got - common
    pieces_of: dict[str, list[list[str]]] = {}
    for n in range(_MAX_PIECES, 1, -1):
        for i in range(len(reference) - n + 1):
            run = reference[i : i + n]
            if missing[run[0]] <= 0 or any(missing[w] < k for w, k in Counter(run).items()):
                continue
            joined = "".join(run)
            if extra[joined] > 0:
                missing.subtract(run)
                extra[joined] -= 1
                pieces_of.setdefault(joined, []).append(run)
    joins: dict[int, int] = {}  # start in found -> words joined there
    taken: set[int] = set()
    for n in range(_MAX_PIECES, 1, -1):
        for i in range(len(found) - n + 1):
            run = found[i : i + n]
            if extra[run[0]] <= 0 or any(extra[w] < k for w, k in Counter(run).items()):
                continue
            if taken.intersection(range(i, i + n)):
                continue
            joined = "".join(run)
            if missing[joined] > 0:
                extra.subtract(run)
                missing[joined] -= 1
                joins[i] = n
                taken.update(range(i, i + n))
    out: list[str] = []
    i = 0
    while i < len(found):
        if i in joins:
            out.append("".join(found[i : i + joins[i]]))
            i += joins[i]
            continue
        cuts = pieces_of.get(found[i])
        out.extend(cuts.pop() if cuts else [found[i]])
        i += 1
    return out


@dataclass
class HeadingScore:
    recall: float | None  # share of outline titles found as headings
    levels: float | None  # share of consecutive found titles whose level steps agree


def _holds(heading: list[str], title: list[str]) -> bool:
    """Whether the words of ``title`` are in ``heading``, in order."""
    if not title:
        return False
    it = iter(heading)
    return all(w in it for w in title)


def heading_score(markdown: str, outline: Sequence[dict[str, Any]]) -> HeadingScore:
    """Outline titles found as headings, in outline order.

    A heading holds a title when the title's words are in it in order, so a heading carrying
    a number or a date its bookmark lacks ("Exhibit 2.3.59-1 (07-01-2019) Command Code") counts.
    """
    if not outline:
        return HeadingScore(None, None)
    headings = [(len(m.group(1)), markdown_words(m.group(2))) for m in _HEADING.finditer(markdown)]
    titles = [words(entry["title"]) for entry in outline]
    # The most titles matched in order (an LCS with "holds" as the match): a greedy walk
    # would let one title matched too far ahead (a running head set as a heading) lose all
    # the titles before that point.
    n, m = len(titles), len(headings)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = max(below[j], row[j + 1])
            if below[j + 1] + 1 > row[j] and _holds(headings[j][1], titles[i]):
                row[j] = below[j + 1] + 1
    found: list[tuple[int, int]] = []  # (outline level, markdown level)
    i = j = 0
    while i < n and j < m:
        if best[i][j] == best[i + 1][j]:
            i += 1
        elif best[i][j] == best[i][j + 1]:
            j += 1
        else:
            found.append((outline[i]["level"], headings[j][0]))
            i, j = i + 1, j + 1
    steps = list(pairwise(found))
    agree = sum((b[0] > a[0]) == (b[1] > a[1]) and (b[0] < a[0]) == (b[1] < a[1]) for a, b in steps)
    return HeadingScore(len(found) / len(outline), agree / len(steps) if steps else None)


# --- the child processes: one conversion each, so time and peak memory are its own ----------


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _visible_page_words(pdf_path: Path) -> list[list[str]]:
    """pdfium's text layer of each page, within the page's visible box (crop box)."""
    import pypdfium2 as pdfium

    out: list[list[str]] = []
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            x0, y0, x1, y1 = page.get_bbox()
            out.append(words(textpage.get_text_bounded(x0, y0, x1, y1)))
            textpage.close()
            page.close()
    finally:
        pdf.close()
    return out


_REPEAT_BELOW_S = 30.0
_REPEATS = 2


def _timed(fn: Callable[[], Any]) -> Any:
    """``fn()``'s result (a tuple's items spread) followed by the CPU seconds it took.

    CPU time of the process (all its threads: OCR's too), not wall time: the machine is shared,
    and wall time counts the waits for a core that other work took.
    """
    started = time.process_time()
    result = fn()
    seconds = time.process_time() - started
    return (*result, seconds) if isinstance(result, tuple) else (result, seconds)


def ours_child(pdf_path: Path) -> dict[str, Any]:
    """Convert ``pdf_path`` as the pipeline does, then time pdftext's plain text on it."""
    from pdftext.extraction import plain_text_output

    from pagefleet.layout import find_furniture, render_document
    from pagefleet.layout.outline import read_outline
    from pagefleet.layout.schema import OutlineEntry, Page
    from pagefleet.layout.segment import line_text
    from runner.converters.text_layer import extract_pages

    def convert() -> tuple[list[Page], list[OutlineEntry], str]:
        pages = extract_pages(pdf_path, 1)
        outline = read_outline(pdf_path)
        return pages, outline, render_document(pages, outline)

    pages, outline, markdown, convert_s = _timed(convert)
    rss_mb = _peak_rss_mb()
    plain, floor_s = _timed(lambda: plain_text_output(str(pdf_path)))
    for _ in range(_REPEATS if convert_s < _REPEAT_BELOW_S else 0):
        # Again each, alternating, the least time kept: the first run also pays for reading
        # the file and pdfium's first-use costs, and other work on the machine comes and goes.
        convert_s = min(convert_s, _timed(convert)[-1])
        floor_s = min(floor_s, _timed(lambda: plain_text_output(str(pdf_path)))[-1])
    # The reference for recall: the visible text layer less the lines the renderer took for
    # furniture. Precision is counted against the whole visible text layer: a converter that
    # keeps running heads invents nothing.
    per_page = _visible_page_words(pdf_path)
    ocr = [p["ocr"] for p in pages]
    whole = [w for page, o in zip(per_page, ocr, strict=True) if not o for w in page]
    for pi, bi, li in find_furniture(pages):
        block = pages[pi]["blocks"][bi]
        assert "lines" in block  # furniture is found among text lines only
        _remove_run(per_page[pi], words(line_text(block["lines"][li])))
    text_pages = [p for p in pages if not p["ocr"]]
    result: dict[str, Any] = {
        "pages": len(pages),
        "ocr_pages": sum(ocr),
        "outline": outline,
        "markdown": markdown,
        # Precision leaves OCR pages out on both sides.
        "text_markdown": markdown if not any(ocr) else render_document(text_pages, outline),
        "reference": [w for page in per_page for w in page],
        "text_reference": whole,
        "plain": plain,
        "convert_s": convert_s,
        "floor_s": floor_s,
        "rss_mb": rss_mb,
        "ocr_recall": None,
    }
    if pdf_path.name in OCR_LAYER_DOCS:
        ocr_markdown = render_document(extract_pages(pdf_path, 1, ocr="force"))
        layer = [w for page in _visible_page_words(pdf_path) for w in page]
        result["ocr_recall"] = ordered_recall(layer, markdown_words(ocr_markdown))
    return result


def _remove_run(haystack: list[str], run: list[str]) -> None:
    """Delete the first occurrence of ``run`` from ``haystack``."""
    if not run:
        return
    for i in range(len(haystack) - len(run) + 1):
        if haystack[i : i + len(run)] == run:
            del haystack[i : i + len(run)]
            return


def _run_child(
    argv: list[str], python: Path | str = sys.executable, timeout_s: float | None = None
) -> dict[str, Any] | None:
    """Run one child and read its JSON; None (with the reason on stderr) when it fails."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        proc = subprocess.run(
            [str(python), *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        print(f"  {' '.join(argv[-2:])}: over {timeout_s:.0f} s, left out", file=sys.stderr)
        return None
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        print(f"  {' '.join(argv[-2:])}: failed ({tail[0]})", file=sys.stderr)
        return None
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


# --- scores ---------------------------------------------------------------------------------


@dataclass
class Score:
    """One converter on one document."""

    in_order: float | None
    order_free: float | None
    precision: float | None
    headings: HeadingScore
    pages_per_s: float | None

    @classmethod
    def of(
        cls,
        markdown_or_words: str | list[str],
        reference: list[str],
        text_reference: list[str],
        text_output: str | list[str],
        outline: Sequence[dict[str, Any]],
        pages: int,
        seconds: float | None,
        plain: bool = False,
    ) -> Score:
        def as_words(value: str | list[str]) -> list[str]:
            if isinstance(value, list):
                return value
            return words(value) if plain else markdown_words(value)

        found = recut(reference, as_words(markdown_or_words))
        markdown = markdown_or_words if isinstance(markdown_or_words, str) and not plain else ""
        return cls(
            in_order=ordered_recall(reference, found),
            order_free=bag_recall(reference, found),
            precision=precision(text_reference, as_words(text_output)),
            headings=heading_score(markdown, outline),
            pages_per_s=pages / seconds if seconds else None,
        )


@dataclass
class DocReport:
    name: str
    pages: int
    ocr_pages: int
    ref_words: int
    outline: int
    ours: Score
    ocr_recall: float | None
    convert_s: float
    floor_s: float
    rss_mb: float
    peers: dict[str, Score | None] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.floor_s / self.convert_s if self.convert_s else 0.0


def measure(pdf_path: Path, peers: Sequence[str] = ()) -> DocReport:
    """Our converter on ``pdf_path`` in a child process, then each peer in its own."""
    ours = _run_child(["-m", "bench.quality", "--child", str(pdf_path)])
    if ours is None:
        raise RuntimeError(f"our converter failed on {pdf_path}")
    ref, text_ref, outline = ours["reference"], ours["text_reference"], ours["outline"]
    pages = ours["pages"]
    report = DocReport(
        name=pdf_path.name,
        pages=pages,
        ocr_pages=ours["ocr_pages"],
        ref_words=len(ref),
        outline=len(outline),
        ours=Score.of(
            ours["markdown"],
            ref,
            text_ref,
            ours["text_markdown"],
            outline,
            pages,
            ours["convert_s"],
        ),
        ocr_recall=ours["ocr_recall"],
        convert_s=ours["convert_s"],
        floor_s=ours["floor_s"],
        rss_mb=ours["rss_mb"],
    )
    plain = ours["plain"]
    report.peers["pdftext"] = Score.of(
        plain, ref, text_ref, plain, outline, pages, ours["floor_s"], plain=True
    )
    for peer in peers:
        got = _run_child(
            [str(ROOT / "bench" / "quality_peers.py"), peer, str(pdf_path)],
            PEERS_PYTHON,
            PEER_TIMEOUT_S,
        )
        report.peers[peer] = (
            None
            if got is None
            else Score.of(got["markdown"], ref, text_ref, got["markdown"], outline, pages, got["s"])
        )
    return report


# --- the report -----------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def table(reports: list[DocReport]) -> str:
    head = (
        "| document | pages | OCR pages | words | in-order recall | order-free recall "
        "| precision | outline | heading recall | levels | OCR recall | pages/CPU s "
        "| plain_text pages/CPU s | speed ratio | peak RSS MB |"
    )
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in reports:
        s = r.ours
        rows.append(
            f"| {r.name} | {r.pages} | {r.ocr_pages} | {r.ref_words} | {_pct(s.in_order)} "
            f"| {_pct(s.order_free)} | {_pct(s.precision)} | {r.outline or '–'} "
            f"| {_pct(s.headings.recall)} | {_pct(s.headings.levels)} | {_pct(r.ocr_recall)} "
            f"| {r.pages / r.convert_s:.1f} | {r.pages / r.floor_s:.1f} | {r.ratio:.2f} "
            f"| {r.rss_mb:.0f} |"
        )
    rows.append(_overall(reports))
    return "\n".join(rows)


def _weighted(
    reports: Sequence[DocReport], pick: Callable[[DocReport], float | None], weight: str
) -> float | None:
    vals = [(v, getattr(r, weight)) for r in reports if (v := pick(r)) is not None]
    total = sum(n for _, n in vals)
    return sum(v * n for v, n in vals) / total if total else None


def _overall(reports: list[DocReport]) -> str:
    with_outline = [r for r in reports if r.outline]
    text_only = [r for r in reports if not r.ocr_pages]
    pages = sum(r.pages for r in text_only)
    convert_s = sum(r.convert_s for r in text_only)
    floor_s = sum(r.floor_s for r in text_only)
    ocr = [r.ocr_recall for r in reports if r.ocr_recall is not None]
    ocr_rss = [r.rss_mb for r in reports if r.ocr_pages]
    return (
        f"| **overall** (speed: text-layer documents only) | {sum(r.pages for r in reports)} "
        f"| {sum(r.ocr_pages for r in reports)} | {sum(r.ref_words for r in reports)} "
        f"| {_pct(_weighted(reports, lambda r: r.ours.in_order, 'ref_words'))} "
        f"| {_pct(_weighted(reports, lambda r: r.ours.order_free, 'ref_words'))} "
        f"| {_pct(_weighted(reports, lambda r: r.ours.precision, 'ref_words'))} "
        f"| {sum(r.outline for r in with_outline)} "
        f"| {_pct(_weighted(with_outline, lambda r: r.ours.headings.recall, 'outline'))} "
        f"| {_pct(_weighted(with_outline, lambda r: r.ours.headings.levels, 'outline'))} "
        f"| {_pct(sum(ocr) / len(ocr) if ocr else None)} | {pages / convert_s:.1f} "
        f"| {pages / floor_s:.1f} | {floor_s / convert_s:.2f} "
        f"| {max(ocr_rss, default=0):.0f} (OCR max) |"
    )


def summary(reports: list[DocReport]) -> str:
    """Means over documents, ours and each peer, and the minimum in-order recall."""
    names = ["text-layer (ours)", *dict.fromkeys(p for r in reports for p in r.peers)]
    head = (
        "| converter | documents | in-order recall mean | min | order-free recall mean | min "
        "| precision mean | min | heading recall (outline docs) | pages/CPU s (text-layer docs) |"
    )
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]
    for name in names:
        scored = [
            (r, s)
            for r in reports
            if (s := r.ours if name == names[0] else r.peers.get(name)) is not None
        ]

        def stats(
            pick: Callable[[Score], float | None], scored: list[tuple[DocReport, Score]] = scored
        ) -> tuple[str, str]:
            vals = [v for _, s in scored if (v := pick(s)) is not None]
            if not vals:
                return "–", "–"
            return _pct(sum(vals) / len(vals)), _pct(min(vals))

        heads = [
            (s.headings.recall, r.outline)
            for r, s in scored
            if r.outline and s.headings.recall is not None
        ]
        heading = sum(v * n for v, n in heads) / sum(n for _, n in heads) if heads else None
        speed = [(r.pages, s.pages_per_s) for r, s in scored if not r.ocr_pages and s.pages_per_s]
        pps = sum(p for p, _ in speed) / sum(p / v for p, v in speed) if speed else None
        io, of, pr = (
            stats(lambda s: s.in_order),
            stats(lambda s: s.order_free),
            stats(lambda s: s.precision),
        )
        rows.append(
            f"| {name} | {len(scored)} | {io[0]} | {io[1]} | {of[0]} | {of[1]} | {pr[0]} "
            f"| {pr[1]} | {_pct(heading)} | {_num(pps)} |"
        )
    return "\n".join(rows)


def peers_table(reports: list[DocReport]) -> str:
    """Per document: in-order / order-free recall and precision of each peer."""
    names = list(dict.fromkeys(p for r in reports for p in r.peers))
    head = "| document | ours | " + " | ".join(names) + " |"
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]

    def cell(s: Score | None) -> str:
        if s is None:
            return "failed"
        return f"{_pct(s.in_order)} / {_pct(s.order_free)} / {_pct(s.precision)}"

    for r in reports:
        rows.append(
            f"| {r.name} | {cell(r.ours)} | "
            + " | ".join(cell(r.peers.get(n)) for n in names)
            + " |"
        )
    return "\n".join(rows)


def installed_peers() -> list[str]:
    return list(PEERS) if PEERS_PYTHON.exists() else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument(
        "--peers",
        choices=("auto", "none"),
        default="auto",
        help="auto: the peers of .venv-peers (make quality-peers) when it exists",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        json.dump(ours_child(args.child), sys.stdout)
        return 0
    pdfs = sorted(args.folder.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.folder}", file=sys.stderr)
        return 2
    peers = installed_peers() if args.peers == "auto" else []
    reports = []
    for pdf in pdfs:
        reports.append(measure(pdf, peers))
        print(f"measured {pdf.name}", file=sys.stderr)
    result = "\n\n".join(
        [
            table(reports),
            "Means over documents (pdftext: its plain text; heading recall of plain text is 0 "
            "by construction):",
            summary(reports),
            "Per document, in-order recall / order-free recall / precision:",
            peers_table(reports),
        ]
    )
    print(result)
    if args.out:
        args.out.write_text(result + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
