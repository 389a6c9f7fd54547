"""Quality of the text-layer converter on a folder of PDFs, with the peers side by side.

Per document and overall:

- in-order word recall: share of the words of pdfium's text layer of the visible page (less
  the header/footer lines the renderer removed) found in the Markdown in the same order (exact
  longest common subsequence over words, bit-parallel), the Markdown's words first cut where
  pdfium cuts them (:func:`bench.quality.recall.recut`: a sub- or superscript pdfium cuts off
  or glues on);
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
- facts: the share of the document's facts (:mod:`bench.quality.facts`: text present, running
  heads absent, reading order, table cells) that each converter's output holds, by class, and
  the facts ours fails;
- speed: pages per CPU second of ``convert_document`` next to ``pdftext.plain_text_output``,
  timed one after the other in the same child process (the least of three runs each under 30 s),
  so machine load hits both alike; peak RSS of that child after our conversion (OCR pages
  included).

Peers (pdftext's plain text; pdf-oxide, markitdown and pymupdf4llm when the side venv of
``make quality-peers`` exists) are scored on the same reference in the same pass, one child
process per document and peer (see :mod:`bench.quality.peers`).

Run through ``scripts/quality``; ``--help`` lists the options. ``--converter marker`` runs
another report instead: marker in chunks against marker whole (:mod:`bench.quality.marker_chunks`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.paths import ROOT
from bench.quality.child import ours_child
from bench.quality.facts import FACTS_DIR, Fact, FactsScore, load_facts
from bench.quality.measure import installed_peers, measure
from bench.quality.tables import DocFacts, facts_table, failed_facts, peers_table, summary, table

DEFAULT_FOLDER = ROOT.parent / "shared" / "corpus" / "real"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    converter = argparse.ArgumentParser(add_help=False)
    converter.add_argument(
        "--converter",
        choices=("text_layer", "marker"),
        default="text_layer",
        help="marker: chunked against whole, by the runner image's Python (its own --help)",
    )
    if converter.parse_known_args(argv)[0].converter == "marker":
        from bench.quality.marker_chunks import main as marker_main

        return marker_main(argv)
    parser = argparse.ArgumentParser(
        prog="scripts/quality", description=__doc__.split("\n\n")[0], parents=[converter]
    )
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument(
        "--peers",
        choices=("auto", "none"),
        default="auto",
        help="auto: the peers of .venv-peers (make quality-peers) when it exists",
    )
    parser.add_argument(
        "--facts-only",
        action="store_true",
        help="only convert each document (ours, in this process) and check its facts",
    )
    parser.add_argument(
        "--facts",
        type=Path,
        default=FACTS_DIR,
        help="folder of facts files (*.tsv), by document name (default: %(default)s)",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        json.dump(ours_child(args.child), sys.stdout)
        return 0
    # Absolute: the children run in the repository, not where the user stands.
    folder = args.folder.resolve()
    pdfs = [folder] if folder.is_file() else sorted(folder.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs in {args.folder}", file=sys.stderr)
        return 2
    facts = load_facts(args.facts)
    if args.facts_only:
        return _facts_only(pdfs, facts, args.out)
    peers = installed_peers() if args.peers == "auto" else []
    reports = []
    for pdf in pdfs:
        reports.append(measure(pdf, peers, facts.get(pdf.name, ())))
        print(f"measured {pdf.name}", file=sys.stderr)
    docs = [(r.name, r.facts) for r in reports]
    result = "\n\n".join(
        [
            table(reports),
            "Means over documents (pdftext: its plain text; heading recall of plain text is 0 "
            "by construction):",
            summary(reports),
            "Per document, in-order recall / order-free recall / precision:",
            peers_table(reports),
            "Facts passed (per document: ours, ours by class, then each peer):",
            facts_table(docs),
            "Facts ours fails:",
            failed_facts(docs),
        ]
    )
    _emit(result, args.out)
    return 0


def _facts_only(pdfs: list[Path], facts: dict[str, list[Fact]], out: Path | None) -> int:
    from runner.converters.text_layer import convert_document

    docs: list[DocFacts] = []
    for pdf in pdfs:
        if pdf.name in facts:
            docs.append((pdf.name, {"ours": FactsScore.of(facts[pdf.name], convert_document(pdf))}))
            print(f"checked {pdf.name}", file=sys.stderr)
    _emit("\n\n".join([facts_table(docs), "Facts ours fails:", failed_facts(docs)]), out)
    return 0


def _emit(result: str, out: Path | None) -> None:
    print(result)
    if out:
        out.write_text(result + "\n")
