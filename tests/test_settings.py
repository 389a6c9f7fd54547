"""`.env.example` lists every setting with its default (rule 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from pagefleet.settings import Settings, settings_env
from runner.supervisor import SupervisorSettings

ENV_EXAMPLE = Path(__file__).resolve().parents[1] / ".env.example"


def _documented() -> dict[str, str]:
    entries = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            entries[name] = value
    return entries


@pytest.mark.parametrize("model", [Settings, SupervisorSettings])
def test_env_example_lists_every_setting_with_its_default(model: type[BaseSettings]) -> None:
    documented = _documented()
    for name, field in model.model_fields.items():
        key = f"PAGEFLEET_{name.upper()}"
        assert key in documented, f"{key} missing from .env.example"
        default = field.default
        expected = (
            ""
            if default is None
            else str(default).lower()
            if isinstance(default, bool)
            else str(default)
        )
        assert documented[key] == expected, key
        assert field.description, f"{key} has no description"


def test_fixed_names_other_tools_use() -> None:
    assert {"PAGEFLEET_CHUNK_PAGES", "PAGEFLEET_ENDPOINT_URL"} <= set(_documented())


def test_settings_round_trip_through_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    custom = Settings(chunk_pages=7, burst=True, endpoint_url="http://127.0.0.1:1", ocr="off")
    for name, value in settings_env(custom).items():
        monkeypatch.setenv(name, value)
    assert Settings() == custom
