"""One document measured: our converter's child, then each peer's in the side venv, scored on
the same reference."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.paths import ROOT
from bench.quality.facts import Fact, FactsScore
from bench.quality.scores import DocReport, Score

PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
PEERS = ("pdf-oxide", "markitdown", "pymupdf4llm")
# A peer that takes longer than this (wall time) on one document is left out of it ("failed");
# pymupdf4llm with its layout model takes minutes a document on two shared cores.
PEER_TIMEOUT_S = 240.0


def installed_peers() -> list[str]:
    return list(PEERS) if PEERS_PYTHON.exists() else []


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


def measure(pdf_path: Path, peers: Sequence[str] = (), facts: Sequence[Fact] = ()) -> DocReport:
    """Our converter on ``pdf_path`` in a child process, then each peer in its own; the
    document's ``facts`` checked on each one's output."""
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
    if facts:
        report.facts["ours"] = FactsScore.of(facts, ours["markdown"])
        report.facts["pdftext"] = FactsScore.of(facts, plain)
    report.peers["pdftext"] = Score.of(
        plain, ref, text_ref, plain, outline, pages, ours["floor_s"], plain=True
    )
    for peer in peers:
        got = _run_child(
            [str(ROOT / "bench" / "quality" / "peers.py"), peer, str(pdf_path)],
            PEERS_PYTHON,
            PEER_TIMEOUT_S,
        )
        report.peers[peer] = (
            None
            if got is None
            else Score.of(got["markdown"], ref, text_ref, got["markdown"], outline, pages, got["s"])
        )
        if facts and got is not None:
            report.facts[peer] = FactsScore.of(facts, got["markdown"])
    return report
