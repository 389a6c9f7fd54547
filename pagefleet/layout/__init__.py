"""Page layouts: the compact per-page dicts of the text-layer converter and their Markdown.

A page's blocks come from ``segment`` (the entry point), which composes: ``lines`` (one line's
text, size and markers), ``rows`` (a row's pieces joined), ``reading_order`` over ``columns``,
``gutter_rows`` and ``trees`` (mind maps), ``paragraphs``, and what reads as one box: ``listings``,
``plots``, ``cards``, ``unruled`` tables (``tables``, ``gutter_tables``) and ``sideways`` regions.
"""

from pagefleet.layout.analysis import ChunkLayout
from pagefleet.layout.furniture import LineRef, find_furniture
from pagefleet.layout.replay import write_chunks
from pagefleet.layout.stitch import render_chunks, render_document

__all__ = [
    "ChunkLayout",
    "LineRef",
    "find_furniture",
    "render_chunks",
    "render_document",
    "write_chunks",
]
