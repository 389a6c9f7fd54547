"""The report's Markdown: the table per document with its overall row, the means per converter,
and the peers side by side."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from bench.quality.facts import CLASSES, FactsScore
from bench.quality.scores import DocReport, Score


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


DocFacts = tuple[str, dict[str, FactsScore]]  # a document's name, its facts by converter


def facts_table(docs: Sequence[DocFacts]) -> str:
    """Per document with facts: facts passed by ours, by class, and by each peer; then the
    overall row (facts pooled over documents)."""
    with_facts = [(name, scores) for name, scores in docs if scores]
    if not with_facts:
        return "(no facts for these documents)"
    names = list(dict.fromkeys(n for _, f in with_facts for n in f if n != "ours"))
    head = "| " + " | ".join(
        ["document", "facts", "ours", *(f"ours: {c}" for c in CLASSES), *names]
    )
    head += " |"
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]

    def cell(score: FactsScore | None, cls: str | None = None) -> str:
        if score is None:
            return "–"
        total = sum(score.total.values()) if cls is None else score.total[cls]
        passed = sum(score.passed.values()) if cls is None else score.passed[cls]
        return f"{passed}/{total}" if total else "–"

    for doc, facts in with_facts:
        ours = facts["ours"]
        rows.append(
            "| "
            + " | ".join(
                [
                    doc,
                    str(sum(ours.total.values())),
                    _pct(ours.rate()),
                    *(cell(ours, c) for c in CLASSES),
                    *(_pct(s.rate()) if (s := facts.get(n)) else "–" for n in names),
                ]
            )
            + " |"
        )

    def pooled(name: str) -> FactsScore | None:
        scores = [s for _, f in with_facts if (s := f.get(name)) is not None]
        if not scores:
            return None
        return FactsScore(
            sum((s.passed for s in scores), Counter()),
            sum((s.total for s in scores), Counter()),
            [f for s in scores for f in s.failed],
        )

    all_ours = pooled("ours")
    assert all_ours is not None
    rows.append(
        "| "
        + " | ".join(
            [
                "**overall**",
                str(sum(all_ours.total.values())),
                _pct(all_ours.rate()),
                *(
                    f"{cell(all_ours, c)} ({_pct(all_ours.rate(c))})" if all_ours.total[c] else "–"
                    for c in CLASSES
                ),
                *(_pct(p.rate()) if (p := pooled(n)) else "–" for n in names),
            ]
        )
        + " |"
    )
    return "\n".join(rows)


def failed_facts(docs: Sequence[DocFacts]) -> str:
    """The facts our output fails, one line each, with where they are written."""
    lines = [
        f"- {name}: {fact} ({fact.where})"
        for name, facts in docs
        if "ours" in facts
        for fact in facts["ours"].failed
    ]
    return "\n".join(lines) or "(none)"
