"""bench/fleet's CPU runners (runner_kind = "cpu"): Fargate tasks of the text-layer converter,
as terraform/modules/runners/cpu_task.json sizes them and terraform/main.tf plans their chunks."""

from __future__ import annotations

import json

import pytest

from bench.fleet.config import cpu_fleet
from bench.fleet.model import Fleet
from bench.fleet.report import summarize
from bench.fleet.workloads import Document, Workload
from bench.paths import ROOT
from pagefleet.settings import Settings

CPU_TASK = json.loads((ROOT / "terraform/modules/runners/cpu_task.json").read_text())


def _load(*documents: Document) -> Workload:
    return Workload(name="t", description="", documents=documents)


def test_the_cpu_fleet_is_the_task_and_splitter_terraform_deploys() -> None:
    config = cpu_fleet()
    settings = config.splitter_settings()
    assert config.workers_per_task == CPU_TASK["workers"]
    assert config.worker_cores == CPU_TASK["cpu"] // 1024
    assert not config.spot
    # terraform/main.tf handler_env for runner_kind = "cpu" (cpu_runners.tftest.hcl: "8", lanes
    # spread_tasks x 2).
    assert settings.converter == "text-layer"
    assert settings.chunk_min_cost_s == CPU_TASK["chunk_cpu_s"]
    assert settings.fleet_lanes == config.policy.spread_tasks * CPU_TASK["workers"]
    assert config.policy.seconds_per_chunk == CPU_TASK["chunk_cpu_s"] / CPU_TASK["workers"]
    p = config.prices
    extra_gb = CPU_TASK["ephemeral_storage_gib"] - p.fargate_included_storage_gb
    assert config.price_per_h == pytest.approx(
        CPU_TASK["cpu"] / 1024 * p.fargate_per_vcpu_h
        + CPU_TASK["memory_mib"] / 1024 * p.fargate_per_gb_h
        + extra_gb * p.fargate_storage_per_gb_h
    )


def test_a_cpu_chunk_is_the_policys_unit_whether_text_or_scan() -> None:
    """Ten scanned pages (7.5 s each) are ten chunks of about chunk_cpu_s; 2,000 text pages
    (about 15 ms each) are four chunks of 500 pages, two rounds on each of two lanes."""
    fleet = Fleet(
        cpu_fleet(),
        _load(
            Document(arrival_s=0, pages=10, scanned_share=1.0),
            Document(arrival_s=0, pages=2000),
        ),
        seed=0,
    ).run()
    scan, text = fleet.jobs
    defaults = Settings.model_construct()
    assert [c.pages for c in scan.chunks] == [1] * 10
    assert {c.estimated_s for c in scan.chunks} == {defaults.cost_ocr_page_s}
    assert [c.pages for c in text.chunks] == [500] * 4
    # ceil(total / chunk_cpu_s) chunks: each a little under it, none a fraction of it.
    text_s, _ = fleet.config.splitter_page_s(fleet.splitter)
    assert [c.estimated_s for c in text.chunks] == [pytest.approx(500 * text_s, abs=1e-4)] * 4
    assert 0.9 * CPU_TASK["chunk_cpu_s"] < 500 * text_s <= CPU_TASK["chunk_cpu_s"]
    # Each chunk is all CPU, on one of the task's cores.
    assert all(c.work_s == 0 for c in scan.chunks)
    assert scan.chunks[0].cpu_s == pytest.approx(defaults.cost_ocr_page_s / 2)


def test_fargate_starts_each_task_on_capacity_of_its_own_and_bills_it_alone() -> None:
    """Two one-page documents an hour apart: two tasks, each on its own capacity, billed from
    its start to its stop, pulling the runner image and downloading no model."""
    config = cpu_fleet()
    fleet = Fleet(
        config, _load(Document(arrival_s=0, pages=1), Document(arrival_s=3600, pages=1)), seed=0
    ).run()
    summary = summarize(fleet)
    assert summary["finished"] and summary["tasks_started"] == 2
    assert len(fleet.instances) == 2
    for task in fleet.tasks:
        assert task.instance is not None and task.instance.terminated_s == task.stopped_s
    # Upload to record: the from-zero alarm's datapoint, published a minute late, then the
    # cold start (no capacity provider, no instance boot, the image pulled).
    (first, _) = fleet.jobs
    assert first.recorded_at_s is not None
    assert config.cold_start_s < first.recorded_at_s < config.cold_start_s + 180
    task_h = sum((i.terminated_s or 0) - i.launched_s for i in fleet.instances) / 3600
    assert summary["cost"]["total"] == pytest.approx(task_h * config.price_per_h, abs=0.01)
    assert summary["cost_spot"] is None
    other, p = summary["non_gpu_cost"], config.prices
    assert other["s3_endpoint"]["nat_gb"] == 0
    assert other["nat_only"]["nat_gb"] == pytest.approx(2 * p.runner_image_gb, abs=0.01)
