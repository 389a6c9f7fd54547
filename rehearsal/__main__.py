"""`make rehearse`: apply the root module to a moto server, run the corpus's small documents
through the pipeline from what the apply left (:mod:`rehearsal.run`), run the same documents
through the embedded stack, and write both outputs, their comparison, the permissions each role
used and did not use, and the run times to ``--out``.

    python -m rehearsal --corpus /path/to/corpus --out bench/results/<date>-rehearse
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from hashlib import sha256
from pathlib import Path
from typing import Any

from embedded.logs import LogRouter
from embedded.pipeline import LocalPipeline
from embedded.server import MotoServer
from pagefleet import aws, keys
from pagefleet.models import JobRecord
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records, upload
from rehearsal import apply, deployment
from rehearsal.run import RUNNER_LOCAL, Rehearsal, comparable
from rehearsal.terraform import ROOT, initialised

# The corpus's small documents: every bad one, and the real ones of at most this many pages.
SMALL_PAGES = 16


def small_documents(corpus: Path) -> dict[str, Path]:
    """``folder/name`` (no .pdf) -> file, from the corpus's MANIFEST.tsv."""
    rows = (corpus / "MANIFEST.tsv").read_text().splitlines()[1:]
    chosen = {}
    for row in rows:
        folder, filename, pages = row.split("\t")[:3]
        if folder == "bad" or (pages.isdigit() and int(pages) <= SMALL_PAGES):
            chosen[f"{folder}/{filename.removesuffix('.pdf')}"] = corpus / folder / filename
    return chosen


def deploy(
    base: Path, endpoint_url: str, name: str
) -> tuple[deployment.Deployment, dict[str, float]]:
    """The apply, and the plan of what moto cannot create (the runner's task definition)."""
    timings: dict[str, float] = {}
    started = time.monotonic()
    package = base / "lambda.zip"
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "docker" / "build_lambda_package.py"),
            "--sources-only",
            "--output",
            str(package),
        ],
        check=True,
        capture_output=True,
    )
    tf = initialised(base)
    timings["init_s"] = time.monotonic() - started
    made = apply.deploy(tf, apply.variables(name, endpoint_url, str(package)))
    timings["apply_s"], timings["plan_s"] = made.apply_s, made.plan_s
    return made.deployment, timings


def outputs(bucket: Bucket, rel: str, record: JobRecord) -> dict[str, str]:
    """The sha256 of each of ``rel``'s outbox objects but its record, by key."""
    markdown, assets = keys.outputs_of_record(keys.outbox_record(rel))
    found = [markdown] if record.markdown else []
    return {key: sha256(bucket.get(key)).hexdigest() for key in found + bucket.list_keys(assets)}


def report(summary: dict[str, Any]) -> str:
    """summary.json, readably."""
    terraform = summary["terraform"]
    lines = [
        "# Rehearsal: the pipeline on what `terraform apply` made, beside the embedded stack",
        "",
        f"{summary['documents']} documents (the corpus's bad ones and real ones of at most "
        f"{SMALL_PAGES} pages). Terraform: init {terraform['init_s']:.0f} s, apply "
        f"{terraform['apply_s']:.0f} s, task definition plan {terraform['plan_s']:.0f} s. "
        f"Converted from the applied state in {summary['rehearsal_s']} s (uploads to the last "
        f"record); the embedded stack took {summary['embedded_s']} s (its start included).",
        "",
        "Runner overrides (no GPU here): "
        + ", ".join(f"`{k}={v}`" for k, v in summary["runner_local_overrides"].items())
        + ". Denied requests: "
        + str(summary["denied"] or "none")
        + ".",
        "",
        "| document | status | pages | chunks (rehearsal, embedded) | record agrees | "
        "outbox objects | byte-identical |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in summary["comparison"]:
        lines.append(
            f"| {row['document']} | {row['status']} | {row['pages']} | {row['chunks']} | "
            f"{row['records_agree']} | {len(row['outputs'])} | {row['outputs_identical']} |"
        )
    lines += ["", "## Requests per role, and what each role is granted and never used", ""]
    for role, count in sorted(summary["requests_per_role"].items()):
        unused = summary["unused_per_role"].get(role, [])
        lines.append(
            f"- `{role}`: {count} requests; unused: "
            + (", ".join(f"`{u}`" for u in unused) or "none")
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m rehearsal", description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--timeout-s", type=float, default=900)
    args = parser.parse_args(argv)
    if not (args.corpus / "MANIFEST.tsv").is_file():
        # Skipped, as the suite skips what needs the corpus.
        print(f"skipped: no corpus at {args.corpus} (its MANIFEST.tsv lists what is rehearsed)")
        return 0
    # The rehearsal runs from the applied state alone: none of this shell's settings.
    for name in [k for k in os.environ if k.startswith("PAGEFLEET_")]:
        del os.environ[name]
    documents = {rel: path.read_bytes() for rel, path in small_documents(args.corpus).items()}
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"documents": len(documents)}
    server = MotoServer()
    with server as url, tempfile.TemporaryDirectory() as tmp:
        name = f"rh{uuid.uuid4().hex[:6]}"
        deployed, summary["terraform"] = deploy(Path(tmp), url, name)
        (args.out / "deployment.json").write_text(deployed.model_dump_json(indent=2))
        s3 = aws.client("s3", Settings(endpoint_url=url))
        bucket = Bucket(s3, deployed.bucket)
        log_file = str(args.out / "rehearsal.log")
        with Rehearsal(deployed, url, logs=LogRouter(log_file=log_file)) as rehearsal:
            outcome = rehearsal.timed(bucket, documents, args.timeout_s)
        summary["rehearsal_s"] = round(outcome.seconds, 1)
        summary["requests_per_role"] = outcome.requests
        summary["unused_per_role"] = outcome.unused
        summary["denied"] = outcome.denied
        summary["runner_local_overrides"] = RUNNER_LOCAL
        # The embedded stack, as `pagefleet up` makes it, on the same server.
        local = Settings(endpoint_url=url, bucket=f"{name}-embedded", queue_prefix=f"{name}e")
        started = time.monotonic()
        with LocalPipeline(
            local, server=server, log_file=str(args.out / "embedded.log")
        ) as pipeline:
            assert pipeline.stack is not None
            embedded = Bucket(pipeline.stack.s3, local.bucket)
            for rel, data in documents.items():
                upload(embedded, rel, data)
            embedded_records = await_records(embedded, documents, timeout_s=args.timeout_s)
        summary["embedded_s"] = round(time.monotonic() - started, 1)
        rows = []
        for rel in sorted(documents):
            mine, theirs = outcome.records[rel], embedded_records[rel]
            got, wanted = outputs(bucket, rel, mine), outputs(embedded, rel, theirs)
            rows.append(
                {
                    "document": rel,
                    "status": mine.status,
                    "pages": mine.pages,
                    "chunks": [len(mine.chunks), len(theirs.chunks)],
                    "records_agree": comparable(mine) == comparable(theirs),
                    "outputs_identical": got == wanted,
                    "outputs": got,
                }
            )
        summary["comparison"] = rows
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    (args.out / "summary.md").write_text(report(summary))
    differing = [r["document"] for r in rows if not (r["records_agree"] and r["outputs_identical"])]
    print(
        json.dumps({k: summary[k] for k in ("documents", "terraform", "rehearsal_s", "embedded_s")})
    )
    if differing:
        print(f"differ from the embedded stack: {differing}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
