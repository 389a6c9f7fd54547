"""Workloads: when documents arrive, how many pages, how much of each is scanned.

A trace file is CSV with the header ``arrival_s,pages,scanned_share`` (seconds from the start,
page count, share of pages that need OCR, 0..1), one document a line, and optionally a
``page_s`` column (measured seconds per page for that document, overriding the GPU's rates);
``write_trace`` writes one, ``read_trace`` reads it, so a user can replay their own traffic.
"""

from __future__ import annotations

import bisect
import csv
import json
import math
import random
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
from pydantic import BaseModel, ConfigDict, Field

from pagefleet.costs import measure_pages
from pagefleet.settings import Settings

DAY_S = 86_400.0
TRACE_HEADER = ("arrival_s", "pages", "scanned_share")


class Document(BaseModel):
    model_config = ConfigDict(frozen=True)

    arrival_s: float = Field(ge=0)
    pages: int = Field(ge=1)
    scanned_share: float = Field(0.0, ge=0, le=1)
    page_s: float | None = Field(
        None, gt=0, description="Measured seconds per page, one conversion alone on a task."
    )
    ocr_pages: tuple[int, ...] | None = Field(
        None,
        description="The pages (1-based) the splitter finds without a usable text layer, as "
        "measured on a real PDF; None: the last scanned_share of the pages.",
    )

    def scanned(self) -> set[int]:
        """The pages (1-based) the splitter prices and the GPU converts as OCR pages."""
        if self.ocr_pages is not None:
            return set(self.ocr_pages)
        scans = round(self.pages * self.scanned_share)
        return set(range(self.pages - scans + 1, self.pages + 1))


class Workload(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    documents: tuple[Document, ...]

    @property
    def pages(self) -> int:
        return sum(d.pages for d in self.documents)


class DocumentMix(BaseModel):
    """Document sizes: log-normal pages (median 12, about 20 on average, capped), and a share of
    wholly scanned documents. An assumption standing in for a user's trace."""

    model_config = ConfigDict(frozen=True)

    median_pages: float = 12.0
    sigma: float = 1.0
    max_pages: int = 2000
    scanned_documents: float = 0.15

    def draw(self, rng: random.Random) -> tuple[int, float]:
        pages = round(math.exp(rng.gauss(math.log(self.median_pages), self.sigma)))
        scanned = 1.0 if rng.random() < self.scanned_documents else 0.0
        return min(self.max_pages, max(1, pages)), scanned


def steady(
    seed: int, hours: float = 4.0, docs_per_h: float = 120.0, mix: DocumentMix | None = None
) -> Workload:
    """Poisson arrivals at a constant rate."""
    rng, mix = random.Random(seed), mix or DocumentMix()
    docs, t = [], 0.0
    while True:
        t += rng.expovariate(docs_per_h / 3600)
        if t >= hours * 3600:
            break
        pages, scanned = mix.draw(rng)
        docs.append(Document(arrival_s=t, pages=pages, scanned_share=scanned))
    return Workload(
        name="steady",
        description=f"Poisson arrivals, {docs_per_h:g} documents/h for {hours:g} h",
        documents=tuple(docs),
    )


def burst(seed: int, documents: int = 5000, mix: DocumentMix | None = None) -> Workload:
    """``documents`` uploaded at once into an idle fleet."""
    rng, mix = random.Random(seed), mix or DocumentMix()
    docs = []
    for _ in range(documents):
        pages, scanned = mix.draw(rng)
        docs.append(Document(arrival_s=0.0, pages=pages, scanned_share=scanned))
    return Workload(
        name="burst",
        description=f"{documents:,} documents at once into an idle fleet",
        documents=tuple(docs),
    )


def single(pages: int, scanned_share: float = 0.0, name: str | None = None) -> Workload:
    """One document into an idle fleet."""
    return Workload(
        name=name or f"single-{pages}p",
        description=f"one {pages:,}-page document into an idle fleet",
        documents=(Document(arrival_s=0.0, pages=pages, scanned_share=scanned_share),),
    )


# The shared corpus (../shared/corpus/real) as the splitter measures it: each PDF's pages and
# the ones without a usable text layer. Committed, so the report needs no corpus to run;
# ``scripts/fleet-sim --measure-corpus DIR`` writes it again.
CORPUS_FILE = Path(__file__).with_name("corpus.json")


def measure_corpus(folder: Path) -> list[dict[str, Any]]:
    """Every PDF in ``folder`` through the splitter's own measuring (pagefleet/costs.py, with
    the OCR detection of the text-layer converter: the deployed marker, in balanced mode,
    tells no page apart)."""
    settings = Settings(converter="text-layer", ocr="auto")
    rows = []
    for path in sorted(folder.glob("*.pdf")):
        doc = pdfium.PdfDocument(path)
        try:
            costs = measure_pages(doc, settings)
        finally:
            doc.close()
        rows.append({"name": path.name, "pages": len(costs.seconds), "ocr_pages": costs.ocr_pages})
    return rows


def corpus(seed: int, hours: float = 4.0, docs_per_h: float = 120.0) -> Workload:
    """Poisson arrivals of the shared corpus's documents, each drawn at random, with the pages
    the splitter measured on them (``CORPUS_FILE``)."""
    rows = json.loads(CORPUS_FILE.read_text())["documents"]
    rng, docs, t = random.Random(seed), [], 0.0
    while True:
        t += rng.expovariate(docs_per_h / 3600)
        if t >= hours * 3600:
            break
        row = rng.choice(rows)
        ocr = tuple(row["ocr_pages"])
        docs.append(
            Document(
                arrival_s=t,
                pages=row["pages"],
                scanned_share=len(ocr) / row["pages"],
                ocr_pages=ocr,
            )
        )
    return Workload(
        name="corpus",
        description=f"the shared corpus's {len(rows)} PDFs as measured by the splitter, drawn at "
        f"random, Poisson arrivals, {docs_per_h:g} documents/h for {hours:g} h",
        documents=tuple(docs),
    )


def diurnal(
    seed: int, pages: int = 100_000, peak_to_mean: float = 1.8, mix: DocumentMix | None = None
) -> Workload:
    """A day: documents until ``pages`` pages, arriving at a rate that follows
    ``1 - a cos(2 pi t / day)`` (lowest at midnight, highest at noon, peak / mean = 1 + a)."""
    rng, mix = random.Random(seed), mix or DocumentMix()
    sizes: list[tuple[int, float]] = []
    total = 0
    while total < pages:
        drawn = mix.draw(rng)
        sizes.append(drawn)
        total += drawn[0]
    amplitude = peak_to_mean - 1
    cdf = _cdf(lambda t: 1 - amplitude * math.cos(2 * math.pi * t / DAY_S), DAY_S, 1440)
    arrivals = sorted(_inverse(cdf, rng.random()) for _ in sizes)
    docs = tuple(
        Document(arrival_s=t, pages=p, scanned_share=s)
        for t, (p, s) in zip(arrivals, sizes, strict=True)
    )
    return Workload(
        name="diurnal",
        description=f"a day of {total:,} pages, peak rate {peak_to_mean:g} x the mean at noon",
        documents=docs,
    )


def _cdf(rate: Callable[[float], float], span: float, steps: int) -> list[tuple[float, float]]:
    """(time, cumulative share) at ``steps`` points, by the trapezoid rule."""
    points, area = [(0.0, 0.0)], 0.0
    for i in range(1, steps + 1):
        a, b = span * (i - 1) / steps, span * i / steps
        area += (rate(a) + rate(b)) / 2 * (b - a)
        points.append((b, area))
    return [(t, c / area) for t, c in points]


def _inverse(cdf: list[tuple[float, float]], u: float) -> float:
    shares = [c for _, c in cdf]
    i = max(1, bisect.bisect_left(shares, u))
    (t0, c0), (t1, c1) = cdf[i - 1], cdf[i]
    return t0 + (t1 - t0) * ((u - c0) / (c1 - c0) if c1 > c0 else 0.0)


def read_trace(path: Path, name: str | None = None) -> Workload:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or not set(TRACE_HEADER) <= set(reader.fieldnames):
            raise ValueError(f"{path}: a trace needs the columns {', '.join(TRACE_HEADER)}")
        docs = [
            Document(
                arrival_s=float(row["arrival_s"]),
                pages=int(row["pages"]),
                scanned_share=float(row["scanned_share"] or 0),
                page_s=float(row["page_s"]) if row.get("page_s") else None,
            )
            for row in reader
        ]
    docs.sort(key=lambda d: d.arrival_s)
    return Workload(
        name=name or path.stem,
        description=f"trace {path.name}: {len(docs):,} documents",
        documents=tuple(docs),
    )


def write_trace(path: Path, documents: Iterable[Document]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*TRACE_HEADER, "page_s"])
        for d in documents:
            page_s = "" if d.page_s is None else f"{d.page_s:g}"
            writer.writerow([f"{d.arrival_s:.3f}", d.pages, f"{d.scanned_share:g}", page_s])
