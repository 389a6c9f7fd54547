"""Page layouts: the compact per-page dicts of the text-layer converter and their Markdown."""

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
