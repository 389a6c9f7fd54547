"""The documents of a run: PDFs found under the inputs, and generated synthetic ones."""

from __future__ import annotations

from pathlib import Path

from bench.pipeline.config import BenchConfig
from bench.pipeline.models import Document
from bench.pipeline.synthetic import cached_scan, cached_synthetic
from pagefleet.submission import count_pages, find_pdfs


def document(name: str, path: Path) -> Document:
    return Document(name=name, path=path, pages=count_pages(path), bytes=path.stat().st_size)


def synthetic_document(pages: int, config: BenchConfig) -> Document:
    path = cached_synthetic(pages, config.cache_dir / "synthetic")
    return document(path.stem, path)


def collect_documents(config: BenchConfig) -> list[Document]:
    docs: list[Document] = []
    for root in config.inputs:
        for path in find_pdfs(root):
            rel = path.relative_to(root) if root.is_dir() else Path(path.name)
            docs.append(document(rel.with_suffix("").as_posix(), path))
    docs += [synthetic_document(pages, config) for pages in config.synthetic]
    for pages in config.scans:
        path = cached_scan(pages, config.cache_dir / "synthetic")
        docs.append(document(path.stem, path))
    names = [d.name for d in docs]
    if len(set(names)) != len(names):
        raise ValueError(f"two inputs share a name: {names}")
    return docs
