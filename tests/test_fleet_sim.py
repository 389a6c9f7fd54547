"""bench/fleet: the fleet simulator's model against answers known without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium
import pytest
from fpdf import FPDF

from bench.fleet import cli, workloads
from bench.fleet.config import FleetConfig
from bench.fleet.model import Fleet
from bench.fleet.report import inputs_digest, percentile, summarize
from bench.fleet.validation import DEFAULT_RESULTS, validate
from bench.fleet.workloads import Document, Workload
from pagefleet.costs import measure_pages, plan_policy
from pagefleet.planning import plan_by_cost
from pagefleet.scaling import (
    METRIC_PERIOD_S,
    POLICIES,
    TRACKING_OUT_DATAPOINTS,
    default_policy,
)

# Nothing but the conversion takes time: a closed-form answer is exact.
INSTANT = {
    "chunk_overhead_s": 0.0,
    "notification_delay_s": 0.0,
    "split_base_s": 0.0,
    "split_per_page_s": 0.0,
    "completion_check_s": 0.0,
    "assemble_base_s": 0.0,
    "assemble_per_page_s": 0.0,
    "container_start_s": 0.0,
    "model_start_s": 0.0,
    "spot_interruptions_per_h": 0.0,
}


def _docs(*arrivals: float, pages: int = 16, page_s: float = 1 / 16) -> Workload:
    docs = tuple(Document(arrival_s=t, pages=pages, page_s=page_s) for t in arrivals)
    return Workload(name="t", description="", documents=docs)


def _warm(workers: int, share: float, **extra: Any) -> FleetConfig:
    """One warm task; the splitter spreads nothing, so a 16-page document is one chunk."""
    return FleetConfig(
        fixed_tasks=1,
        workers_per_task=workers,
        stream_share=share,
        splitter_lanes=1,
        **(INSTANT | extra),
    )


def _latencies(fleet: Fleet) -> list[float]:
    return [round((j.recorded_at_s or -1) - j.doc.arrival_s, 9) for j in fleet.jobs]


def test_one_runner_fixed_service_time_is_a_d_d_1_queue() -> None:
    # Four one-chunk documents of 1 s each; three at t=0, one at t=5: done at 1, 2, 3 and 6.
    fleet = Fleet(_warm(workers=1, share=1.0), _docs(0, 0, 0, 5), seed=0).run()
    assert _latencies(fleet) == [1, 2, 3, 1]
    assert max(j.recorded_at_s or 0 for j in fleet.jobs) == pytest.approx(6)


def test_two_workers_with_half_a_device_each_are_two_servers() -> None:
    fleet = Fleet(_warm(workers=2, share=0.5), _docs(0, 0, 0, 5), seed=0).run()
    assert _latencies(fleet) == [1, 1, 2, 1]


def test_two_workers_sharing_a_whole_device_are_processor_sharing() -> None:
    # A stream alone uses the whole device: two at once each run at half speed, both end at 2;
    # the third then runs alone (2..3).
    fleet = Fleet(_warm(workers=2, share=1.0), _docs(0, 0, 0), seed=0).run()
    assert _latencies(fleet) == [2, 2, 3]


def _unmeasured(count: int) -> Workload:
    """``count`` 16-page text documents at t=0 without a measured page time: the GPU's and the
    workers' CPU rates apply."""
    docs = tuple(Document(arrival_s=0.0, pages=16) for _ in range(count))
    return Workload(name="t", description="", documents=docs)


def test_three_workers_on_an_8_vcpu_instance_are_bound_by_its_two_worker_cores() -> None:
    # g6.2xlarge: 4 cores (8 vCPUs) less the model servers' 2 leave 2 to 3 workers. At 1 CPU-s a
    # page and a near-instant GPU, six 16-page chunks (96 CPU-s) take 96 / 2 = 48 s.
    config = _warm(workers=3, share=1.0, text_page_s=0.001, worker_cpu_s_per_page=1.0)
    assert config.page_rates()["cpu"] == 2.0
    fleet = Fleet(config, _unmeasured(6), seed=0).run()
    assert max(j.recorded_at_s or 0 for j in fleet.jobs) == pytest.approx(48)
    assert cli.cpu_bound(config)["text_bound_by"] == "cpu"
    # The measured CPU per page on the default instance: the GPU sets the pace.
    assert cli.cpu_bound(FleetConfig())["text_bound_by"] == "gpu"


def test_without_the_s3_endpoint_chunks_results_and_images_pay_nat_processing() -> None:
    fleet = Fleet(_warm(workers=1, share=1.0), _unmeasured(1), seed=0).run()
    cost, p = summarize(fleet)["non_gpu_cost"], fleet.config.prices
    through_s3 = 16 * (p.pdf_bytes_per_page + p.result_bytes_per_page) / 1e9 + p.image_gb
    assert cost["s3_endpoint"]["nat_gb"] == p.model_gb
    assert cost["nat_only"]["total"] - cost["s3_endpoint"]["total"] == pytest.approx(
        through_s3 * p.nat_per_gb, abs=2e-4
    )
    assert {k: v for k, v in cost["nat_only"]["items"].items() if k != "nat_processing"} == {
        k: v for k, v in cost["s3_endpoint"]["items"].items() if k != "nat_processing"
    }


def test_the_splitter_plans_as_the_deployed_splitter_does() -> None:
    """The chunks are pagefleet.planning's for the settings Terraform gives the splitter: a
    33-page text document, measured by the real measure_pages, planned by plan_by_cost."""
    pdf = FPDF(unit="pt", format=(420, 600))
    pdf.set_font("Helvetica", size=9)
    for number in range(33):
        pdf.add_page()
        pdf.text(30, 30, f"Page {number}: the river rose at dawn.")
    config = FleetConfig(**INSTANT)
    fleet = Fleet(config, _docs(0, pages=33), seed=0).run()
    (job,) = fleet.jobs
    settings = config.splitter_settings()
    doc = pdfium.PdfDocument(bytes(pdf.output()))
    costs = measure_pages(doc, settings)
    planned = plan_by_cost(costs.seconds, plan_policy(settings, costs))
    assert [c.pages for c in job.chunks] == [c.pages for c in planned]
    assert [c.estimated_s for c in job.chunks] == [c.estimated_s for c in planned]
    # spread_tasks (1) x the 2 workers Terraform pins a g6.2xlarge task to.
    assert settings.fleet_lanes == 2 and settings.converter == "marker"


def test_the_committed_report_describes_the_code_as_it_is() -> None:
    """bench/results/fleet/fleet.json records a digest of the model and the deployed code it
    simulates; a change to either makes it stale until `make fleet-report` runs again."""
    committed = json.loads((cli.REPORT_DIR / "fleet.json").read_text())
    assert committed["inputs_sha256"] == inputs_digest(), (
        "bench/results/fleet/ is stale: run `scripts/fleet-sim --report` (make fleet-report)"
    )
    assert all(t["name"] and "met" in t for t in committed["targets"])


def _small(horizon_s: float | None = None, **failures: Any) -> Any:
    fleet = Fleet(FleetConfig(**failures), workloads.single(17), seed=2)
    return summarize(fleet.run(horizon_s=horizon_s))


def test_a_fleet_that_never_registers_is_stopped_within_its_bound() -> None:
    """Every instance boots, is billed and never joins the cluster: the stall policy stops the
    task after stall_minutes, the instance goes with the capacity provider's scale-in, and the
    chunks wait, not lost (kept 14 days). Six simulated hours hold all of it (the stall ends
    at 20 minutes, the instance 15 later) at a twelfth of the default three days' CPU."""
    summary = _small(horizon_s=6 * 3600, registration_failure_share=1.0)
    policy = default_policy()
    assert summary["stalls_stopped"] == 1 and summary["tasks_started"] == 1
    assert summary["instance_minutes"] <= policy.stall_instance_minutes(15) / policy.max_runners
    # The 17-page document waits as the 2 chunks of the task's 2 workers.
    assert summary["chunks_waiting"] == 2 and summary["chunks_lost"] == 0
    assert not summary["finished"]


def test_a_service_at_zero_without_task_metrics_still_leaves_zero() -> None:
    gaps = {"metric_gaps_at_zero": True}
    assert _small(**gaps)["finished"]
    before = FleetConfig(policy=POLICIES["running-gate"], **gaps)
    stuck = summarize(Fleet(before, workloads.single(17), seed=2).run(horizon_s=7200))
    assert stuck["tasks_started"] == 0 and stuck["chunks_waiting"] == 2


def test_a_release_on_drain_uses_up_no_receive() -> None:
    """A Spot interruption drains the task; a chunk still converting at the drain deadline is
    sent again as a new message (the worker's release), so its receives start again."""
    config = _warm(workers=1, share=1.0, drain_timeout_s=10)
    fleet = Fleet(config, _docs(0, page_s=100 / 16), seed=0)

    def drain() -> Any:
        yield fleet.env.timeout(30)
        fleet._stop_task(fleet.tasks[0], drain=True)
        fleet._set_desired(1, "test")

    fleet.env.process(drain())
    fleet.run()
    (job,) = fleet.jobs
    assert job.recorded_at_s is not None and job.chunks[0].conversions == 1
    assert fleet.chunks.redeliveries == 0 and fleet.chunks.receives == 2


def test_a_dead_runners_chunk_is_redelivered_when_its_lease_ends() -> None:
    # One chunk of 100 s; the runner dies at 30 s. Its heartbeat last renewed the lease at
    # 20 s, so the chunk is visible again at 20 + 60 = 80 s and converted by the replacement
    # task (same instance, image cached, nothing to start): done at 180 s.
    config = _warm(workers=1, share=1.0, visibility_timeout_s=60, heartbeat_s=20)
    fleet = Fleet(config, _docs(0, page_s=100 / 16), seed=0)

    def kill() -> Any:
        yield fleet.env.timeout(30)
        fleet._stop_task(fleet.tasks[0], drain=False)

    fleet.env.process(kill())
    fleet.run()
    (job,) = fleet.jobs
    (chunk,) = job.chunks
    assert fleet.chunks.redeliveries == 1
    assert job.recorded_at_s == pytest.approx(180)
    assert chunk.conversions == 1 and job.records_written == 1
    assert len(fleet.tasks) == 2 and fleet.tasks[0].state == "stopped"


def test_a_poison_chunk_is_retried_then_recorded_failed() -> None:
    config = _warm(workers=1, share=1.0, poison_chunk_share=1.0)
    fleet = Fleet(config, _docs(0), seed=0).run()
    (job,) = fleet.jobs
    assert job.recorded_at_s is not None and job.failed == {0}
    assert fleet.chunks.receives == config.max_attempts


def test_the_default_policy_starts_one_task_for_one_page_and_scales_to_zero() -> None:
    fleet = Fleet(FleetConfig(), workloads.single(1), seed=3).run()
    summary = summarize(fleet)
    assert summary["tasks_started"] == 1 and summary["instances_launched"] == 1
    assert summary["finished"] and summary["records"] == 1
    # ... and back to zero: the idle policy set 0 once idle_minutes of datapoints (published a
    # minute late) showed nothing outstanding; the idle task stopped at once, and its instance
    # instance_idle_s later.
    assert fleet.desired == 0 and fleet.actions[-1][1:] == ("to_zero", 1, 0)
    (job,) = fleet.jobs
    idle_s = fleet.policy.idle_minutes * 60
    assert job.recorded_at_s is not None
    assert job.recorded_at_s + idle_s <= fleet.actions[-1][0] <= job.recorded_at_s + idle_s + 180
    (instance,) = fleet.instances
    assert instance.terminated_s == pytest.approx(
        fleet.actions[-1][0] + fleet.config.instance_idle_s
    )


def test_the_first_release_starts_max_runners_tasks_for_one_page() -> None:
    fleet = Fleet(FleetConfig(policy=POLICIES["today"]), workloads.single(1), seed=3).run()
    assert len(fleet.tasks) == POLICIES["today"].max_runners
    assert [a[1] for a in fleet.actions[:4]] == ["from_zero"] * 4


def _fingerprint(seed: int) -> str:
    config = FleetConfig(spot_interruptions_per_h=0.5, task_crashes_per_h=0.2)
    load = workloads.steady(seed, hours=1.5, docs_per_h=60)
    return json.dumps(summarize(Fleet(config, load, seed=seed).run()), sort_keys=True)


def test_a_seed_fixes_the_run() -> None:
    assert _fingerprint(7) == _fingerprint(7)
    assert _fingerprint(7) != _fingerprint(8)


def test_spot_interruptions_and_crashes_lose_nothing_and_convert_nothing_twice() -> None:
    config = FleetConfig(spot_interruptions_per_h=4.0, task_crashes_per_h=2.0)
    fleet = Fleet(config, workloads.burst(5, documents=150), seed=5).run()
    summary = summarize(fleet)
    assert summary["spot_interruptions"] + summary["task_crashes"] > 0
    assert summary["chunks_redelivered"] > 0
    assert summary["finished"] and summary["chunks_lost"] == 0
    assert summary["chunks_converted_twice"] == 0 and summary["records_written_twice"] == 0
    assert summary["records"] == 150


def test_a_trace_round_trips(tmp_path: Path) -> None:
    extra = Document(arrival_s=9e3, pages=3, scanned_share=0.5, page_s=0.25)
    docs = (*workloads.steady(2, hours=0.5).documents[:5], extra)
    path = tmp_path / "trace.csv"
    workloads.write_trace(path, docs)
    assert path.read_text().splitlines()[0] == "arrival_s,pages,scanned_share,page_s"
    back = workloads.read_trace(path)
    assert [(d.pages, d.scanned_share, d.page_s) for d in back.documents] == [
        (d.pages, d.scanned_share, d.page_s) for d in docs
    ]
    assert [round(d.arrival_s, 3) for d in back.documents] == [round(d.arrival_s, 3) for d in docs]


def test_the_diurnal_day_has_its_pages_and_its_peak_at_noon() -> None:
    day = workloads.diurnal(1, pages=20_000)
    assert 20_000 <= day.pages < 22_000
    hours = [int(d.arrival_s // 3600) for d in day.documents]
    assert hours.count(12) > 3 * hours.count(0)


def test_percentile_is_nearest_rank() -> None:
    assert percentile([5, 1, 4, 2, 3], 50) == 3
    assert percentile(list(range(1, 101)), 95) == 95
    assert percentile([], 50) is None


def test_the_model_predicts_the_embedded_stacks_makespan_within_15_percent() -> None:
    rows = validate(DEFAULT_RESULTS)["rows"]
    measured_pass = [r for r in rows if r["per_page_times"] == "all-at-once pass"]
    assert [r["workers"] for r in measured_pass] == [1, 2]
    assert all(r["within_tolerance"] for r in measured_pass), measured_pass


def test_fleet_sim_writes_its_report(tmp_path: Path) -> None:
    code = cli.main(
        ["--workloads", "single-1p", "--policies", "today,per-desired", "--out", str(tmp_path)]
    )
    assert code == 0
    doc = json.loads((tmp_path / "fleet.json").read_text())
    assert [r["policy"] for r in doc["runs"]] == ["today", "per-desired"]
    assert doc["targets"][0]["met"] is True
    assert (tmp_path / "fleet.png").stat().st_size > 0
    assert "| single-1p | per-desired |" in (tmp_path / "fleet.md").read_text()
    assert doc["default_policy"] == default_policy().name


@pytest.mark.parametrize("option", ["--workloads", "--policies"])
def test_an_unknown_name_is_a_usage_error_that_lists_the_known_ones(
    option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.parse([option, "steady,nosuch" if option == "--workloads" else "nosuch"])
    assert exited.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    known = cli.WORKLOADS if option == "--workloads" else cli.POLICIES
    assert "no " in error and "named nosuch" in error and ", ".join(known) in error, error


# --- the deployed policy against the cold start, and the AWS semantics it relies on ----------


def test_a_task_is_added_only_for_a_backlog_its_fleet_would_not_clear_in_two_cold_starts() -> None:
    """A GPU task pays its cold start and its instance's scale-in whatever it converts: the
    deployed target is a backlog per task of two cold starts plus the minutes target tracking
    takes to see it (TRACKING_OUT_DATAPOINTS, published a minute late), and the scale-out
    cooldown outlasts that minute of delay."""
    config, policy = FleetConfig(), default_policy()
    seeing_s = (TRACKING_OUT_DATAPOINTS + 1) * METRIC_PERIOD_S
    assert policy.acceptable_latency_s >= 2 * config.cold_start_s + seeing_s
    assert policy.scale_out_cooldown_s > config.metric_delay_s + METRIC_PERIOD_S


def _point(
    end_s: float, visible: float, in_flight: float, desired: float
) -> dict[str, float | None]:
    return {
        "end_s": end_s,
        "visible": visible,
        "visible_max": visible,
        "in_flight": in_flight,
        "in_flight_max": in_flight,
        "age_max": 30.0,
        "running": desired,
        "running_max": desired,
        "desired": desired,
        "desired_max": desired,
    }


def test_within_the_scale_out_cooldown_a_late_datapoint_adds_no_task_again() -> None:
    """Application Auto Scaling counts the capacity a scale-out added as part of the next one
    while its cooldown lasts: the datapoints from before the scale-out, still the latest a
    minute later, set the same capacity again, and only a larger backlog adds more."""
    fleet = Fleet(FleetConfig(), workloads.single(1), seed=0)
    fleet.desired = 1
    target = fleet.policy.target_backlog_per_task
    fleet.datapoints = [_point(-60.0 * k, 2.5 * target, 3, 1) for k in (4, 3, 2)]
    fleet._evaluate()
    assert fleet.desired == 3  # ceil(1 x (2.5 target + 3) / target)
    fleet._evaluate()  # the same datapoints, within the cooldown
    assert fleet.desired == 3, fleet.actions
    fleet.datapoints += [_point(-60.0 * k, 5.5 * target, 3, 1) for k in (3, 2, 1)]
    fleet._evaluate()  # a larger backlog, still within the cooldown
    assert fleet.desired == 6 and [a[1] for a in fleet.actions] == ["tracking_out"] * 2


def test_target_trackings_scale_in_does_not_hold_back_the_step_to_zero() -> None:
    """Each policy keeps its own cooldown (a step policy's scale-in is not blocked by target
    tracking's): a quiet quarter hour scales three tasks in to one, and the idle policy sets
    zero at the same evaluation, not a scale-in cooldown later."""
    fleet = Fleet(FleetConfig(), workloads.single(1), seed=0)
    fleet.desired = 3
    fleet.datapoints = [_point(-60.0 * k, 0, 0, 3) for k in range(16, 0, -1)]
    fleet._evaluate()
    assert [a[1:] for a in fleet.actions] == [("tracking_in", 3, 1), ("to_zero", 1, 0)]


def test_the_splitter_prices_the_pages_a_real_pdf_has_without_text_as_ocr_pages() -> None:
    config = FleetConfig(**INSTANT)
    doc = Document(arrival_s=0, pages=5, scanned_share=0.2, ocr_pages=(2,))
    fleet = Fleet(config, Workload(name="t", description="", documents=(doc,)), seed=0).run()
    settings = config.splitter_settings()
    (job,) = fleet.jobs
    assert sum(c.estimated_s for c in job.chunks) == pytest.approx(
        4 * settings.cost_marker_page_s + settings.cost_marker_ocr_page_s
    )
    assert doc.scanned() == {2}
    assert Document(arrival_s=0, pages=5, scanned_share=0.4).scanned() == {4, 5}


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no shared corpus beside the checkout")
def test_the_corpus_workload_is_the_splitters_measure_of_the_shared_corpus() -> None:
    committed = json.loads(workloads.CORPUS_FILE.read_text())["documents"]
    assert committed == workloads.measure_corpus(CORPUS), (
        "bench/fleet/corpus.json is stale: scripts/fleet-sim --measure-corpus ../shared/corpus/real"
    )
    load = workloads.corpus(1, hours=1)
    names = {(d["pages"], tuple(d["ocr_pages"])) for d in committed}
    assert load.documents and all((d.pages, d.ocr_pages) in names for d in load.documents)
