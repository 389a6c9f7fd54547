"""The runner fleet's scaling policy, defined once.

Terraform (``terraform/modules/autoscaling``) reads these numbers from ``terraform/stack.json``
(exported by ``terraform/scripts/stack_json.py``; a test fails when the export is stale), and
the fleet simulator (``bench/fleet``) replays workloads against the same numbers, so what is
simulated is what is deployed.

Three policies are named here so the simulator can compare them; ``DEFAULT_POLICY`` is the one
deployed.

``today``
    The first release: a step policy adds one task (``ChangeInCapacity +1``) every cooldown
    while chunks are visible and no task runs. Step scaling keeps adjusting, once per
    cooldown, for as long as its alarm is in ALARM, and a GPU task takes minutes to run, so one
    small PDF drives the service to ``max_runners``.
``fixed``
    Leaving zero sets an exact capacity from the backlog (``ExactCapacity``,
    ``ceil(visible / target)``): repeating it while tasks are pending sets the same number
    again, so nothing accumulates. Target tracking then holds chunks outstanding (visible + in
    flight, at least one) per *running* task at the target. Idle for ``idle_minutes``: zero.
    (The first release tracked visible chunks only: busy workers leave none visible, so its
    scale-in set zero tasks while they worked.)
``per-desired``
    As ``fixed``, but target tracking divides by the *desired* task count (Container
    Insights' ``DesiredTaskCount``), so tasks still starting count as capacity and a cold start
    does not inflate the ratio (``ceil(desired * outstanding / running / target)`` overshoots
    while most tasks are pending; ``ceil(outstanding / target)`` does not).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# The metric math each kind of target tracking uses (ids as in the Terraform module). The
# outstanding kinds count at least one chunk: a minute with nothing outstanding would otherwise
# make target tracking's own scale-in set ceil(current x 0 / target) = 0 tasks, stopping the
# fleet at its first quiet minute (a cold start of minutes for the next document) instead of
# after ``idle_minutes``; scaling to zero is the idle policy's job.
TRACKING_EXPRESSIONS = {
    "visible_per_running": "visible / running",
    "outstanding_per_running": "IF(visible + in_flight < 1, 1, visible + in_flight) / running",
    "outstanding_per_desired": "IF(visible + in_flight < 1, 1, visible + in_flight) / desired",
}
TrackingMetric = Literal[
    "visible_per_running", "outstanding_per_running", "outstanding_per_desired"
]
FromZero = Literal["change_plus_one", "exact_backlog"]

# Target tracking's own alarms for a custom metric (Application Auto Scaling creates them):
# scale out after 3 one-minute datapoints above the target, scale in after 15 below 90% of it.
TRACKING_OUT_DATAPOINTS = 3
TRACKING_IN_DATAPOINTS = 15
TRACKING_IN_FRACTION = 0.9
METRIC_PERIOD_S = 60


# Application Auto Scaling's quota "Step adjustments per step scaling policy": 20 by default
# (docs.aws.amazon.com/autoscaling/application/userguide/application-auto-scaling-quotas.html);
# a policy with more is refused at apply, so the steps from zero stop there.
MAX_STEP_ADJUSTMENTS = 20


class StepAdjustment(BaseModel):
    """One step of a step policy; bounds are relative to the alarm threshold, as AWS has them
    (lower inclusive, upper exclusive, None = unbounded)."""

    model_config = ConfigDict(frozen=True)

    lower: int | float | None
    upper: int | float | None
    adjustment: int


class ScalingPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    min_runners: int = Field(0, ge=0, description="Fewest runner tasks (0: scale to zero).")
    max_runners: int = Field(8, ge=1, description="Most runner tasks (one GPU each).")
    acceptable_latency_s: float = Field(
        300, gt=0, description="How long the chunks outstanding per task may take to clear."
    )
    # 16 pages (85% text, 15% OCR) on one L4 (g6.xlarge, terraform's first instance type)
    # with 3 workers: about 18.5 s by bench/fleet/config.py's estimate; no GPU measured it yet.
    seconds_per_chunk: float = Field(
        18, gt=0, description="Seconds one runner task (one GPU, all its workers) needs per chunk."
    )
    tracking_metric: TrackingMetric = "outstanding_per_desired"
    from_zero: FromZero = "exact_backlog"
    scale_out_cooldown_s: int = Field(60, ge=0, description="Seconds between scale-outs.")
    scale_in_cooldown_s: int = Field(300, ge=0, description="Seconds between scale-ins.")
    from_zero_cooldown_s: int = Field(60, ge=0, description="Cooldown of the step from zero.")
    idle_minutes: int = Field(
        15, ge=1, description="Minutes with nothing visible or in flight before zero tasks."
    )

    @model_validator(mode="after")
    def _a_task_takes_at_least_a_chunk(self) -> ScalingPolicy:
        # Below one chunk per task the steps from zero would be empty intervals.
        if self.target_backlog_per_task < 1:
            raise ValueError("acceptable_latency_s / seconds_per_chunk must be at least 1 chunk")
        return self

    @property
    def target_backlog_per_task(self) -> float:
        """Chunks outstanding per task that clear within ``acceptable_latency_s``."""
        return self.acceptable_latency_s / self.seconds_per_chunk

    @property
    def tracking_expression(self) -> str:
        return TRACKING_EXPRESSIONS[self.tracking_metric]

    @property
    def from_zero_adjustment_type(self) -> str:
        return "ChangeInCapacity" if self.from_zero == "change_plus_one" else "ExactCapacity"

    def from_zero_steps(self) -> list[StepAdjustment]:
        """Steps of the policy that leaves zero; its alarm's metric is the visible chunks while
        no task runs, threshold 1.

        ``exact_backlog``: ``ceil(visible / target)`` tasks, at most ``max_runners`` and at
        most ``MAX_STEP_ADJUSTMENTS`` (past that, target tracking takes the fleet further once
        tasks run). For an integer backlog v, ceil(v / T) = n exactly when floor((n-1)T) < v <=
        floor(nT), i.e. when v - 1 (the breach) lies in [floor((n-1)T), floor(nT)).
        """
        if self.from_zero == "change_plus_one":
            return [StepAdjustment(lower=0, upper=None, adjustment=1)]
        target = self.target_backlog_per_task
        last = min(self.max_runners, MAX_STEP_ADJUSTMENTS)
        steps = []
        for n in range(1, last + 1):
            upper = None if n == last else math.floor(n * target)
            steps.append(
                StepAdjustment(lower=math.floor((n - 1) * target), upper=upper, adjustment=n)
            )
        return steps

    def from_zero_capacity(self, visible: float, desired: int) -> int:
        """The desired count the step from zero sets when its alarm sees ``visible`` chunks."""
        if visible < 1:
            return desired
        breach = visible - 1  # metric minus threshold
        for step in self.from_zero_steps():
            if (step.lower is None or breach >= step.lower) and (
                step.upper is None or breach < step.upper
            ):
                if self.from_zero == "change_plus_one":
                    return min(self.max_runners, desired + step.adjustment)
                return min(self.max_runners, max(self.min_runners, step.adjustment))
        return desired

    def tracking_capacity(self, metric: float, current: int) -> int:
        """Target tracking's new capacity: the current one scaled by metric / target."""
        wanted = math.ceil(current * metric / self.target_backlog_per_task - 1e-9)
        return min(self.max_runners, max(self.min_runners, wanted))


def _tidy(value: float) -> float:
    """Integral bounds as integers, so Terraform and JSON show 20 rather than 20.000000001."""
    rounded = round(value, 6)
    return int(rounded) if rounded == int(rounded) else rounded


POLICIES: dict[str, ScalingPolicy] = {
    "today": ScalingPolicy(
        name="today",
        max_runners=4,
        seconds_per_chunk=6,
        tracking_metric="visible_per_running",
        from_zero="change_plus_one",
    ),
    "fixed": ScalingPolicy(
        name="fixed", tracking_metric="outstanding_per_running", from_zero="exact_backlog"
    ),
    "per-desired": ScalingPolicy(
        name="per-desired", tracking_metric="outstanding_per_desired", from_zero="exact_backlog"
    ),
}
DEFAULT_POLICY = "per-desired"


def default_policy() -> ScalingPolicy:
    return POLICIES[DEFAULT_POLICY]


def export(policy: ScalingPolicy) -> dict[str, object]:
    """The numbers Terraform needs, in the shape ``terraform/stack.json`` holds them."""
    return {
        "policy": policy.name,
        "min_runners": policy.min_runners,
        "max_runners": policy.max_runners,
        "acceptable_latency_s": policy.acceptable_latency_s,
        "seconds_per_chunk": policy.seconds_per_chunk,
        "target_backlog_per_task": _tidy(policy.target_backlog_per_task),
        "tracking_metric": policy.tracking_metric,
        "tracking_expression": policy.tracking_expression,
        "scale_out_cooldown_s": policy.scale_out_cooldown_s,
        "scale_in_cooldown_s": policy.scale_in_cooldown_s,
        "from_zero": policy.from_zero,
        "from_zero_adjustment_type": policy.from_zero_adjustment_type,
        "from_zero_cooldown_s": policy.from_zero_cooldown_s,
        "from_zero_steps": [s.model_dump() for s in policy.from_zero_steps()],
        "idle_minutes": policy.idle_minutes,
        "metric_period_s": METRIC_PERIOD_S,
    }
