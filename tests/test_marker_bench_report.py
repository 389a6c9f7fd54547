"""The marker CPU bench's committed results read into its models and render to the committed
report, so the sizing in runner/worker_plan.py and mps/README.md stays traceable to them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.marker import cli, sizing
from bench.marker.models import MarkerBench
from bench.marker.report import render
from runner.worker_plan import MARKER_CONVERSION_MB, RunnerSettings

RUNS = sorted((Path(__file__).resolve().parents[1] / "bench" / "results").glob("*/marker.json"))


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.parent.name)
def test_committed_marker_runs_render_to_their_report(path: Path) -> None:
    results = MarkerBench.model_validate_json(path.read_bytes())
    assert render(results) == (path.parent / "results.md").read_text()


def test_the_worker_memory_budget_covers_the_measured_peak() -> None:
    (latest, *_) = sorted(RUNS, reverse=True)
    results = MarkerBench.model_validate_json(latest.read_bytes())
    assert RunnerSettings().marker_worker_memory_mb == MARKER_CONVERSION_MB
    assert sizing.peak_rss_mb(results) <= MARKER_CONVERSION_MB


def test_no_warm_round_is_refused_before_anything_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The report's figures are the warm rounds': ``--repeat 0`` would measure and then fail."""
    with pytest.raises(SystemExit) as stop:
        cli.parser().parse_args(["--repeat", "0"])
    assert stop.value.code == 2
    assert "--repeat: at least 1" in capsys.readouterr().err
