"""scripts/bench end to end on a tiny input, and the parts whose numbers the report rests on."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from bench.pipeline import cli
from bench.pipeline.config import BenchConfig
from bench.pipeline.documents import document
from bench.pipeline.jobs import Job
from bench.pipeline.models import STAGES
from bench.pipeline.sampling import (
    CONVERTER,
    HANDLERS,
    HARNESS,
    SUPERVISOR,
    WORKER,
    ResourceSampler,
    role_of,
)
from bench.pipeline.stages import job_stages
from bench.pipeline.standalone import PlainRounds
from bench.pipeline.synthetic import synthetic_pdf
from embedded import MotoServer
from embedded.pipeline import LocalPipeline
from pagefleet.models import ChunkResult, ChunkSpec, JobManifest, JobRecord, Source, StageTimings
from pagefleet.settings import Settings
from pagefleet.submission import count_pages


def test_synthetic_pdf_has_the_pages_asked_for(tmp_path: Path) -> None:
    assert count_pages(synthetic_pdf(tmp_path / "a.pdf", 7)) == 7
    again = synthetic_pdf(tmp_path / "b.pdf", 7)
    assert again.read_bytes() == (tmp_path / "a.pdf").read_bytes()  # seeded: same bytes


def test_job_stages_add_up_to_the_latency(tmp_path: Path) -> None:
    """Upload at 100; split 100.5-101; chunks picked up at 101.25/101.5 and done at 103/104;
    completion reads results from 104.5 and stamps the record at 105.1."""
    source = Source(bucket="b", key="inbox/x.pdf", etag="e")
    chunks = [
        ChunkSpec(index=0, first_page=1, last_page=2),
        ChunkSpec(index=1, first_page=3, last_page=4),
    ]
    manifest = JobManifest(
        job_id="j", rel="x", source=source, pages=4, chunks=chunks, created_at=100.5, split_s=0.5
    )
    results = [
        ChunkResult(
            job_id="j",
            chunk=chunks[0],
            status="done",
            attempts=1,
            converter="t",
            converter_version="1",
            queue_wait_s=0.25,
            convert_s=1.5,
            upload_s=0.1,
            finished_at=103.0,
        ),
        ChunkResult(
            job_id="j",
            chunk=chunks[1],
            status="done",
            attempts=1,
            converter="t",
            converter_version="1",
            queue_wait_s=0.5,
            convert_s=2.0,
            upload_s=0.1,
            finished_at=104.0,
        ),
    ]
    record = JobRecord(
        status="done",
        job_id="j",
        source=source,
        pages=4,
        finished_at=105.1,
        timings=StageTimings(assemble_s=0.6),
    )
    pdf = synthetic_pdf(tmp_path / "x.pdf", 4)
    job = Job(doc=document("x", pdf), rel="x", uploaded_at=100.0, record=record)
    stages = job_stages(job, manifest, results, workers=2).model_dump()
    assert list(stages) == list(STAGES)
    assert sum(stages.values()) == pytest.approx(job.latency_s)
    assert stages["ingest_s"] == pytest.approx(0.5)
    assert stages["queue_wait_s"] == pytest.approx(0.25)
    assert stages["convert_s"] == pytest.approx(1.75)  # 3.5 worker-seconds on 2 lanes
    assert stages["chunk_overhead_s"] == pytest.approx(2.75 - 1.75 - 0.1)
    assert stages["completion_wait_s"] == pytest.approx(0.5)
    # One worker runs both chunks one after the other.
    assert job_stages(job, manifest, results, workers=1).convert_s == pytest.approx(3.5)


def test_wait_ready_returns_with_every_worker_warm(
    moto_server: MotoServer, settings: Settings, tmp_path: Path
) -> None:
    with LocalPipeline(settings, workers=2, server=moto_server) as local:
        local.wait_ready()
        assert local.ready_workers() == 2
        assert local.runner is not None
        sampler = ResourceSampler(roots=lambda: [local.runner.pid])  # type: ignore[union-attr]
        roles = {pid: role_of(p, sampler.harness_pid) for pid, p in sampler.processes().items()}
        workers = [pid for pid, role in roles.items() if role == WORKER]
        assert len(workers) == 2
        # Warm means the conversion child exists: its converter is built before the state file.
        for pid in workers:
            assert [role_of(c, 0) for c in psutil.Process(pid).children()].count(CONVERTER) == 1
        assert roles[local.runner.pid] == SUPERVISOR
        assert roles[sampler.harness_pid] == HARNESS
        # The Lambda environments are the harness's children; the bench's own plain converter,
        # idle beside the stack between its rounds, is not the stack's and is not sampled.
        assert HANDLERS in roles.values()
        one = document("one", synthetic_pdf(tmp_path / "one.pdf", 1))
        with PlainRounds([one], BenchConfig(inputs=[])) as plain:
            assert plain.round()["seconds"][str(one.path)] > 0
            baseline_pid = plain.pid
            assert psutil.Process(baseline_pid).ppid() == sampler.harness_pid
            assert baseline_pid not in sampler.processes()


def test_bench_end_to_end_writes_every_field(tmp_path: Path) -> None:
    one_page = synthetic_pdf(tmp_path / "in" / "one.pdf", 1)
    synthetic_pdf(tmp_path / "in" / "three.pdf", 3)
    out = tmp_path / "out"
    code = cli.main(
        [
            str(one_page.parent),
            "--workers",
            "1,2",
            "--repeat",
            "1",
            "--chunk-pages",
            "2",
            "--chunk-min-cost",
            "0",
            "--splitter-pages",
            "5",
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0
    for name in ("results.json", "results.md", "scaling.png", "stages.png", "cpu.png"):
        assert (out / name).stat().st_size > 0, name
    report = json.loads((out / "results.json").read_text())
    assert report["command"].startswith("scripts/bench ")
    assert report["host"]["before"]["cpus"] and len(report["host"]["after"]["load_average"]) == 3
    assert {d["name"]: d["pages"] for d in report["documents"]} == {"one": 1, "three": 3}

    base = report["baseline"]
    assert base["pages"] == 4 and base["pages_per_s"] > 0
    assert set(base["per_document"]) == {"one", "three"}
    assert base["per_document"]["three"]["cpu_s"] > 0

    split = {s["name"]: s for s in report["splitter"]}
    assert set(split) == {"three", "synthetic-5p"}
    # 5 pages at 2 a chunk: 3 chunks, 4 so that the machine's 2 lanes finish together.
    assert split["synthetic-5p"]["pages"] == 5 and split["synthetic-5p"]["chunks"] == 4
    assert 0 < split["three"]["seconds"] < 5
    assert split["three"]["rss_before_mb"] < split["three"]["peak_rss_mb"] < 1000

    assert [run["workers"] for run in report["pipeline"]] == [1, 2]
    for run in report["pipeline"]:
        w = run["workers"]
        three = run["per_document"]["three"]
        assert three["chunks"] == 2 and three["status"] == ["done"]
        assert 0 < three["latency_p50_s"] <= three["latency_p95_s"] < 60
        assert three["pages_per_s"] == pytest.approx(3 / three["latency_p50_s"], rel=1e-2)
        expected_e = three["pages_per_s"] / (w * base["per_document"]["three"]["pages_per_s"])
        assert three["efficiency"] == pytest.approx(expected_e, rel=1e-2)
        assert set(three["stages"]) == set(STAGES)
        assert three["cpu"][CONVERTER]["cpu_s"] > 0 and three["cpu"][HARNESS]["cpu_s"] > 0
        assert sum(three["stages"].values()) == pytest.approx(three["latency_p50_s"], abs=0.01)
        assert set(three["record_timings"]) >= {
            "split_s",
            "queue_wait_s",
            "convert_s",
            "result_upload_s",
            "assemble_s",
            "total_s",
        }
        overall = run["overall"]
        assert overall["pages"] == 4 and overall["failed_jobs"] == 0
        assert overall["pages_per_s"] > 0 and overall["efficiency"] > 0
        assert 0 < overall["latency_p50_s"] <= overall["latency_p95_s"]
        for kind in ("single", "batch"):
            cpu = run["cpu"][kind]
            assert cpu["wall_s"] > 0
            assert cpu[CONVERTER]["cpu_s"] > 0 and cpu[HARNESS]["cpu_s"] > 0
            threads = run["harness_cpu_s"][kind]
            # The handlers run on the harness's dispatcher threads, or in Lambda environments
            # of their own (processes), as the embedded stack runs them.
            in_process = threads.get("dispatch-splitter", 0) and threads.get("dispatch-completion")
            assert in_process or cpu[HANDLERS]["cpu_s"] > 0
            assert "moto server (request threads)" in threads
        peaks = run["resources"]["peak_rss_mb_by_role"]
        assert {HARNESS, SUPERVISOR, WORKER, CONVERTER} <= set(peaks)
        assert run["resources"]["gpu"]["note"]
        # Each round against the baselines measured just before it.
        (paired,) = run["rounds"]
        assert paired["document"] == "three" and paired["latency_s"] == three["latency_s"][0]
        assert paired["baseline_s"] in base["per_document"]["three"]["seconds"]
        # E, and the two times it is computed from here, are each rounded to 4 places.
        base_s, latency_s = paired["baseline_s"], paired["latency_s"]
        expected = base_s / (w * latency_s)
        rounding = expected * (5e-5 / base_s + 5e-5 / latency_s) + 5e-5
        assert paired["efficiency"] == pytest.approx(expected, abs=rounding)
        assert paired["makespan_s"] == overall["makespan_s"][0]
        assert paired["speedup"] == pytest.approx(
            paired["xargs_makespan_s"] / paired["makespan_s"], rel=1e-2
        )
    # A plain round before each round of each W.
    assert len(base["per_document"]["three"]["seconds"]) == 2
    assert [x["workers"] for x in report["xargs"]] == [1, 2]
    assert set(report["xargs"][1]["per_document"]) == {"one", "three"}
    plan = report["pipeline"][1]["per_document"]["three"]["plan"]
    assert len(plan["chunk_seconds"]) == 2 and plan["estimated_s"] > 0
    names = [t["name"] for t in report["targets"]]
    assert any(n.startswith("E at W=2") for n in names)
    assert any(n.startswith("throughput over `xargs -P 2`") for n in names)
    assert any(n.startswith("worker CPU / converter CPU") for n in names)
    assert any(n.startswith("stack CPU / converter CPU, all documents at once") for n in names)
    assert any(n.startswith("overhead of a 1-page PDF at W=1") for n in names)
    assert any(n.startswith("splitter peak RSS") for n in names)
