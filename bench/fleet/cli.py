"""``scripts/fleet-sim``: the workloads under each policy, the validation, the report.

    scripts/fleet-sim [--workloads steady,burst,single-1p,single-2000p,diurnal,corpus]
                      [--trace FILE] [--policies today,fixed,per-desired] [--scenario NAME]
                      [--seed 1] [--gpu g6.2xlarge | --cpu] [--on-demand] [--set FIELD=VALUE ...]
                      [--label L] [--out DIR]
    scripts/fleet-sim --report     # the committed report, bench/results/fleet/
    scripts/fleet-sim --measure-corpus ../shared/corpus/real   # the corpus workload's pages

Writes fleet.json, fleet.md and fleet.png under bench/results/<date>-fleet-<label>/ (not
results.json: that name is scripts/bench's, whose tests read every one). ``--report`` runs the
issue-25 study instead (the targets, the before/after of the splitter's lanes and of the stall
stop, every failure scenario) into bench/results/fleet/, which a test keeps current.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.fleet import charts, markdown, validation, workloads
from bench.fleet.config import (
    CPU_ESTIMATES,
    ESTIMATES,
    GPUS,
    TERRAFORM_WORKERS,
    FleetConfig,
    cpu_fleet,
)
from bench.fleet.model import Fleet
from bench.fleet.prices import PRICES_READ, Prices
from bench.fleet.report import inputs_digest, summarize, throughput
from bench.paths import RESULTS
from pagefleet.scaling import DEFAULT_POLICY, POLICIES

WORKLOADS: dict[str, Callable[[int], workloads.Workload]] = {
    "steady": lambda seed: workloads.steady(seed),
    "burst": lambda seed: workloads.burst(seed),
    "single-1p": lambda seed: workloads.single(1),
    "single-17p": lambda seed: workloads.single(17),
    "single-2000p": lambda seed: workloads.single(2000),
    "diurnal": lambda seed: workloads.diurnal(seed),
    "corpus": lambda seed: workloads.corpus(seed),
}

# Failure scenarios: FleetConfig overrides at seeded rates (scripts/fleet-sim --scenario).
SCENARIOS: dict[str, dict[str, Any]] = {
    "none": {},
    "flaky": {
        "capacity_refusal_share": 0.3,
        "registration_failure_share": 0.1,
        "sidecar_failure_share": 0.1,
        "spot_interruptions_per_h": 0.5,
        "metric_gaps_at_zero": True,
    },
    "capacity-refused": {"capacity_refusal_share": 1.0},
    "registration-broken": {"registration_failure_share": 1.0},
    "sidecar-broken": {"sidecar_failure_share": 1.0},
    "metric-gaps": {"metric_gaps_at_zero": True},
    # Not a failure: every page at the costliest chunk's measured client work (a real scan in
    # balanced mode, 0.75 CPU s a page in the marker CPU bench), text pages included.
    "cpu-heavy": {"worker_cpu_s_per_page": 0.75},
}
# Scenarios that are not failures: the study runs them on the steady workload alone.
NOT_FAILURES = ("none", "cpu-heavy")
# The deployment before issue 25: a small document spread over max_runners x workers lanes,
# the 18 s chunk, leaving zero on Container Insights' running count, no stall stop.
BEFORE: dict[str, Any] = {
    "policy": POLICIES["running-gate"],
    "splitter_lanes": POLICIES["running-gate"].max_runners * 3,
    "splitter_overrides": {"cost_marker_page_s": 1.1},
}
REPORT_DIR = RESULTS / "fleet"


def _names(known: Mapping[str, object], what: str) -> Callable[[str], list[str]]:
    """A comma-separated list of ``known`` names; an unknown one is a usage error that lists
    the known ones (argparse exits 2 with it)."""

    def names(value: str) -> list[str]:
        given = [name for name in value.split(",") if name]
        unknown = [name for name in given if name not in known]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"no {what} named {', '.join(unknown)}; the {what}s are {', '.join(known)}"
            )
        return given

    return names


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="scripts/fleet-sim", description=__doc__.split("\n")[0])
    p.add_argument(
        "--workloads",
        type=_names(WORKLOADS, "workload"),
        default=",".join(WORKLOADS),
        help=f"comma-separated, of {', '.join(WORKLOADS)} (default: all)",
    )
    p.add_argument("--trace", type=Path, action="append", default=[], help="CSV trace to replay")
    p.add_argument(
        "--policies",
        type=_names(POLICIES, "policy"),
        default=",".join(POLICIES),
        help=f"comma-separated, of {', '.join(POLICIES)} (default: all)",
    )
    p.add_argument(
        "--scenario", choices=sorted(SCENARIOS), default="none", help="a failure scenario"
    )
    p.add_argument("--report", action="store_true", help="the committed study (see above)")
    p.add_argument(
        "--measure-corpus",
        type=Path,
        metavar="DIR",
        help=f"measure DIR's PDFs as the splitter does into {workloads.CORPUS_FILE.name}, "
        "the corpus workload",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of every random draw (default 1)")
    p.add_argument("--gpu", choices=sorted(GPUS), default="g6.2xlarge", help="the instance type")
    p.add_argument("--on-demand", action="store_true", help="on-demand instances (default Spot)")
    p.add_argument(
        "--cpu",
        action="store_true",
        help='the CPU runners (runner_kind = "cpu"): the text-layer converter on Fargate',
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a FleetConfig field (bench/fleet/config.py), repeatable",
    )
    p.add_argument(
        "--validate",
        type=Path,
        default=validation.DEFAULT_RESULTS,
        help="bench results the model is checked against first",
    )
    p.add_argument("--no-validate", action="store_true", help="skip that check")
    p.add_argument("--label", default="all", help="the results folder's suffix (default all)")
    p.add_argument("--out", type=Path, help="results folder (default bench/results/DATE-fleet-L)")
    return p.parse_args(argv)


def config_for(args: argparse.Namespace, policy: str) -> FleetConfig:
    overrides: dict[str, Any] = {}
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in FleetConfig.model_fields:
            raise SystemExit(f"--set {name}: not a FleetConfig field")
        overrides[name] = json.loads(value) if value[:1] in "0123456789-[{tfn" else value
    if args.cpu:
        return cpu_fleet(POLICIES[policy], **SCENARIOS[args.scenario], **overrides)
    return FleetConfig.model_validate(
        {
            "policy": POLICIES[policy],
            "gpu": GPUS[args.gpu],
            "spot": not args.on_demand,
            **SCENARIOS[args.scenario],
            **overrides,
        }
    )


def _run(load: workloads.Workload, config: FleetConfig, seed: int, **tags: str) -> dict[str, Any]:
    t0 = time.monotonic()
    summary = summarize(Fleet(config, load, seed=seed).run())
    summary |= tags | {"wall_s": round(time.monotonic() - t0, 2)}
    print(
        f"{load.name:>13} {' '.join(tags.values()):>28}: p95 {summary['latency_s']['p95']} s, "
        f"{summary['gpu_hours']} GPU-h, {summary['tasks_started']} tasks",
        flush=True,
    )
    return summary


def cpu_bound(config: FleetConfig) -> dict[str, Any]:
    """One instance type's task: its GPU's and its workers' cores' page rates, which is lower,
    and the worker CPU seconds per page at which text pages become CPU-bound."""
    rates = config.page_rates()
    cores = min(config.workers_per_task, config.worker_cores)
    return {
        "instance_type": config.gpu.instance_type,
        "vcpus": config.gpu.vcpus,
        "worker_cores": cores,
        "workers": config.workers_per_task,
        "worker_cpu_s_per_page": config.worker_cpu_s_per_page,
        "pages_per_s": {k: round(v, 3) for k, v in rates.items()},
        "text_bound_by": "cpu" if rates["cpu"] < rates["gpu_text"] else "gpu",
        "ocr_bound_by": "cpu" if rates["cpu"] < rates["gpu_ocr"] else "gpu",
        "text_cpu_bound_above_s_per_page": round(cores / rates["gpu_text"], 2),
    }


def cpu_study(loads: Mapping[str, workloads.Workload], seed: int) -> dict[str, Any]:
    """The CPU runners (runner_kind = "cpu") on the study's workloads: Fargate tasks of the
    text-layer converter under the deployed policy, their rates, prices and estimates."""
    config = cpu_fleet()
    task = config.fargate
    assert task is not None
    text_s, ocr_s = task.page_s(config.splitter_settings())
    return {
        "task": task.model_dump(),
        "per_h": round(config.price_per_h, 5),
        "seconds_per_chunk": config.policy.seconds_per_chunk,
        "target_backlog_per_task": config.policy.target_backlog_per_task,
        "cold_start_s": config.cold_start_s,
        "pages_per_s": {
            "text": round(task.workers / text_s, 1),
            "ocr": round(task.workers / ocr_s, 3),
        },
        "estimates": {
            name: {
                "value": config.model_dump().get(name, task.model_dump().get(name)),
                "source": source,
            }
            for name, source in CPU_ESTIMATES.items()
        },
        "runs": [
            _run(loads[n], config, seed, scenario="none", deployment="cpu")
            for n in ("single-1p", "single-17p", "steady", "diurnal", "burst", "corpus")
        ],
    }


def study(seed: int, out: Path) -> dict[str, Any]:
    """The committed report: finding 1's and finding 4's before and after, the targets, and
    every failure scenario, each under the deployed policy and the one before issue 25."""
    started = time.monotonic()
    after = FleetConfig()
    before = FleetConfig.model_validate(BEFORE)
    loads = {
        n: WORKLOADS[n](seed)
        for n in ("single-1p", "single-17p", "steady", "diurnal", "burst", "corpus")
    }
    runs = [
        _run(load, config, seed, scenario="none", deployment=label)
        for load in loads.values()
        for label, config in (("after", after), ("before", before))
    ]
    # The spread's trade-off: no spreading at all.
    runs += [
        _run(
            loads[n],
            after.model_copy(update={"splitter_lanes": 1}),
            seed,
            scenario="none",
            deployment="after, 1 lane",
        )
        for n in ("steady", "diurnal")
    ]
    # The policy's trade-off: the same fleet sized for latency instead of GPU-hours.
    latency_first = after.policy.model_copy(update=markdown.LATENCY_FIRST)
    runs += [
        _run(
            loads[n],
            after.model_copy(update={"policy": latency_first}),
            seed,
            scenario="none",
            deployment=markdown.LATENCY_FIRST_LABEL,
        )
        for n in ("steady", "diurnal", "burst", "corpus")
    ]
    runs += [
        _run(
            loads["steady"],
            after.model_copy(update=SCENARIOS[name]),
            seed,
            scenario=name,
            deployment="after",
        )
        for name in NOT_FAILURES
        if name != "none"
    ]
    failures = [("flaky", "steady")] + [
        (name, "single-17p") for name in SCENARIOS if name not in (*NOT_FAILURES, "flaky")
    ]
    for scenario, name in failures:
        for label, config in (("after", after), ("before", before)):
            failing = config.model_copy(update=SCENARIOS[scenario])
            runs.append(_run(loads[name], failing, seed, scenario=scenario, deployment=label))
    document = {
        "command": "scripts/fleet-sim --report" + (f" --seed {seed}" if seed != 1 else ""),
        "inputs_sha256": inputs_digest(),
        "duration_s": round(time.monotonic() - started, 1),
        "seed": seed,
        "default_policy": DEFAULT_POLICY,
        "policies": {p.name: p.model_dump() for p in (after.policy, before.policy)},
        "config": after.model_dump(exclude={"policy"}),
        "before": {k: v for k, v in before.model_dump().items() if k in BEFORE and k != "policy"},
        "scenarios": SCENARIOS,
        "estimates": {
            name: {
                "value": after.model_dump().get(name, after.policy.model_dump().get(name)),
                "source": source,
            }
            for name, source in ESTIMATES.items()
        },
        "gpu_rates": {
            "text_pages_per_s": round(after.gpu.text_pages_per_s, 3),
            "ocr_pages_per_s": round(after.gpu.ocr_pages_per_s, 3),
        },
        "cpu_bound": [
            cpu_bound(
                after.model_copy(
                    update={"gpu": gpu, "workers_per_task": TERRAFORM_WORKERS[gpu.instance_type]}
                )
            )
            for gpu in GPUS.values()
        ],
        "prices": {
            "read": PRICES_READ,
            "fields": {
                name: {"value": getattr(after.prices, name), "source": field.description}
                for name, field in Prices.model_fields.items()
            },
        },
        "stall_bound_instance_minutes": after.policy.stall_instance_minutes(
            round(after.instance_idle_s / 60)
        ),
        "runs": runs,
    }
    document["targets"] = markdown.study_targets(document, after)
    document["cpu_fleet"] = cpu_study(loads, seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fleet.json").write_text(json.dumps(document, indent=1) + "\n")
    (out / "fleet.md").write_text(markdown.render_study(document))
    print(f"wrote {out}/fleet.json, fleet.md")
    return document


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.measure_corpus:
        documents = workloads.measure_corpus(args.measure_corpus)
        if not documents:
            raise SystemExit(f"{args.measure_corpus}: no PDF to measure")
        measured = {"source": args.measure_corpus.name, "documents": documents}
        workloads.CORPUS_FILE.write_text(json.dumps(measured, indent=1) + "\n")
        print(f"wrote {workloads.CORPUS_FILE}: {len(documents)} documents")
        return 0
    if args.report:
        study(args.seed, args.out or REPORT_DIR)
        return 0
    started = time.monotonic()
    loads = [WORKLOADS[n](args.seed) for n in args.workloads]
    loads += [workloads.read_trace(path) for path in args.trace]
    runs: list[dict[str, Any]] = []
    series: dict[tuple[str, str], dict[str, Any]] = {}
    for load in loads:
        for policy in args.policies:
            t0 = time.monotonic()
            fleet = Fleet(config_for(args, policy), load, seed=args.seed).run()
            summary = summarize(fleet) | {"wall_s": round(time.monotonic() - t0, 2)}
            runs.append(summary)
            series[(load.name, policy)] = {
                "samples": fleet.samples,
                "throughput": throughput(fleet),
            }
            print(
                f"{load.name:>13} {policy:>12}: p95 {summary['latency_s']['p95']} s, "
                f"${summary['cost']['per_1000_pages']}/1000 pages, "
                f"{summary['gpu_hours']} GPU-h, {summary['tasks_started']} tasks "
                f"({summary['wall_s']} s)",
                flush=True,
            )
    checked = None if args.no_validate else validation.validate(args.validate)
    document = {
        "command": "scripts/fleet-sim " + shlex.join(sys.argv[1:] if argv is None else argv),
        "started_at": dt.datetime.now().isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - started, 1),
        "seed": args.seed,
        "default_policy": DEFAULT_POLICY,
        "policies": {n: POLICIES[n].model_dump() for n in args.policies},
        "config": config_for(args, DEFAULT_POLICY).model_dump(exclude={"policy"}),
        "gpu_rates": {
            "text_pages_per_s": round(GPUS[args.gpu].text_pages_per_s, 3),
            "ocr_pages_per_s": round(GPUS[args.gpu].ocr_pages_per_s, 3),
        },
        "runs": runs,
        "targets": markdown.targets(runs, DEFAULT_POLICY),
        "validation": checked,
    }
    out = args.out or RESULTS / f"{dt.date.today().isoformat()}-fleet-{args.label}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "fleet.json").write_text(json.dumps(document, indent=1) + "\n")
    charts.draw(series, out / "fleet.png")
    (out / "fleet.md").write_text(markdown.render(document))
    print(f"wrote {out}/fleet.json, fleet.md, fleet.png")
    return 0
