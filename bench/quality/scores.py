"""What one converter scored on one document, and one document's report: ours and the peers'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.quality.facts import FactsScore
from bench.quality.headings import HeadingScore, heading_score
from bench.quality.recall import bag_recall, ordered_recall, precision, recut
from bench.quality.words import markdown_words, words


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
    # The document's facts checked on each converter's output ("ours" and the peers'); empty
    # when the document has no facts.
    facts: dict[str, FactsScore] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.floor_s / self.convert_s if self.convert_s else 0.0
