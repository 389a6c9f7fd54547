"""Chunk results as a pipeline lands them, kept for ``replay.py``: one round of every document
at once and ``--alone`` runs of each document on its own, through one embedded stack with 2
workers, each job's manifest and every result object under it (split halves included) with the
time it finished. Written to one pickle outside the repository.

    PYTHONPATH=. .venv/bin/python bench/results/2026-12-05-issue28-tail-session15/harvest.py \
        /work/shared/corpus/real --alone unstructured__irs-irm-400p.pdf --out /tmp/harvest.pkl
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path

from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import collect_documents
from bench.pipeline.jobs import await_jobs, submit
from embedded.pipeline import LocalPipeline
from embedded.server import MotoServer
from pagefleet import keys
from pagefleet.models import ChunkResult
from pagefleet.settings import load_settings
from pagefleet.storage import Bucket


def _job(bucket: Bucket, job_id: str) -> dict[str, object]:
    results = []
    for key in bucket.list_etags(keys.results_prefix(job_id)):
        body = bucket.get(key)
        finished = ChunkResult.model_validate_json(body).finished_at
        results.append((finished, key, body))
    return {"manifest": bucket.get(keys.manifest(job_id)), "results": sorted(results)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--alone", nargs="*", default=[], help="document names also run alone")
    p.add_argument("--repeat", type=int, default=3, help="runs of each --alone document")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    docs = collect_documents(BenchConfig(inputs=args.inputs))
    server = MotoServer()
    server.start()
    name = f"harvest-{int(time.time())}"
    settings = load_settings(endpoint_url=server.url, bucket=name, queue_prefix=name, workers=2)
    kept: dict[str, list[dict[str, object]]] = {"together": [], "alone": []}
    with LocalPipeline(settings, workers=2, server=server) as pipeline:
        pipeline.wait_ready(2)
        assert pipeline.stack is not None
        bucket = Bucket(pipeline.stack.s3, settings.bucket)
        jobs = submit(bucket, "together", docs)
        await_jobs(bucket, jobs, 600)
        kept["together"] = [_job(bucket, j.record.job_id) for j in jobs if j.record]
        for n in range(args.repeat):
            alone = submit(bucket, f"alone{n}", [d for d in docs if d.name in args.alone])
            await_jobs(bucket, alone, 600)
            kept["alone"] += [_job(bucket, j.record.job_id) for j in alone if j.record]
    server.stop()
    args.out.write_bytes(pickle.dumps(kept))
    print(f"{len(kept['together'])} jobs together, {len(kept['alone'])} alone -> {args.out}")


if __name__ == "__main__":
    main()
