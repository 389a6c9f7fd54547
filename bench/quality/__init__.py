"""The quality report behind ``scripts/quality``: the text-layer converter and its peers scored
on a folder of PDFs."""

from bench.quality.headings import HeadingScore, heading_score
from bench.quality.measure import measure
from bench.quality.recall import bag_recall, lcs_length, ordered_recall, precision, recut
from bench.quality.scores import DocReport, Score
from bench.quality.words import markdown_words, words

__all__ = [
    "DocReport",
    "HeadingScore",
    "Score",
    "bag_recall",
    "heading_score",
    "lcs_length",
    "markdown_words",
    "measure",
    "ordered_recall",
    "precision",
    "recut",
    "words",
]
