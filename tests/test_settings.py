"""`.env.example` lists every setting with its default and meaning (rule 7)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from pydantic import ValidationError

from pagefleet.settings import Settings, settings_env

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_loader(
        "env_example",
        importlib.machinery.SourceFileLoader("env_example", str(ROOT / "scripts" / "env-example")),
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_example_is_current() -> None:
    assert (ROOT / ".env.example").read_text() == _generator().render(), (
        "settings changed: run scripts/env-example"
    )


def test_every_setting_is_described_and_the_fixed_names_exist() -> None:
    generator = _generator()
    for _, model in generator.MODELS:
        for name, field in model.model_fields.items():
            assert field.description, f"PAGEFLEET_{name.upper()} has no description"
    text = (ROOT / ".env.example").read_text()
    assert "PAGEFLEET_CHUNK_PAGES=16" in text and "PAGEFLEET_ENDPOINT_URL=" in text


def test_settings_round_trip_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    custom = Settings(chunk_pages=7, burst=True, endpoint_url="http://127.0.0.1:1", ocr="off")
    for name, value in settings_env(custom).items():
        monkeypatch.setenv(name, value)
    assert Settings() == custom


def test_a_heartbeat_that_cannot_hold_the_lease_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="at most half of PAGEFLEET_VISIBILITY_TIMEOUT_S"):
        Settings(visibility_timeout_s=5)  # the default heartbeat is 20 s
    assert Settings(visibility_timeout_s=40, heartbeat_s=20).heartbeat_s == 20
