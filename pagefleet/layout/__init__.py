"""Page layouts: the compact per-page dicts of the text-layer converter and their Markdown."""

from pagefleet.layout.render import render_document

__all__ = ["render_document"]
