"""The deployed pipeline as a discrete-event model (SimPy).

upload -> S3 event -> splitter (Lambda; ``pagefleet.planning.plan_by_cost`` with the settings
Terraform gives it, so chunks are what the deployed splitter cuts) -> chunks queue ->
runner tasks (ECS on one-GPU instances, W workers sharing the GPU) -> chunk result -> S3 event
-> completion (Lambda) -> job record. Around it: CloudWatch one-minute datapoints published
late, the alarms (their metric math evaluated by ``pagefleet.scaling.evaluate``, the strings
Terraform deploys), and the scaling policies of ``pagefleet.scaling`` acting on the service's
desired count; ECS placing tasks on instances a capacity provider launches; Spot interruptions
(two minutes' notice, drained, the chunks in hand released without using up a receive) and
crashes (no notice: held chunks return when their lease ends); and, at seeded rates, launches
refused for want of capacity, instances that never register, sidecars that never turn healthy,
and a service at zero publishing no task metrics.

Simplifications, each on purpose: a runner task's GPU is shared by processor sharing (each of
k conversions runs at min(share, 1/k) of the GPU); CloudWatch statistics are exact per period;
target tracking does not scale out again within its cooldown; one task per instance.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import simpy

from bench.fleet.config import FleetConfig
from bench.fleet.queue import Gauge, Message, Queue
from bench.fleet.workloads import Document, Workload
from pagefleet.costs import PageCosts, plan_policy
from pagefleet.planning import plan_by_cost
from pagefleet.scaling import (
    METRIC_PERIOD_S,
    TRACKING_IN_DATAPOINTS,
    TRACKING_IN_FRACTION,
    TRACKING_OUT_DATAPOINTS,
    evaluate,
)

SPOT_NOTICE_S = 120.0
EPS = 1e-9
Proc = Generator[simpy.Event, Any, Any]


# --- the work ---------------------------------------------------------------------------------


@dataclass(eq=False)
class Job:
    doc: Document
    index: int
    chunks: list[Chunk] = field(default_factory=list)
    split_at_s: float | None = None
    finished: set[int] = field(default_factory=set)  # chunk indexes with a result or a failure
    failed: set[int] = field(default_factory=set)
    recorded_at_s: float | None = None
    records_written: int = 0


@dataclass(eq=False)
class Chunk:
    job: Job
    index: int
    pages: int
    work_s: float  # seconds of the whole GPU
    cpu_s: float = 0.0  # seconds of all the task's worker cores
    estimated_s: float = 0.0  # the splitter's estimate, in the policy's unit
    poison: bool = False
    conversions: int = 0  # conversions that wrote a result
    results: int = 0


# --- the GPU a task's workers share -----------------------------------------------------------


class Device:
    """Processor sharing with a per-stream cap: k conversions each run at min(share, 1/k)."""

    def __init__(self, env: simpy.Environment, share: float) -> None:
        self.env, self.share = env, share
        self._jobs: dict[simpy.Event, float] = {}
        self._last = env.now
        self._wake = env.event()
        self.busy_s = 0.0  # time with at least one conversion
        self.used_s = 0.0  # GPU-seconds delivered
        self._proc = env.process(self._run())

    def _rate(self) -> float:
        return min(self.share, 1.0 / len(self._jobs)) if self._jobs else 0.0

    def _advance(self) -> None:
        elapsed = self.env.now - self._last
        self._last = self.env.now
        if self._jobs and elapsed > 0:
            rate = self._rate()
            self.busy_s += elapsed
            self.used_s += elapsed * rate * len(self._jobs)
            for event in self._jobs:
                self._jobs[event] -= elapsed * rate

    def _poke(self) -> None:
        if not self._wake.triggered:
            self._wake.succeed()

    def run(self, work_s: float) -> simpy.Event:
        self._advance()
        done = self.env.event()
        self._jobs[done] = work_s
        self._poke()
        return done

    def cancel(self, done: simpy.Event) -> None:
        self._advance()
        self._jobs.pop(done, None)
        self._poke()

    def stop(self) -> None:
        self._advance()
        self._jobs.clear()
        if self._proc.is_alive:
            self._proc.interrupt()

    def _run(self) -> Proc:
        try:
            while True:
                if self._wake.triggered:
                    self._wake = self.env.event()
                if not self._jobs:
                    yield self._wake
                    continue
                step = max(0.0, min(self._jobs.values())) / self._rate()
                yield self.env.timeout(step) | self._wake
                self._advance()
                for event in [e for e, left in self._jobs.items() if left <= EPS]:
                    del self._jobs[event]
                    event.succeed()
        except simpy.Interrupt:
            return


# --- instances and tasks ----------------------------------------------------------------------


@dataclass(eq=False)
class Instance:
    index: int
    launched_s: float
    ready_s: float | None = None
    terminated_s: float | None = None
    task: Task | None = None
    image_cached: bool = False
    interrupted: bool = False
    idle_since_s: float | None = None


@dataclass(eq=False)
class Task:
    index: int
    created_s: float
    state: str = "pending"  # pending -> running -> (draining) -> stopped
    instance: Instance | None = None
    running_s: float | None = None
    stopped_s: float | None = None
    device: Device | None = None  # the GPU
    cpu: Device | None = None  # the cores the workers share
    workers: list[simpy.Process] = field(default_factory=list)
    held: dict[int, tuple[Message, int, float]] = field(default_factory=dict)  # worker -> lease
    idle_since_s: float = 0.0
    starting: simpy.Process | None = None

    @property
    def active(self) -> bool:
        return self.state in ("pending", "running")

    def protected(self, now: float, idle_s: float) -> bool:
        return bool(self.held) or now - self.idle_since_s < idle_s

    def convert(self, chunk: Chunk) -> tuple[simpy.Event, simpy.Event]:
        """A chunk's GPU and CPU work side by side: a worker renders and post-processes pages
        while the GPU reads earlier ones, so a chunk takes the longer of the two and a busy
        task converts at the lower of the GPU's and the cores' rates."""
        assert self.device is not None and self.cpu is not None
        return self.device.run(chunk.work_s), self.cpu.run(chunk.cpu_s)

    def cancel(self, conversion: tuple[simpy.Event, simpy.Event]) -> None:
        assert self.device is not None and self.cpu is not None
        self.device.cancel(conversion[0])
        self.cpu.cancel(conversion[1])

    def equip(self, env: simpy.Environment, config: FleetConfig) -> None:
        self.device = Device(env, config.share)
        self.cpu = Device(env, 1 / config.worker_cores)


class Fleet:
    """One simulation: a workload through the pipeline under ``config``."""

    def __init__(self, config: FleetConfig, workload: Workload, seed: int) -> None:
        self.config, self.workload = config, workload
        self.policy = config.policy
        self.env = simpy.Environment()
        self.rng = random.Random(seed)
        self.chunks = Queue(self.env, config.max_receive_count, self._dead_letter)
        self.splitters = simpy.Resource(self.env, capacity=config.splitter_concurrency)
        self.completion = simpy.Resource(self.env, capacity=config.completion_concurrency)
        self.jobs: list[Job] = []
        self.tasks: list[Task] = []
        self.instances: list[Instance] = []
        self.desired = 0
        self.running = Gauge(self.env)
        self.desired_gauge = Gauge(self.env)
        self.datapoints: list[dict[str, float | None]] = []
        self.samples: list[dict[str, float]] = []
        self.actions: list[tuple[float, str, int, int]] = []  # (time, policy, from, to)
        self.pages_done = 0
        self.worker_busy_s = 0.0  # worker-seconds holding a chunk
        self.chunks_failed = 0
        self.excess_launches = 0
        self.task_crashes = 0
        self.spot_interruptions = 0
        self.capacity_refusals = 0
        self.registration_failures = 0
        self.sidecar_failures = 0
        self.splitter = config.splitter_settings()
        # Each policy's own cooldown: one policy's activity does not block another's (a step
        # scale-in is not blocked while target tracking is not ready to scale in, Application
        # Auto Scaling's PutScalingPolicy reference).
        self._cooldown_until = dict.fromkeys(("from_zero", "out", "in", "to_zero", "stalled"), 0.0)
        self._scaled_out_from = 0  # the capacity before target tracking's last scale-out
        self._waiting_for_instance: list[Task] = []
        self._booting = 0
        self._recorded = 0
        self._done = self.env.event()

    # --- run ------------------------------------------------------------------------------

    def run(self, horizon_s: float | None = None) -> Fleet:
        last = max((d.arrival_s for d in self.workload.documents), default=0.0)
        horizon = horizon_s if horizon_s is not None else last + 3 * 86_400
        self.env.process(self._arrivals())
        if self.config.fixed_tasks:
            self._warm_fleet(self.config.fixed_tasks)
        else:
            self.env.process(self._scaler())
        self.env.run(until=self._done | self.env.timeout(horizon))
        self._close_instances()
        return self

    @property
    def finished(self) -> bool:
        return self._recorded == len(self.workload.documents)

    def _warm_fleet(self, count: int) -> None:
        """Tasks already running with their converters loaded, as the bench times them."""
        self.desired = count
        for _ in range(count):
            instance = Instance(index=len(self.instances), launched_s=0.0, ready_s=0.0)
            task = Task(index=len(self.tasks), created_s=0.0, instance=instance)
            instance.task, instance.image_cached = task, True
            self.instances.append(instance)
            self.tasks.append(task)
            task.state, task.running_s = "running", 0.0
            self.running.add(1)
            task.equip(self.env, self.config)
            task.workers = [
                self.env.process(self._worker(task, w)) for w in range(self.config.workers_per_task)
            ]

    def _arrivals(self) -> Proc:
        for index, doc in enumerate(self.workload.documents):
            yield self.env.timeout(max(0.0, doc.arrival_s - self.env.now))
            job = Job(doc=doc, index=index)
            self.jobs.append(job)
            self.env.process(self._split(job))

    # --- the splitter and the completion step ------------------------------------------------

    def _split(self, job: Job) -> Proc:
        cfg = self.config
        yield self.env.timeout(cfg.notification_delay_s)
        with self.splitters.request() as slot:
            yield slot
            yield self.env.timeout(cfg.split_base_s + cfg.split_per_page_s * job.doc.pages)
        # The splitter tells the scanned pages apart as pagefleet/costs.py does and prices each
        # page at the deployed converter's estimate.
        pages, settings = job.doc.pages, self.splitter
        ocr = job.doc.scanned()
        text_s, ocr_s = cfg.splitter_page_s(settings)
        seconds = [ocr_s if n in ocr else text_s for n in range(1, pages + 1)]
        costs = PageCosts(seconds, sorted(ocr), 0.0, text_s)
        for spec in plan_by_cost(seconds, plan_policy(settings, costs)):
            scanned = sum(n in ocr for n in range(spec.first_page, spec.last_page + 1))
            chunk = Chunk(
                job=job,
                index=spec.index,
                pages=spec.pages,
                work_s=cfg.chunk_work_s(spec.pages, scanned / spec.pages, job.doc.page_s),
                cpu_s=cfg.chunk_cpu_s(spec.pages, job.doc.page_s, scanned / spec.pages),
                estimated_s=spec.estimated_s or 0.0,
                poison=self.rng.random() < cfg.poison_chunk_share,
            )
            job.chunks.append(chunk)
        job.split_at_s = self.env.now
        for chunk in job.chunks:
            self.chunks.send(chunk)

    def _chunk_finished(self, chunk: Chunk, failed: bool) -> None:
        self.env.process(self._complete(chunk, failed))

    def _complete(self, chunk: Chunk, failed: bool) -> Proc:
        cfg, job = self.config, chunk.job
        yield self.env.timeout(cfg.notification_delay_s)
        with self.completion.request() as slot:
            yield slot
            yield self.env.timeout(cfg.completion_check_s)
            if failed:
                job.failed.add(chunk.index)
            job.finished.add(chunk.index)
            if len(job.finished) < len(job.chunks) or job.recorded_at_s is not None:
                return
            yield self.env.timeout(cfg.assemble_base_s + cfg.assemble_per_page_s * job.doc.pages)
            if job.recorded_at_s is None:  # the conditional write: exactly one record
                job.recorded_at_s = self.env.now
                job.records_written += 1
                self._recorded += 1
                if self.config.fixed_tasks and self.finished and not self._done.triggered:
                    self._done.succeed()

    def _dead_letter(self, message: Message) -> None:
        chunk: Chunk = message.body
        self.chunks_failed += 1
        self._chunk_finished(chunk, failed=True)

    # --- ECS: the service, tasks and instances -------------------------------------------------

    def _set_desired(self, value: int, source: str) -> None:
        value = min(self.policy.max_runners, max(self.policy.min_runners, value))
        if value != self.desired:
            self.actions.append((self.env.now, source, self.desired, value))
            self.desired = value
            self.desired_gauge.set(value)
            self._reconcile()

    def _outstanding(self) -> float:
        return self.chunks.visible.value + self.chunks.in_flight.value

    def _reconcile(self) -> None:
        now = self.env.now
        active = [t for t in self.tasks if t.active]
        if len(active) < self.desired:
            for _ in range(self.desired - len(active)):
                self._start_task()
        elif len(active) > self.desired:
            excess = len(active) - self.desired
            pending = [t for t in active if t.state == "pending"]
            idle = sorted(
                (
                    t
                    for t in active
                    if t.state == "running" and not t.protected(now, self.config.protection_idle_s)
                ),
                key=lambda t: t.idle_since_s,
            )
            for task in (list(reversed(pending)) + idle)[:excess]:
                self._stop_task(task, drain=True)

    def _start_task(self) -> None:
        task = Task(index=len(self.tasks), created_s=self.env.now, idle_since_s=self.env.now)
        self.tasks.append(task)
        useful = max(1, math.ceil(self._outstanding() / self.config.workers_per_task))
        if sum(t.active for t in self.tasks) > useful:
            self.excess_launches += 1
        idle = [i for i in self.instances if i.ready_s is not None and i.terminated_s is None]
        free = next((i for i in idle if i.task is None and not i.interrupted), None)
        if self.config.fargate is not None:
            free = None  # Fargate starts every task on capacity of its own
        if free is not None:
            self._place(task, free)
        else:
            self._waiting_for_instance.append(task)
            if self._booting < len(self._waiting_for_instance):
                self._booting += 1
                self.env.process(self._launch_instance())

    def _launch_instance(self) -> Proc:
        cfg = self.config
        yield self.env.timeout(cfg.capacity_provider_lag_s)
        # InsufficientInstanceCapacity (or a quota): nothing billed, the group tries again.
        while self.rng.random() < cfg.capacity_refusal_share:
            self.capacity_refusals += 1
            yield self.env.timeout(cfg.capacity_retry_s)
            if not self._waiting_for_instance:  # the tasks that wanted it were stopped
                self._booting -= 1
                return
        instance = Instance(index=len(self.instances), launched_s=self.env.now)  # billed from here
        self.instances.append(instance)
        yield self.env.timeout(cfg.instance_boot_s)
        if self.rng.random() < cfg.registration_failure_share:
            # Up and billed, never in the cluster: the capacity provider counts it, so it
            # launches none for the waiting task, and lets it go once no task waits for one.
            self.registration_failures += 1
            self.env.process(self._unregistered(instance))
            return
        self._booting -= 1
        instance.ready_s = self.env.now
        if cfg.spot and cfg.spot_interruptions_per_h > 0:
            self.env.process(self._spot_interruption(instance))
        if self._waiting_for_instance:
            self._place(self._waiting_for_instance.pop(0), instance)
        else:
            self._instance_idle(instance)

    def _unregistered(self, instance: Instance) -> Proc:
        while self._waiting_for_instance:
            yield self.env.timeout(METRIC_PERIOD_S)
        self._booting -= 1
        yield self.env.timeout(self.config.instance_idle_s)
        instance.terminated_s = self.env.now

    def _place(self, task: Task, instance: Instance) -> None:
        instance.task, task.instance, instance.idle_since_s = task, instance, None
        task.starting = self.env.process(self._start(task))

    def _start(self, task: Task) -> Proc:
        cfg, instance = self.config, task.instance
        assert instance is not None
        try:
            pull = 0.0 if instance.image_cached else cfg.image_pull_s
            yield self.env.timeout(pull + cfg.container_start_s)
            instance.image_cached = True
            if self.rng.random() < cfg.sidecar_failure_share:
                # The runner waits on a healthy sidecar (container dependency); ECS stops the
                # task when it never is, and the service starts another.
                yield self.env.timeout(cfg.sidecar_timeout_s)
                self.sidecar_failures += 1
                task.starting = None  # a process cannot interrupt itself
                self._stop_task(task, drain=False)
                return
            task.state, task.running_s = "running", self.env.now
            self.running.add(1)
            if cfg.task_crashes_per_h > 0:
                self.env.process(self._crash(task))
            yield self.env.timeout(cfg.model_start_s)
        except simpy.Interrupt:
            return
        task.equip(self.env, cfg)
        task.idle_since_s = self.env.now
        task.workers = [
            self.env.process(self._worker(task, w)) for w in range(cfg.workers_per_task)
        ]

    def _stop_task(self, task: Task, drain: bool) -> None:
        """SIGTERM (drain) or death (crash, SIGKILL)."""
        if task.state in ("draining", "stopped"):
            if not drain and task.state == "draining":
                self._kill(task)
            return
        was_running = task.state == "running"
        if task in self._waiting_for_instance:
            self._waiting_for_instance.remove(task)
        if task.starting is not None and task.starting.is_alive:
            task.starting.interrupt()
        if not drain or not task.workers:
            if was_running:
                self.running.add(-1)
            task.state = "draining"
            self._kill(task)
            return
        task.state = "draining"
        self.running.add(-1)
        for worker in task.workers:
            if worker.is_alive:
                worker.interrupt("drain")
        self.env.process(self._drain_deadline(task))

    def _drain_deadline(self, task: Task) -> Proc:
        yield self.env.timeout(self.config.drain_timeout_s)
        for worker in task.workers:
            if worker.is_alive:
                worker.interrupt("release")
        self._finish_stop(task)

    def _kill(self, task: Task) -> None:
        hb = self.config.heartbeat_s
        for message, receipt, received_s in task.held.values():
            # The heartbeat renewed the lease every heartbeat_s; it ends one visibility
            # timeout after the last renewal.
            last = received_s + math.floor((self.env.now - received_s) / hb) * hb
            self.chunks.lease_ends(message, receipt, last + self.config.visibility_timeout_s)
        task.held.clear()
        for worker in task.workers:
            if worker.is_alive:
                worker.interrupt("kill")
        self._finish_stop(task)

    def _finish_stop(self, task: Task) -> None:
        if task.state == "stopped":
            return
        task.state, task.stopped_s = "stopped", self.env.now
        for device in (task.device, task.cpu):
            if device is not None:
                device.stop()
        instance = task.instance
        if instance is not None and instance.task is task:
            instance.task = None
            if not instance.interrupted and instance.terminated_s is None:
                if self.config.fargate is not None:
                    instance.terminated_s = self.env.now  # a task's capacity ends with it
                elif self._waiting_for_instance:
                    self._place(self._waiting_for_instance.pop(0), instance)
                else:
                    self._instance_idle(instance)
        self._reconcile()

    def _instance_idle(self, instance: Instance) -> None:
        instance.idle_since_s = self.env.now

        def scale_in() -> Proc:
            since = instance.idle_since_s
            yield self.env.timeout(self.config.instance_idle_s)
            if instance.task is None and instance.idle_since_s == since:
                instance.terminated_s = self.env.now

        self.env.process(scale_in())

    def _spot_interruption(self, instance: Instance) -> Proc:
        yield self.env.timeout(self.rng.expovariate(self.config.spot_interruptions_per_h / 3600))
        if instance.terminated_s is not None:
            return
        self.spot_interruptions += 1
        instance.interrupted = True
        if instance.task is not None:
            self._stop_task(instance.task, drain=True)  # ECS drains a Spot instance on notice
        yield self.env.timeout(SPOT_NOTICE_S)
        if instance.task is not None:
            self._stop_task(instance.task, drain=False)
        instance.terminated_s = self.env.now
        self._reconcile()

    def _crash(self, task: Task) -> Proc:
        yield self.env.timeout(self.rng.expovariate(self.config.task_crashes_per_h / 3600))
        if task.state == "running":
            self.task_crashes += 1
            self._stop_task(task, drain=False)

    def _close_instances(self) -> None:
        for instance in self.instances:
            if instance.terminated_s is None:
                instance.terminated_s = self.env.now

    # --- a runner worker ----------------------------------------------------------------------

    def _worker(self, task: Task, slot: int) -> Proc:
        cfg, queue = self.config, self.chunks
        while task.state == "running":
            receive = queue.receive()
            try:
                message: Message = yield receive
            except simpy.Interrupt as stop:
                held = queue.cancel(receive)
                if held is not None:  # handed over just as the worker stopped
                    if stop.cause == "kill":
                        last = self.env.now + cfg.visibility_timeout_s
                        queue.lease_ends(held, held.receipt, last)
                    else:
                        queue.resend(held, held.receipt)
                if stop.cause == "kill":
                    return
                break  # drained while idle: the task stops once no worker holds a chunk
            chunk: Chunk = message.body
            receipt = message.receipt
            task.held[slot] = (message, receipt, self.env.now)
            received_s = self.env.now
            converting: tuple[simpy.Event, simpy.Event] | None = None
            phase = "download"
            try:
                yield self.env.timeout(cfg.chunk_overhead_s / 2)
                phase, converting = "convert", task.convert(chunk)
                yield self.env.all_of(converting)
                phase = "upload"
                yield self.env.timeout(cfg.chunk_overhead_s / 2)
            except simpy.Interrupt as stop:
                cause = stop.cause
                if cause == "drain":  # finish the chunk in hand within the drain deadline
                    try:
                        if phase == "download":
                            phase, converting = "convert", task.convert(chunk)
                        if phase == "convert" and converting is not None:
                            yield self.env.all_of(converting)
                            phase = "upload"
                        yield self.env.timeout(cfg.chunk_overhead_s / 2)
                        cause = None
                    except simpy.Interrupt as late:
                        cause = late.cause
                if cause in ("release", "kill"):
                    self.worker_busy_s += self.env.now - received_s
                    if phase == "convert" and converting is not None:
                        task.cancel(converting)
                    if cause == "release":
                        task.held.pop(slot, None)
                        queue.resend(message, receipt)
                    return  # killed: _kill already ended the lease
            task.held.pop(slot, None)
            task.idle_since_s = self.env.now
            self.worker_busy_s += self.env.now - received_s
            if chunk.poison and message.receive_count < cfg.max_attempts:
                queue.release(message, receipt)  # the runner's retry: visibility 0
                continue
            chunk.results += 1
            if not chunk.poison:
                chunk.conversions += 1
                self.pages_done += chunk.pages
            if queue.delete(message, receipt):
                self._chunk_finished(chunk, failed=chunk.poison)
            if task.state != "running":
                break
        if task.state == "draining" and not task.held:
            self._finish_stop(task)

    # --- CloudWatch, the alarms and the policies ----------------------------------------------

    def _scaler(self) -> Proc:
        for tick in itertools.count(1):
            yield self.env.timeout(METRIC_PERIOD_S)
            self._publish(tick * METRIC_PERIOD_S)
            self._evaluate()
            self._reconcile()
            self._sample()
            if (
                self.finished
                and self.desired == 0
                and not any(i.terminated_s is None for i in self.instances)
            ):
                if not self._done.triggered:
                    self._done.succeed()
                return

    def _publish(self, end_s: float) -> None:
        """One minute's datapoints, Maximum statistic for the alarms (as they ask for it),
        Average for target tracking. With ``metric_gaps_at_zero`` a service that had no task in
        the minute publishes no task counts at all."""
        visible_mean, visible_max = self.chunks.visible.close_period()
        flight_mean, flight_max = self.chunks.in_flight.close_period()
        running_mean, running_max = self.running.close_period()
        desired_mean, desired_max = self.desired_gauge.close_period()
        point: dict[str, float | None] = {
            "end_s": end_s,
            "visible": visible_mean,
            "visible_max": visible_max,
            "in_flight": flight_mean,
            "in_flight_max": flight_max,
            "age_max": self.chunks.oldest_age_s(),
        }
        if not (self.config.metric_gaps_at_zero and desired_max <= EPS and running_max <= EPS):
            point |= {
                "running": running_mean,
                "running_max": running_max,
                "desired": desired_mean,
                "desired_max": desired_max,
            }
        self.datapoints.append(point)

    def _available(self, count: int) -> list[dict[str, float | None]]:
        """The latest ``count`` datapoints CloudWatch has published by now."""
        published = [
            d
            for d in self.datapoints
            if (d["end_s"] or 0.0) <= self.env.now - self.config.metric_delay_s
        ]
        return published[-count:] if len(published) >= count else []

    @staticmethod
    def _values(d: dict[str, float | None], stat: str) -> dict[str, float | None]:
        """The metric ids of the expressions, from one datapoint, by statistic; a metric that
        was not published is left out (see pagefleet.scaling.evaluate)."""
        suffix = "_max" if stat == "Maximum" else ""
        ids = ("visible", "in_flight", "running", "desired")
        values = {i: d[i + suffix] for i in ids if i + suffix in d}
        values["age"] = d["age_max"]
        return values

    def _tracked(self, d: dict[str, float | None]) -> float | None:
        return evaluate(self.policy.tracking_expression, self._values(d, "Average"))

    def _evaluate(self) -> None:
        now, policy, cool = self.env.now, self.policy, self._cooldown_until
        latest = self._available(1)
        if not latest:
            return
        # Stalled: chunks waiting, none in flight, the oldest past the limit, for
        # stall_minutes datapoints in a row: every task stopped.
        stall = policy.stall_expression
        window = self._available(policy.stall_minutes or 1)
        if (
            stall is not None
            and window
            and all(evaluate(stall, self._values(x, "Maximum")) == 1 for x in window)
        ):
            if self.desired > 0 and now >= cool["stalled"]:
                self._set_desired(0, "stalled")
                cool["stalled"] = now + policy.scale_in_cooldown_s
            return
        # The step from zero: its alarm's metric is the expression, threshold 1 chunk.
        backlog = evaluate(policy.from_zero_expression, self._values(latest[0], "Maximum"))
        if backlog is not None and backlog >= 1 and now >= cool["from_zero"]:
            visible = latest[0]["visible_max"] or 0.0
            wanted = policy.from_zero_capacity(visible, self.desired)
            if wanted != self.desired:
                self._set_desired(wanted, "from_zero")
                cool["from_zero"] = now + policy.from_zero_cooldown_s
        # Target tracking's two alarms.
        target = policy.target_backlog_per_task
        high = [self._tracked(x) for x in self._available(TRACKING_OUT_DATAPOINTS)]
        low = [self._tracked(x) for x in self._available(TRACKING_IN_DATAPOINTS)]
        if high and all(m is not None and m > target for m in high):
            metric = high[-1]
            assert metric is not None
            # Within the scale-out cooldown the capacity that scale-out added counts as part
            # of the next one: the new capacity is reckoned from the capacity before it, so a
            # datapoint from before the scale-out (published late) adds nothing again, and
            # only a larger scale-out goes through (Application Auto Scaling's ScaleOutCooldown).
            cooling = now < cool["out"]
            wanted = policy.tracking_capacity(
                metric, self._scaled_out_from if cooling else self.desired
            )
            if wanted > self.desired:
                if not cooling:
                    self._scaled_out_from = self.desired
                    cool["out"] = now + policy.scale_out_cooldown_s
                self._set_desired(wanted, "tracking_out")
        elif (
            low
            and all(m is not None and m < TRACKING_IN_FRACTION * target for m in low)
            and now >= max(cool["in"], cool["out"])
        ):
            metric = low[-1]
            assert metric is not None
            wanted = policy.tracking_capacity(metric, self.desired)
            if wanted < self.desired:
                self._set_desired(wanted, "tracking_in")
                cool["in"] = now + policy.scale_in_cooldown_s
        # Idle: nothing visible or in flight for idle_minutes.
        idle = self._available(policy.idle_minutes)
        if (
            idle
            and self.desired > 0
            and all((x["visible_max"] or 0) + (x["in_flight_max"] or 0) <= 0 for x in idle)
            and now >= cool["to_zero"]
        ):
            self._set_desired(0, "to_zero")
            cool["to_zero"] = now + policy.scale_in_cooldown_s

    def _sample(self) -> None:
        live = [i for i in self.instances if i.terminated_s is None]
        self.samples.append(
            {
                "t_s": self.env.now,
                "desired": self.desired,
                "running": self.running.value,
                "tasks": sum(t.active for t in self.tasks),
                "instances": len(live),
                "visible": self.chunks.visible.value,
                "in_flight": self.chunks.in_flight.value,
                "pages_done": self.pages_done,
            }
        )
