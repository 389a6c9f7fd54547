"""Chunk converters: the CPU text layer and marker-pdf."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from runner.converters.base import ASSET_LINK_PREFIX, Converter

if TYPE_CHECKING:
    from pagefleet.settings import Settings

__all__ = [
    "ASSET_LINK_PREFIX",
    "Converter",
    "ConverterUnavailable",
    "check_converter",
    "load_converter",
]

# Converters whose library is an extra of its own: (module, distribution, the install).
_EXTRAS = {"marker": ("marker", "marker-pdf", "pagefleet[marker]")}


class ConverterUnavailable(Exception):
    """The configured converter's library cannot be imported: a configuration error that every
    start meets again, so nothing restarts on it."""


def unavailable(name: str, cause: ImportError | None = None) -> ConverterUnavailable:
    """The error for converter ``name``: its library missing or, with ``cause``, broken."""
    _, distribution, install = _EXTRAS[name]
    broken = f", which cannot be imported ({cause})" if cause else ""
    return ConverterUnavailable(
        f"converter {name} needs {distribution}{broken}: pip install '{install}'"
    )


def check_converter(name: str) -> None:
    """Raise :class:`ConverterUnavailable` unless the converter's library is installed: looked
    up, not imported (marker pulls torch, seconds and a GB the supervisor has no use for)."""
    if name in _EXTRAS and importlib.util.find_spec(_EXTRAS[name][0]) is None:
        raise unavailable(name)


def load_converter(settings: Settings) -> Converter:
    """Build the configured converter; imports stay lazy (marker pulls torch)."""
    check_converter(settings.converter)
    if settings.converter == "marker":
        from runner.converters.marker import MarkerConverter

        return MarkerConverter(settings)
    from runner.converters.text_layer import TextLayerConverter

    return TextLayerConverter(settings)
