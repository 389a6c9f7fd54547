"""What a converter is: a long-lived object that turns one chunk PDF into pages.

Converters know nothing of SQS or S3. One is built per conversion process and reused for every
chunk that process handles (building marker's model clients costs far more than a chunk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pagefleet.keys import ASSET_LINK_PREFIX
from pagefleet.models import PageContent

__all__ = ["ASSET_LINK_PREFIX", "Converter"]


class Converter(Protocol):
    name: str
    version: str
    # The model servers found hung and restarted as it was built (the conversion process tells
    # the worker, which converts a chunk that timed out on one again); empty where it has none.
    servers_restarted: tuple[str, ...]

    def convert(self, pdf_path: Path, first_page: int, assets_dir: Path) -> list[PageContent]:
        """Convert every page of ``pdf_path``; its first page is ``first_page`` of the document.

        Images go into ``assets_dir`` with names unique within the document (they carry the
        document page number) and are linked as ``ASSET_LINK_PREFIX + name``.
        """
        ...
