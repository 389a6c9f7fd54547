"""The benchmark's typed results: the Markdown rendered from them, and the JSON they read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.pipeline.models import (
    Baseline,
    BaselineDocument,
    BenchResults,
    Document,
    DocumentRun,
    GpuSummary,
    Host,
    HostInfo,
    Overall,
    PassCpu,
    PipelineSummary,
    ResourceSummary,
    RoleCpu,
    RunSettings,
    SplitCost,
    StageSeconds,
    Target,
)
from bench.pipeline.report import markdown, write_results
from bench.pipeline.sampling import CONVERTER, HARNESS, NOT_OURS, WORKER
from pagefleet.models import StageTimings

HISTORY = sorted((Path(__file__).resolve().parents[1] / "bench" / "results").glob("*/results.json"))
STAGES_1 = StageSeconds(
    ingest_s=0.01,
    split_s=0.02,
    queue_wait_s=0.03,
    convert_s=0.5,
    result_upload_s=0.04,
    chunk_overhead_s=0.05,
    completion_wait_s=0.06,
    assemble_s=0.07,
)


def _cpu(converter: float, worker: float, harness: float, rest_cores: float) -> dict[str, RoleCpu]:
    return {
        CONVERTER: RoleCpu(cpu_s=converter, cores=0.5),
        HARNESS: RoleCpu(cpu_s=harness, cores=0.25),
        NOT_OURS: RoleCpu(cpu_s=0.01, cores=rest_cores),
        WORKER: RoleCpu(cpu_s=worker, cores=0.125),
    }


def _document_run(pages: int, chunks: int, workers: int, sampled: bool) -> DocumentRun:
    return DocumentRun(
        pages=pages,
        chunks=chunks,
        status=["done"],
        latency_s=[0.9, 0.8],
        latency_p50_s=0.85,
        latency_p95_s=0.895,
        pages_per_s=pages / 0.85,
        efficiency=0.5 / workers,
        efficiency_bound=min(workers, chunks) / workers,
        overhead_s=0.123,
        stages=STAGES_1,
        cpu=_cpu(0.4, 0.05, 0.3, 0.02) if sampled else {},
        record_timings=StageTimings(split_s=0.02, total_s=0.8),
    )


def _pipeline(workers: int, *, sampled: bool = True) -> PipelineSummary:
    return PipelineSummary(
        workers=workers,
        per_document={
            "big": _document_run(3, 2, workers, sampled),
            "one": _document_run(1, 1, workers, sampled),
        },
        overall=Overall(
            what="all at once",
            pages=4,
            documents=2,
            makespan_s=[1.25],
            makespan_median_s=1.25,
            pages_per_s=3.2,
            baseline_pages_per_s=8.0,
            efficiency=0.4 / workers,
            latency_p50_s=1.0,
            latency_p95_s=1.2,
            failed_jobs=0,
            stages_total=STAGES_1,
        ),
        cpu={"batch": PassCpu(wall_s=1.25, roles=_cpu(1.0, 0.1, 0.6, 0.0))} if sampled else {},
        harness_cpu_s={"batch": {"MainThread": 0.1, "dispatch-splitter": 0.2}} if sampled else {},
        resources=ResourceSummary(
            interval_s=0.5,
            processes=[],
            peak_rss_mb_by_role={CONVERTER: 70.4, HARNESS: 338.6},
            gpu=GpuSummary(note="no GPU sampled: test", devices={}),
            samples=3,
        )
        if sampled
        else None,
    )


def _results(*, sampled: bool = True) -> BenchResults:
    host = HostInfo(cpus=2, load_average=[0.5, 0.25, 0.1], platform="Linux-x", python="3.11.7")
    return BenchResults(
        command="scripts/bench in --workers 1,2",
        started_at="2026-12-01T10:00:00",
        duration_s=12.5,
        host=Host(before=host, after=host),
        mode="embedded" if sampled else "deployed",
        settings=RunSettings(
            converter="text-layer", chunk_pages=2, repeat=1, workers=[1, 2], warm_workers="warm"
        ),
        documents=[
            Document(name="big", path=Path("in/big.pdf"), pages=3, bytes=3 * 2**20),
            Document(name="one", path=Path("in/one.pdf"), pages=1, bytes=2**19),
        ],
        baseline=Baseline(
            what="plain",
            per_document={
                "big": BaselineDocument(seconds=[0.4], median_s=0.4, cpu_s=0.39, pages_per_s=7.5),
                "one": BaselineDocument(seconds=[0.1], median_s=0.1, cpu_s=0.09, pages_per_s=10),
            },
            pages=4,
            total_s=0.5,
            pages_per_s=8.0,
            import_s=0.2,
            peak_rss_mb=71.8,
        ),
        splitter=[
            SplitCost(
                name="big",
                pages=3,
                bytes=3 * 2**20,
                chunks=2,
                seconds=0.0321,
                peak_rss_mb=57.7,
                rss_before_mb=38.7,
                rss_budget_mb=159.0,
                time_target_met=True,
                rss_target_met=True,
            )
        ],
        pipeline=[_pipeline(1, sampled=sampled), _pipeline(2, sampled=sampled)],
        targets=[
            Target(name="E at W=2 on big", target=">= 0.95", value=0.25, met=False),
            Target(name="splitter time, big", target="<= 1 s", value=0.0321, met=True),
        ],
    )


def _table(lines: list[str], heading: str) -> list[str]:
    """The table rows (header and rule included) of the section whose heading starts so."""
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append(line)
    return rows


def test_markdown_renders_every_table_from_the_typed_results() -> None:
    lines = markdown(_results()).splitlines()
    assert lines[2] == "`scripts/bench in --workers 1,2`"
    assert "| E at W=2 on big | >= 0.95 | 0.25 | **no** |" in lines
    assert "| splitter time, big | <= 1 s | 0.0321 | yes |" in lines
    # Overall: the ideal is W x the baseline's pages/s.
    assert "| 2 | 4 | 1.25 | 3.2 | 16.0 | 0.200 | 1.00 | 1.20 |" in lines
    assert (
        "Baseline (plain invocation, one process): 4 pages in 0.50 s = 8.0 pages/s; peak RSS 72 MB."
    ) in lines
    assert "| big | 3 | 2 | 7.50 | 1 | 3.53 | 0.500 | 1.00 | 0.850 | 0.895 | 0.123 |" in lines
    assert "| one | 1 | 1 | 10.00 | 2 | 1.18 | 0.250 | 0.50 | 0.850 | 0.895 | 0.123 |" in lines
    assert (
        "| document | W | ingest (overhead) | split | queue wait (overhead) | convert | "
        "result upload | chunk overhead (overhead) | completion wait (overhead) | assemble |"
    ) in lines
    assert "| big | 2 | 0.010 | 0.020 | 0.030 | 0.500 | 0.040 | 0.050 | 0.060 | 0.070 |" in lines
    assert "| one | 0.090 | 1 | 0.400 | 0.050 | 0.300 | 0.000 | 0.02 |" in _table(
        lines, "## CPU of each job"
    )
    roles = [CONVERTER, HARNESS, NOT_OURS, WORKER]
    assert "| W | pass | wall s | " + " | ".join(roles) + " |" in lines
    assert "| 1 | batch | 1.2 | 0.50 | 0.25 | 0.00 | 0.12 |" in lines
    assert "- W=2, batch: MainThread 0.10, dispatch-splitter 0.20" in lines
    assert (
        "Peak RSS by role (MB): W=1: converter 70, harness (moto + handlers) 339; "
        "W=2: converter 70, harness (moto + handlers) 339."
    ) in lines
    assert "GPU: no GPU sampled: test." in lines
    assert "| big | 3 | 3.0 | 2 | 0.032 | 58 | 39 | 159 |" in lines
    assert lines[-1] == (
        "Charts: [scaling.png](scaling.png), [stages.png](stages.png), [cpu.png](cpu.png)."
    )


def test_markdown_of_a_deployed_run_says_what_was_not_sampled() -> None:
    lines = markdown(_results(sampled=False)).splitlines()
    cpu_table = lines.index(
        "## CPU of each job run alone (median CPU seconds; others' load in cores)"
    )
    assert lines[cpu_table + 4] == ""  # the header only: no job was sampled
    assert "Peak RSS by role (MB): ." in lines
    assert "GPU: not sampled (deployed stack)." in lines


def test_results_json_is_written_from_the_models_and_reads_back(tmp_path: Path) -> None:
    results = _results()
    write_results(results, tmp_path)
    raw = json.loads((tmp_path / "results.json").read_text())
    # The roles of a pass sit beside its wall seconds, as in every earlier run.
    assert raw["pipeline"][0]["cpu"]["batch"]["wall_s"] == 1.25
    assert raw["pipeline"][0]["cpu"]["batch"][CONVERTER] == {"cpu_s": 1.0, "cores": 0.5}
    assert raw["documents"][0]["path"] == "in/big.pdf"
    assert BenchResults.model_validate(raw) == results
    assert (tmp_path / "results.md").read_text() == markdown(results)


@pytest.mark.parametrize("path", HISTORY, ids=lambda p: p.parent.name)
def test_earlier_runs_load_and_render(path: Path) -> None:
    """Every committed results.json reads into the models and writes back unchanged."""
    results = BenchResults.model_validate_json(path.read_bytes())
    assert results.model_dump(mode="json") == json.loads(path.read_text())
    per_document = _table(markdown(results).splitlines(), "## Per document")
    assert len(per_document) == 2 + len(results.documents) * len(results.pipeline)


def test_the_xargs_baseline_and_the_plans_are_reported() -> None:
    from bench.pipeline.models import PlanCheck, XargsDocument, XargsRun
    from bench.pipeline.targets import targets

    results = _results()
    big = results.pipeline[1].per_document["big"]
    results.pipeline[1].per_document["big"] = big.model_copy(
        update={
            "plan": PlanCheck(
                estimated_s=0.6,
                converted_s=0.5,
                chunk_estimates_s=[0.4, 0.2],
                chunk_seconds=[0.3, 0.2],
                ocr_pages=3,
            )
        }
    )
    results.xargs = [
        XargsRun(
            workers=2,
            command="xargs -P 2",
            ocr_threads=1,
            makespan_s=[2.5],
            makespan_median_s=2.5,
            pages_per_s=1.6,
            per_document={
                "big": XargsDocument(seconds=2.0, cpu_s=0.9),
                "one": XargsDocument(seconds=0.5, cpu_s=0.3),
            },
        )
    ]
    lines = markdown(results).splitlines()
    assert "| 2 | 1 | 2.50 | 1.6 | 1.25 | 2.00x |" in lines
    assert "| big | 2 | 2 | 3 | 0.60 | 0.50 | 0.40 | 0.30 | 0.30 |" in lines
    rows = {
        t.name: t for t in targets(results.documents, results.pipeline, [], None, results.xargs)
    }
    assert rows["throughput over `xargs -P 2` (all documents at once)"].value == 2.0
    assert rows["worker CPU / converter CPU, big alone, W=2"].value == 0.125
    # The harness (0.6) and the worker (0.1), less the bench's own main thread (0.1).
    share = rows["stack CPU / converter CPU, all documents at once, W=2 (0.6 s / 1.0 s)"]
    assert share.value == 0.6 and share.met is False
    # big: every page planned as OCR; 0.85 s against 1.3 x 0.9 / 2.
    scan = next(t for n, t in rows.items() if n.startswith("image-only big"))
    assert scan.met is False and scan.value == pytest.approx(0.85 / 0.45, abs=1e-3)
    # Earlier runs have neither: the JSON stays as they wrote it.
    assert "xargs" not in _results().model_dump(mode="json")


def test_targets_take_the_median_of_the_rounds_paired_with_their_baselines() -> None:
    from bench.pipeline.models import PairedRound
    from bench.pipeline.targets import targets

    results = _results()
    # Three rounds; the host sped up between them, so the medians of each side (plain 0.4 s,
    # pipeline 0.5 s: E 0.4) differ from the median of the rounds' own ratios.
    timings = [(0.30, 0.25, 3.0, 1.5), (0.40, 0.50, 4.0, 2.5), (0.60, 0.75, 5.0, 2.5)]
    results.pipeline[1].rounds = [
        PairedRound(
            document="big",
            baseline_s=plain,
            latency_s=ours,
            efficiency=round(plain / (2 * ours), 4),
            xargs_makespan_s=xargs,
            makespan_s=makespan,
            speedup=round(xargs / makespan, 4),
        )
        for plain, ours, xargs, makespan in timings
    ]
    rows = {t.name: t for t in targets(results.documents, results.pipeline, [], None, [])}
    assert rows["E at W=2 on big"].value == 0.4  # the rounds: 0.6, 0.4, 0.4
    lines = markdown(results).splitlines()
    table = _table(lines, "## Round by round")
    assert table[2:] == [
        "| 2 | 1 | big | 0.30 | 0.25 | 0.600 | 3.00 | 1.50 | 2.00x |",
        "| 2 | 2 | big | 0.40 | 0.50 | 0.400 | 4.00 | 2.50 | 1.60x |",
        "| 2 | 3 | big | 0.60 | 0.75 | 0.400 | 5.00 | 2.50 | 2.00x |",
    ]
    from bench.pipeline.models import XargsDocument, XargsRun

    results.xargs = [
        XargsRun(
            workers=2,
            command="xargs -P 2",
            ocr_threads=1,
            makespan_s=[3.0, 4.0, 5.0],
            makespan_median_s=4.0,
            pages_per_s=1.0,
            per_document={"big": XargsDocument(seconds=2.0, cpu_s=0.9)},
        )
    ]
    rows = {
        t.name: t for t in targets(results.documents, results.pipeline, [], None, results.xargs)
    }
    # The rounds' ratios 2.0, 1.6, 2.0, not the medians' 4.0 / 1.25 (the summary's makespan).
    assert rows["throughput over `xargs -P 2` (all documents at once)"].value == 2.0
    assert BenchResults.model_validate_json(results.model_dump_json()) == results
