"""Chunk converters: the CPU text layer and marker-pdf."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.converters.base import ASSET_LINK_PREFIX, Converter

if TYPE_CHECKING:
    from pagefleet.settings import Settings

__all__ = ["ASSET_LINK_PREFIX", "Converter", "load_converter"]


def load_converter(settings: Settings) -> Converter:
    """Build the configured converter; imports stay lazy (marker pulls torch)."""
    if settings.converter == "marker":
        from runner.converters.marker import MarkerConverter

        return MarkerConverter(settings)
    from runner.converters.text_layer import TextLayerConverter

    return TextLayerConverter(settings)
