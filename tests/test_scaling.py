"""pagefleet/scaling.py: the scaling policy's numbers, their export to Terraform, and the
arithmetic both Terraform's step policy and the fleet simulator rely on."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import re
from pathlib import Path
from types import ModuleType

import pytest

from pagefleet import scaling
from pagefleet.costs import PageCosts, plan_policy
from pagefleet.planning import plan_by_cost
from pagefleet.scaling import POLICIES, ScalingPolicy
from pagefleet.settings import Settings

TF_DIR = Path(__file__).resolve().parents[1] / "terraform"


def _stack_json_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "stack_json", TF_DIR / "scripts" / "stack_json.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_export_is_the_default_policy() -> None:
    committed = json.loads((TF_DIR / "stack.json").read_text())["scaling"]
    assert committed == json.loads(json.dumps(scaling.export(scaling.default_policy()))), (
        "terraform/stack.json is stale: run `make terraform-stack-json`"
    )


def test_a_changed_policy_makes_the_export_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    script = _stack_json_script()
    assert script.main(["--check"]) == 0
    changed = {
        **POLICIES,
        scaling.DEFAULT_POLICY: POLICIES[scaling.DEFAULT_POLICY].model_copy(
            update={"max_runners": 3}
        ),
    }
    monkeypatch.setattr(scaling, "POLICIES", changed)
    assert script.main(["--check"]) == 1


@pytest.mark.parametrize("target", [50.0, 7.5, 1.0, 33.3])
def test_the_step_from_zero_sets_ceil_backlog_over_target(target: float) -> None:
    policy = ScalingPolicy(
        name="t", max_runners=6, acceptable_latency_s=target, seconds_per_chunk=1
    )
    for visible in range(1, 400):
        wanted = min(6, math.ceil(visible / target))
        assert policy.from_zero_capacity(visible, desired=0) == wanted, visible
        # Repeated while tasks start (desired already set): the same number, never more.
        assert policy.from_zero_capacity(visible, desired=wanted) == wanted


def test_one_visible_chunk_starts_exactly_one_task_and_repeats_add_none() -> None:
    policy = scaling.default_policy()
    desired = 0
    for _ in range(20):  # twenty evaluations of the alarm while the task starts
        desired = policy.from_zero_capacity(1, desired)
    assert desired == 1


def test_the_first_release_piles_up_tasks_while_one_starts() -> None:
    policy = POLICIES["today"]
    desired = 0
    for _ in range(10):
        desired = policy.from_zero_capacity(1, desired)
    assert desired == policy.max_runners


def test_steps_are_contiguous_and_open_ended() -> None:
    steps = scaling.default_policy().from_zero_steps()
    assert steps[0].lower == 0 and steps[-1].upper is None
    assert all(a.upper == b.lower for a, b in itertools.pairwise(steps))
    assert [s.adjustment for s in steps] == list(range(1, len(steps) + 1))


def test_a_fleet_past_twenty_tasks_leaves_zero_in_the_steps_aws_allows() -> None:
    """A step policy holds 20 step adjustments (Application Auto Scaling's quota): with
    max_runners 24 the steps stop at 20 tasks, and target tracking takes it from there."""
    policy = scaling.default_policy().model_copy(update={"max_runners": 24})
    steps = policy.from_zero_steps()
    assert len(steps) == scaling.MAX_STEP_ADJUSTMENTS == 20
    assert steps[-1].upper is None and steps[-1].adjustment == 20
    assert policy.from_zero_capacity(10_000, desired=0) == 20
    assert policy.tracking_capacity(metric=10_000, current=20) == 24


def test_tracking_capacity_scales_by_metric_over_target() -> None:
    policy = ScalingPolicy(name="t", max_runners=8, acceptable_latency_s=100, seconds_per_chunk=10)
    assert policy.target_backlog_per_task == 10
    assert policy.tracking_capacity(metric=25, current=2) == 5
    assert policy.tracking_capacity(metric=10, current=3) == 3
    assert policy.tracking_capacity(metric=0, current=3) == 0
    assert policy.tracking_capacity(metric=1000, current=3) == 8


def _terraform_tracking_expressions() -> dict[str, str]:
    """The tracked metric math as the autoscaling module writes it (its ``tracking_expression``
    map), read from the HCL itself."""
    hcl = (TF_DIR / "modules" / "autoscaling" / "main.tf").read_text()
    block = re.search(r"tracking_expression = \{\n(.*?)\n\s*\}\[var\.tracking_metric\]", hcl, re.S)
    assert block is not None, "the autoscaling module's tracking_expression map moved"
    return dict(re.findall(r'^\s*(\w+)\s*=\s*"(.*)"\s*$', block.group(1), re.M))


def test_every_policy_has_a_terraform_expression() -> None:
    terraform = _terraform_tracking_expressions()
    assert terraform == scaling.TRACKING_EXPRESSIONS
    for policy in POLICIES.values():
        assert terraform[policy.tracking_metric] == scaling.export(policy)["tracking_expression"]


# --- the splitter's plan and the policy: one unit --------------------------------------------

# The workers Terraform pins a task to on its default instance types (all .2xlarge; the root's
# terraform test checks the same 2), from the runner's own sizing.
WORKERS_PER_GPU = json.loads((TF_DIR / "stack.json").read_text())["marker_workers"]["g6.2xlarge"]


def _deployed_splitter() -> Settings:
    """The splitter's settings as Terraform sets them from stack.json (terraform/main.tf
    handler_env; terraform/tests/root.tftest.hcl checks the same numbers there)."""
    exported = json.loads((TF_DIR / "stack.json").read_text())
    numbers = exported["scaling"]
    policy = ScalingPolicy.model_validate(
        {"name": numbers["policy"]}
        | {k: v for k, v in numbers.items() if k in ScalingPolicy.model_fields}
    )
    env = policy.splitter_environment(WORKERS_PER_GPU, exported["settings"]["chunk_pages"])
    return Settings.model_validate(
        {k.removeprefix("PAGEFLEET_").lower(): v for k, v in env.items()}
    )


def _plan(settings: Settings, text: int, scans: int = 0) -> list[float]:
    """The estimated seconds of each chunk the splitter plans for a document of ``text`` text
    pages followed by ``scans`` pages to OCR (what measure_pages gives such a document)."""
    seconds = [settings.cost_marker_page_s] * text + [settings.cost_marker_ocr_page_s] * scans
    ocr = list(range(text + 1, text + scans + 1))
    costs = PageCosts(seconds, ocr, 0.0, settings.cost_marker_page_s)
    return [c.estimated_s for c in plan_by_cost(seconds, plan_policy(settings, costs))]


@pytest.mark.parametrize(("text", "scans"), [(1, 0), (17, 0), (0, 17), (20, 4)])
def test_a_small_document_into_an_idle_fleet_starts_exactly_one_task(text: int, scans: int) -> None:
    """Issue 25, finding 1: spread over max_runners x workers_per_gpu (24) lanes, a 17-page
    document became 17 chunks, and ceil(17 / (300 / 18)) = 2 tasks left zero for it."""
    settings = _deployed_splitter()
    chunks = _plan(settings, text, scans)
    # Under one task's workers' worth of the policy's unit, spread over those workers; past it
    # (17 scans: 37.4 s against 2 x 17.6), cut by the unit, into chunks one task still clears.
    if sum(chunks) < settings.chunk_pages * settings.cost_marker_page_s * WORKERS_PER_GPU:
        assert len(chunks) <= WORKERS_PER_GPU
    assert scaling.default_policy().from_zero_capacity(len(chunks), desired=0) == 1


def test_the_splitters_chunk_is_the_policys_unit() -> None:
    """A chunk is seconds_per_chunk of a task's time, whatever the fleet's size: the backlog the
    policy counts in chunks is the backlog in estimated seconds, so a document of S seconds
    never starts more tasks from zero than S / acceptable_latency_s asks for (one at least)."""
    settings = _deployed_splitter()
    policy = scaling.default_policy()
    assert settings.chunk_pages * settings.cost_marker_page_s == pytest.approx(
        policy.seconds_per_chunk
    )
    for text, scans in itertools.product([0, 1, 5, 16, 17, 33, 48, 49, 100, 400, 2000], [0, 3, 60]):
        if text + scans == 0:
            continue
        chunks = _plan(settings, text, scans)
        total = sum(chunks)
        # A chunk aims at the unit and never passes it by more than a page's share; rounding
        # the count up to a multiple of the lanes adds fewer chunks than there are lanes.
        lanes = policy.splitter_lanes(WORKERS_PER_GPU)
        assert all(c <= 1.1 * policy.seconds_per_chunk for c in chunks), (text, scans)
        assert len(chunks) <= max(lanes, math.ceil(total / policy.seconds_per_chunk) + lanes - 1)
        needed = max(1, math.ceil(total / policy.acceptable_latency_s - 1e-9))
        tasks = policy.from_zero_capacity(len(chunks), desired=0)
        assert tasks <= min(policy.max_runners, needed), (text, scans, len(chunks), total)


def test_more_lanes_than_one_tasks_backlog_are_refused() -> None:
    policy = scaling.default_policy()
    assert policy.splitter_lanes(WORKERS_PER_GPU) == policy.spread_tasks * WORKERS_PER_GPU == 2
    assert policy.model_copy(update={"spread_tasks": 38}).splitter_lanes(WORKERS_PER_GPU) == 76
    with pytest.raises(ValueError, match="more than one task from zero"):
        # 39 tasks x 2 workers = 78 lanes, past one task's 1350 / 17.6 = 76.7 chunks.
        policy.model_copy(update={"spread_tasks": 39}).splitter_lanes(WORKERS_PER_GPU)


# --- the metric math the alarms deploy, as the simulator evaluates it -------------------------


def test_leaving_zero_reads_the_queue_so_it_fires_without_task_metrics() -> None:
    """Container Insights may publish no RunningTaskCount for a service at zero (issue 25,
    finding 3); SQS publishes the queue's metrics while it holds a message (Amazon SQS
    Developer Guide, "Available CloudWatch metrics for Amazon SQS": all metrics emit values
    only while the queue is active). A metric absent from the period is absent from ``values``:
    the running-count gate then gives no datapoint, the in-flight gate still the backlog."""
    at_zero = {"visible": 5.0, "in_flight": 0.0, "age": 90.0}
    assert scaling.evaluate(scaling.default_policy().from_zero_expression, at_zero) == 5
    assert scaling.evaluate(POLICIES["running-gate"].from_zero_expression, at_zero) is None
    # A running count that exists with a gap in it is filled with zero.
    gap = at_zero | {"running": None}
    assert scaling.evaluate(POLICIES["running-gate"].from_zero_expression, gap) == 5
    # Chunks in flight: some task converts, target tracking's business.
    assert (
        scaling.evaluate(scaling.default_policy().from_zero_expression, at_zero | {"in_flight": 2})
        == 0
    )


def test_a_stalled_backlog_stops_the_fleet_and_does_not_restart_it() -> None:
    policy = scaling.default_policy()
    assert policy.stall_s == 1200 and policy.stall_expression is not None
    waiting = {"visible": 5.0, "in_flight": 0.0, "age": 600.0}
    assert scaling.evaluate(policy.stall_expression, waiting) == 1
    assert scaling.evaluate(policy.stall_expression, waiting | {"in_flight": 1}) == 0
    # By the last of a stall's 20 datapoints the first one's chunks are 19 minutes old: the
    # step from zero no longer starts tasks for them.
    assert scaling.evaluate(policy.from_zero_expression, waiting | {"age": 1139.0}) == 5
    assert scaling.evaluate(policy.from_zero_expression, waiting | {"age": 1140.0}) == 0
    # 8 instances for 20 minutes of datapoints, 2 of publication and evaluation, 15 of the
    # capacity provider's scale-in.
    assert policy.stall_instance_minutes(instance_scale_in_minutes=15) == 8 * (20 + 2 + 15)


def test_the_evaluator_knows_only_the_metric_math_written_here() -> None:
    for policy in POLICIES.values():
        for expression in (policy.tracking_expression, policy.from_zero_expression):
            scaling.evaluate(
                expression, {"visible": 1, "in_flight": 1, "running": 1, "desired": 1, "age": 0}
            )
    assert scaling.evaluate("visible / desired", {"visible": 3, "desired": 0}) is None
    with pytest.raises(ValueError, match="not metric math"):
        scaling.evaluate("MAX(visible)", {"visible": 1})
