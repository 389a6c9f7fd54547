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
from pagefleet.scaling import POLICIES, ScalingPolicy

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
