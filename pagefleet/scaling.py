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
    while most tasks are pending; ``ceil(outstanding / target)`` does not). It reads only the
    chunks queue's own metrics to leave zero, and stops a fleet that converts nothing (below).
    Its target is sized against a GPU task's cold start rather than for latency: a task is
    added only for a backlog the running tasks would not clear in two cold starts (see
    ``POLICIES``), so a burst that is gone before a new instance is up starts none.

The unit of backlog is one chunk, and a chunk is ``seconds_per_chunk`` of estimated conversion
on one task: the splitter's target for the deployed converter (``chunk_pages`` text pages at
``cost_marker_page_s``; Terraform hands the splitter ``seconds_per_chunk / chunk_pages`` as
that cost), whatever the fleet's size. Only a document cheaper than ``spread_tasks`` tasks'
worth of chunks is cut finer, over ``spread_tasks x workers`` lanes (:func:`splitter_lanes`),
which the validation keeps within one task's target backlog: from zero, such a document starts
exactly one task.

Leaving zero (``from_zero_gate``): ``no_running_task`` reads Container Insights'
``RunningTaskCount``, which a service at zero may not publish at all, so the alarm can stay
silent with chunks waiting; ``nothing_in_flight`` reads the queue's in-flight count, which SQS
publishes whenever the queue is active (any message in it), so a backlog nobody converts always
shows. A backlog that waits ``stall_minutes`` with nothing in flight (GPU instances that never
register, a sidecar that never turns healthy, capacity refused) stops every task instead, and
leaving zero stays off while its oldest chunk has waited that long: the stall's cost is bounded
(:meth:`ScalingPolicy.stall_instance_minutes`) and the alarm asks a person to act.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from pagefleet.settings import Settings

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
FromZeroGate = Literal["no_running_task", "nothing_in_flight"]
# What each gate of leaving zero reads (ids as in the Terraform module).
FROM_ZERO_GATES = {"no_running_task": "FILL(running, 0) == 0", "nothing_in_flight": "in_flight < 1"}

# A chunk of the deployed converter: chunk_pages text pages at marker's estimated cost.
_SETTINGS = Settings.model_fields
DEPLOYED_CHUNK_S = _SETTINGS["chunk_pages"].default * _SETTINGS["cost_marker_page_s"].default

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
    # The splitter's chunk (16 text pages at marker's 1.1 s, pagefleet/settings.py: an
    # estimate for one L4 with 3 workers; no GPU measured it yet).
    seconds_per_chunk: float = Field(
        DEPLOYED_CHUNK_S,
        gt=0,
        description="Estimated seconds one runner task (one GPU, all its workers) needs per "
        "chunk: the splitter's chunk target, chunk_pages x its cost of a text page.",
    )
    spread_tasks: int = Field(
        1,
        ge=1,
        description="Tasks' worth of workers a document cheaper than that many tasks' chunks "
        "is spread over: more converts a small document sooner on a fleet already running "
        "that many tasks, at more, smaller chunks for the policy to count.",
    )
    tracking_metric: TrackingMetric = "outstanding_per_desired"
    from_zero: FromZero = "exact_backlog"
    from_zero_gate: FromZeroGate = "nothing_in_flight"
    stall_minutes: int | None = Field(
        20,
        ge=1,
        description="Minutes a backlog may wait with nothing in flight (and its oldest chunk "
        "that old) before every task is stopped; longer than a cold start. None: never.",
    )
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

    def splitter_lanes(self, workers_per_task: int) -> int:
        """The conversions a small document is spread over (the splitter's
        ``PAGEFLEET_FLEET_LANES``): ``spread_tasks`` tasks of ``workers_per_task`` workers. At
        most one task's target backlog, so such a document starts one task from zero."""
        lanes = self.spread_tasks * workers_per_task
        if lanes > self.target_backlog_per_task:
            raise ValueError(
                f"{lanes} lanes is more than the {self.target_backlog_per_task:g} chunks one "
                "task takes: a small document would start more than one task from zero"
            )
        return lanes

    def splitter_environment(self, workers_per_task: int, chunk_pages: int) -> dict[str, str]:
        """What the splitter is given to plan in this policy's unit (Terraform's handler_env):
        a chunk of ``chunk_pages`` text pages costs ``seconds_per_chunk``, and a small document
        is spread over :meth:`splitter_lanes`."""
        return {
            "PAGEFLEET_CONVERTER": "marker",
            "PAGEFLEET_CHUNK_PAGES": str(chunk_pages),
            "PAGEFLEET_COST_MARKER_PAGE_S": repr(self.seconds_per_chunk / chunk_pages),
            "PAGEFLEET_FLEET_LANES": str(self.splitter_lanes(workers_per_task)),
        }

    @property
    def stall_s(self) -> int | None:
        return None if self.stall_minutes is None else self.stall_minutes * METRIC_PERIOD_S

    @property
    def from_zero_expression(self) -> str:
        """The from-zero alarm's metric math: the backlog (or 1, for +1) while the gate holds."""
        gate = FROM_ZERO_GATES[self.from_zero_gate]
        if self.stall_s is not None and self.from_zero_gate == "nothing_in_flight":
            # A backlog that waited through a stall's datapoints (its first one's chunks are
            # at least stall_minutes - 1 old by the last) leaves zero no more.
            gate += f" AND age < {self.stall_s - METRIC_PERIOD_S}"
        if self.from_zero == "change_plus_one":
            return f"IF(visible > 0 AND {gate}, 1, 0)"
        return f"IF({gate}, visible, 0)"

    @property
    def stall_expression(self) -> str | None:
        """1 in a minute when chunks wait and none is in flight; ``stall_minutes`` such
        minutes in a row stop every task (longer than a cold start, so a fleet replacing its
        lost Spot instances under an old backlog is no stall)."""
        if self.stall_s is None:
            return None
        return "IF(visible >= 1 AND in_flight < 1, 1, 0)"

    def stall_instance_minutes(self, instance_scale_in_minutes: int) -> int:
        """The most instance-minutes a stall can cost: every task's instance, from the
        backlog's arrival until the stall policy stops the tasks (``stall_minutes`` of
        datapoints, published a minute late, then the evaluation's minute) and the capacity
        provider's scale-in lets the instance go."""
        if self.stall_minutes is None:
            raise ValueError("without stall_minutes a stall costs without bound")
        return self.max_runners * (self.stall_minutes + 2 + instance_scale_in_minutes)

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


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_COMPARE: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
}


def evaluate(expression: str, values: Mapping[str, float | None]) -> float | None:
    """One period's value of a metric-math expression of this module (the strings Terraform
    deploys), so the fleet simulator evaluates exactly them. ``values`` by metric id, None for a
    metric with no datapoint in the period: the expression then has none either, unless FILL
    gives one; so does a division by zero. A metric missing from ``values`` is one not
    published at all, which FILL is taken to have nothing to fill for (the pessimistic reading
    of a service at zero that publishes no task counts; the queue-read gates do not depend on
    it). The subset: IF, FILL, AND, comparisons, + - * /."""
    return _evaluate(ast.parse(expression.replace(" AND ", " and "), mode="eval").body, values)


def _evaluate(node: ast.expr, values: Mapping[str, float | None]) -> float | None:
    def sub(child: ast.expr) -> float | None:
        return _evaluate(child, values)

    match node:
        case ast.Constant(value=int() | float() as number):
            return float(number)
        case ast.Name(id=name):
            return values.get(name)
        case ast.Call(
            func=ast.Name(id="FILL"), args=[series, ast.Constant(value=int() | float() as fill)]
        ):
            if isinstance(series, ast.Name) and series.id not in values:
                return None
            value = sub(series)
            return float(fill) if value is None else value
        case ast.Call(func=ast.Name(id="IF"), args=[condition, then, otherwise]):
            test = sub(condition)
            return None if test is None else sub(then if test else otherwise)
        case ast.BoolOp(op=ast.And(), values=operands):
            tests = [sub(o) for o in operands]
            return None if None in tests else float(all(tests))
        case ast.Compare(left=left, ops=[op], comparators=[right]) if type(op) in _COMPARE:
            a, b = sub(left), sub(right)
            return None if a is None or b is None else float(_COMPARE[type(op)](a, b))
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _BINARY:
            a, b = sub(left), sub(right)
            if a is None or b is None or (isinstance(op, ast.Div) and b == 0):
                return None
            return _BINARY[type(op)](a, b)
    raise ValueError(f"not metric math this module writes: {ast.unparse(node)}")


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
        from_zero_gate="no_running_task",
        stall_minutes=None,
    ),
    "fixed": ScalingPolicy(
        name="fixed", tracking_metric="outstanding_per_running", from_zero="exact_backlog"
    ),
    # The deployed policy, sized against the cold start (about 550 s, bench/fleet/config.py):
    # a GPU task costs its cold start and, once stopped, the capacity provider's 15-minute
    # scale-in of its instance, so one is added only for a backlog the running tasks would not
    # clear in two cold starts plus target tracking's four minutes to see it (3 datapoints,
    # published a minute late): 2 x 550 + 240 = 1,340 s, so 1,350 s per task. A scale-out
    # cooldown past the metrics' delay keeps the datapoints from before a scale-out from
    # adding tasks again, and 5 idle minutes end a burst's fleet within the idle window.
    # The price is latency on a quiet fleet (the module README and bench/results/fleet/).
    "per-desired": ScalingPolicy(
        name="per-desired",
        tracking_metric="outstanding_per_desired",
        from_zero="exact_backlog",
        acceptable_latency_s=1350,
        scale_out_cooldown_s=3 * METRIC_PERIOD_S,
        idle_minutes=5,
    ),
}
# ``per-desired`` as deployed before issue 25 (its 18 s chunk and 300 s per task, leaving zero
# on Container Insights' running count, nothing to stop a fleet that converts nothing): the
# simulator's "before".
POLICIES["running-gate"] = POLICIES["fixed"].model_copy(
    update={
        "name": "running-gate",
        "tracking_metric": "outstanding_per_desired",
        "seconds_per_chunk": 18,
        "from_zero_gate": "no_running_task",
        "stall_minutes": None,
    }
)
DEFAULT_POLICY = "per-desired"


def default_policy() -> ScalingPolicy:
    return POLICIES[DEFAULT_POLICY]


def export(policy: ScalingPolicy) -> dict[str, object]:
    """The numbers Terraform needs, in the shape ``terraform/stack.json`` holds them."""
    return {
        "policy": policy.name,
        "min_runners": policy.min_runners,
        "max_runners": policy.max_runners,
        "acceptable_latency_s": _tidy(policy.acceptable_latency_s),
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
        "from_zero_gate": policy.from_zero_gate,
        "from_zero_expression": policy.from_zero_expression,
        "stall_minutes": policy.stall_minutes,
        "stall_expression": policy.stall_expression,
        "spread_tasks": policy.spread_tasks,
        "idle_minutes": policy.idle_minutes,
        "metric_period_s": METRIC_PERIOD_S,
    }
