"""docker/runner.Dockerfile installs what the runner runs: the runner and marker extras of
pyproject.toml, never the embedded stack's or the tools', and its pip step resolves.

The image's Python environment is docker/runner-env.sh (the Dockerfile runs it, and so does
`make marker-venv`). The replay below runs that script's pip step in a fresh virtual environment
as a dry run against PyPI, so a pin that breaks the image fails CI without building it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "docker" / "runner.Dockerfile"
RUNNER_ENV = ROOT / "docker" / "runner-env.sh"
RUNNER_LOCK = ROOT / "docker" / "runner.lock"
# The pip the image upgrades to before its install step.
IMAGE_PIP = re.search(r"pip install (pip==[\w.]+)", DOCKERFILE.read_text())
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
    assert "docker/runner-env.sh /opt/venv" in DOCKERFILE.read_text()
    [install] = re.findall(r"pip\[@\]\}\" install [^\n]*'\.\[([\w,]+)\]'", RUNNER_ENV.read_text())
    return set(install.split(","))


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


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


def test_the_image_lock_agrees_with_requirements_lock() -> None:
    """Both are constraints of the image's pip step: one version per package, but for pillow
    (marker-pdf needs <11; the lock's is the dev tools') and opencv-python (replaced by surya's
    headless build, so runner.lock has none)."""
    image, project = _pins(RUNNER_LOCK), _pins(ROOT / "requirements.lock")
    differ = {
        name: (project[name], image[name])
        for name in image.keys() & project.keys()
        if image[name] != project[name]
    }
    assert differ.keys() <= {"pillow"}, f"run `make runner-lock`: {differ}"
    assert "opencv-python" not in image and image["opencv-python-headless"].startswith("4.11.")
    assert image["marker-pdf"] == "2.0.0" and "torch" in image


def _clean_pip_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a machine with only PyPI: this one's pip configuration (a torch cap,
    local indexes) is not the image's, so it is left out."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_CACHE_DIR": str(tmp_path / "cache")}


@pytest.mark.timeout(900)
def test_the_image_pip_step_resolves(tmp_path: Path) -> None:
    """A dry run of docker/runner-env.sh in a fresh venv against PyPI: what `docker build` runs.

    Needs PyPI (CI has it). The PyPI this machine reaches serves no separate metadata files
    (PEP 658), so a plain dry run downloads every wheel, 3.3 GB with torch's CUDA libraries:
    26-170 s and 25 CPU s here. pip's fast-deps reads each wheel's metadata with HTTP range
    requests instead (21 s and 14 CPU s cold); it changes how metadata is fetched, not what the
    resolver decides: both reports list the same 127 files.
    """
    assert IMAGE_PIP is not None, "the Dockerfile no longer pins its pip"
    venv = tmp_path / "venv"
    env = _clean_pip_env(tmp_path)
    # A bare venv and the image's pip put in by this one's: ensurepip's copy would be replaced.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    subprocess.run(
        [*pip, "install", "-q", IMAGE_PIP.group(1)],
        env=env,
        check=True,
        timeout=300,
    )
    report = tmp_path / "report.json"
    started = time.monotonic()
    replay = subprocess.run(
        [
            str(RUNNER_ENV),
            str(venv),
            "--dry-run",
            "--ignore-installed",
            "--use-feature=fast-deps",
            "-q",
            "--report",
            str(report),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=800,
    )
    seconds = time.monotonic() - started
    assert replay.returncode == 0, replay.stderr[-3000:]
    resolved = {
        re.sub(r"[-_.]+", "-", item["metadata"]["name"]).lower(): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    lock = _pins(RUNNER_LOCK)
    # Everything the image installs is pinned by one of the two locks, at that version.
    for name, version in resolved.items():
        if name in {"pagefleet", "pip", "setuptools", "wheel"}:  # not in a `pip freeze`
            continue
        assert lock.get(name, _pins(ROOT / "requirements.lock").get(name)) == version, name
    assert resolved["marker-pdf"] == "2.0.0" and resolved["tenacity"] == lock["tenacity"]
    print(f"dry-run replay of the image's pip step: {seconds:.0f} s, {len(resolved)} packages")
