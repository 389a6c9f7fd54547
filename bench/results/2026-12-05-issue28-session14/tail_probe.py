"""The manual through one embedded pipeline N times: per job, the gap between its last two
chunk results and its completion wait (last result to the completion's start).

Run as ``PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-session14/tail_probe.py
10`` from the repository root, with the shared corpus beside it.
"""

import sys
from pathlib import Path

from embedded.pipeline import LocalPipeline
from embedded.server import MotoServer
from pagefleet import keys
from pagefleet.models import ChunkResult, JobManifest
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records, upload

MANUAL = Path(__file__).resolve().parents[4] / "shared/corpus/real/unstructured__irs-irm-400p.pdf"


def main() -> None:
    pdf = MANUAL.read_bytes()
    server = MotoServer()
    server.start()
    settings = Settings(
        endpoint_url=server.url,
        bucket="tail",
        queue_prefix="tail",
        chunk_pages=16,
        fleet_lanes=2,
        poll_wait_s=1,
    )
    with LocalPipeline(settings, workers=2, server=server) as local:
        local.wait_ready()
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        for n in range(int(sys.argv[1])):
            rel = f"manual-{n}"
            upload(bucket, rel, pdf)
            record = await_records(bucket, [rel], timeout_s=120)[rel]
            manifest = JobManifest.model_validate_json(bucket.get(keys.manifest(record.job_id)))
            finished = sorted(
                ChunkResult.model_validate_json(
                    bucket.get(keys.chunk_result(record.job_id, c.index))
                ).finished_at
                for c in manifest.chunks
            )
            started = record.finished_at - record.timings.assemble_s
            print(
                f"run {n}: last gap {finished[-1] - finished[-2]:.3f} s, completion wait "
                f"{started - finished[-1]:.3f} s, assemble {record.timings.assemble_s:.3f} s",
                flush=True,
            )
    server.stop()


if __name__ == "__main__":
    main()
