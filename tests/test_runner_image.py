"""docker/runner.Dockerfile installs what the runner runs: the runner and marker extras of
pyproject.toml, never the embedded stack's or the tools'."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "docker" / "runner.Dockerfile"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\[=<>!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def installed_extras(extras: set[str]) -> set[str]:
    """``extras`` and every extra they pull in through ``pagefleet[...]`` self-references."""
    closed: set[str] = set()
    pending = list(extras)
    while pending:
        extra = pending.pop()
        if extra in closed:
            continue
        closed.add(extra)
        for requirement in PROJECT["optional-dependencies"][extra]:
            if _name(requirement) == "pagefleet":
                pending.extend(re.findall(r"\w+", requirement.split("[", 1)[1]))
    return closed


def _image_extras() -> set[str]:
    [install] = re.findall(r"pip install [^\n]*'\.\[([\w,]+)\]'", DOCKERFILE.read_text())
    return set(install.split(","))


def test_the_image_installs_the_runner_and_marker_extras_only() -> None:
    extras = installed_extras(_image_extras())
    assert extras == {"runner", "marker"}
    requirements = {
        _name(r)
        for extra in extras
        for r in PROJECT["optional-dependencies"][extra]
        if _name(r) != "pagefleet"
    }
    assert {"aiobotocore", "pdftext", "marker-pdf"} <= requirements
    assert not {"moto", "rich", "fpdf2", "pytest"} & requirements


def test_the_extra_closure_follows_self_references() -> None:
    # The check above is only as good as this expansion.
    assert installed_extras({"dev"}) == {"dev", "local", "runner"}
