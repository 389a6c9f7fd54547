"""One PDF through the real marker twice: whole, as marker converts a document, and cut into
chunks as the fleet converts it. Shared by ``scripts/quality --converter marker``
(:mod:`bench.quality.marker_chunks`) and the chunking property (tests/test_marker_chunking.py).

marker's model servers are the deterministic stubs of bench/stub_models.py (the same page image
and prompt give the same answer, whichever chunk the page is in), attached by URL: the
differences left are the converter's and assembly's, not a model's. Needs marker-pdf and torch
(the runner image's environment).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import stub_models
from bench.stub_models import attached


@contextlib.contextmanager
def stub_servers() -> Iterator[str]:
    """The stubs of bench.stub_models attached; yields the VLM's URL (marker's setting, not
    surya's environment)."""
    with attached(stub_models.vlm_server()) as (vlm, _, _):
        yield str(vlm.url)


def settings_values(vlm_url: str, convert_timeout_s: int = 300) -> dict[str, Any]:
    """pagefleet settings of a marker runner in fast mode, its VLM the stub."""
    return {
        "converter": "marker",
        "marker_mode": "fast",
        "marker_inference_url": f"{vlm_url}/v1",
        "marker_server_startup_timeout_s": 10,
        "convert_timeout_s": convert_timeout_s,
        "convert_memory_mb": 8192,
    }


# surya reads its settings when first imported: the runner's environment goes first, as
# MarkerConverter sets it (runner/converters/marker.py), or surya spawns a VLM of its own for
# pages to OCR.
WHOLE = """
import json, os, sys
from pagefleet.settings import load_settings
from runner.converters.marker import asset_name, marker_config, relink, surya_environment
settings = load_settings(**json.loads(sys.argv[2]))
os.environ.update(surya_environment(settings))
from marker.converters.pdf import PdfConverter
from marker.models import create_model_dict
config = {**marker_config(settings), "paginate_output": False}
rendered = PdfConverter(artifact_dict=create_model_dict(), config=config)(sys.argv[1])
renames = {name: asset_name(name, 1) for name in rendered.images}
sys.stdout.write(relink(rendered.markdown, renames) + "\\n")
"""


def whole_markdown(pdf: Path, values: dict[str, Any], timeout_s: float = 600) -> str:
    """marker's own conversion of the whole document (its default, unpaginated Markdown), its
    images named and linked as pagefleet names them; in a process of its own, as conversions
    run (surya's clients find the stub servers from the environment it inherits)."""
    done = subprocess.run(
        [sys.executable, "-c", WHOLE, str(pdf), json.dumps(values)],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout_s,
    )
    return done.stdout


async def chunked_markdown(pdf: Path, settings: Any, pages_per_chunk: int, work: Path) -> str:
    """The document cut as the splitter cuts it, each chunk converted as a runner converts it
    (one conversion process, reused), the results assembled as the completion step does."""
    import pypdfium2 as pdfium
    from pydantic import TypeAdapter

    from pagefleet.assembly import LandedChunk, render_markdown
    from pagefleet.models import ChunkResult, ChunkSpec, JobManifest, PageContent, Source
    from pagefleet.pdf import cut_chunk
    from runner.conversion import ConversionProcess

    doc = pdfium.PdfDocument(str(pdf))
    count = len(doc)
    specs = [
        ChunkSpec(index=i, first_page=first, last_page=min(first + pages_per_chunk - 1, count))
        for i, first in enumerate(range(1, count + 1, pages_per_chunk))
    ]
    landed = []
    assets = work / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    process = ConversionProcess(settings)
    try:
        await process.start()
        for spec in specs:
            part = work / f"chunk-{spec.index}.pdf"
            part.write_bytes(cut_chunk(doc, spec))
            pages = TypeAdapter(list[PageContent]).validate_json(
                await process.convert(part, spec.first_page, assets)
            )
            result = ChunkResult(
                job_id="j",
                chunk=spec,
                status="done",
                attempts=1,
                converter="marker",
                converter_version=process.version,
                pages=pages,
            )
            landed.append(LandedChunk.of(result))
    finally:
        process.stop()
        doc.close()
    manifest = JobManifest(
        job_id="j",
        rel="doc",
        source=Source(bucket="b", key="inbox/doc.pdf", etag="e"),
        pages=count,
        chunks=specs,
        created_at=0.0,
        split_s=0.0,
    )
    return render_markdown(manifest, landed)
