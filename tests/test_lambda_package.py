"""docker/build_lambda_package.py: what goes into build/lambda.zip, and that it is reproducible."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.lambda_builder import SCRIPT, builder

ROOT = Path(__file__).resolve().parents[1]
HANDLER_MODULES = ("handlers.splitter", "handlers.completion")
OUR_PACKAGES = {"handlers", "pagefleet"}


def _build(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "lambda.zip"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--output", str(out), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if (
        result.returncode != 0
        and "--sources-only" not in args
        and (
            "No matching distribution" in result.stderr
            or "Could not find a version" in result.stderr
        )
    ):
        pytest.skip(
            f"no manylinux py{builder.PYTHON_VERSION} wheels reachable: {result.stderr[-300:]}"
        )
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def full_package(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    return zipfile.ZipFile(_build(tmp_path_factory.mktemp("full")))


def _module_file(names: set[str], module: str) -> str | None:
    for candidate in (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"):
        if candidate in names:
            return candidate
    return None


def test_sources_only_package_holds_the_handlers_and_core(tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(_build(tmp_path, "--sources-only")).namelist())
    assert {"handlers/splitter.py", "handlers/completion.py", "pagefleet/assembly.py"} <= names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    # The embedded stack and the command are above the handlers: no import leads to them.
    assert not any(n.startswith("embedded/") for n in names), "moto-only code stays out"
    assert not {"cli.py", "pagefleet/submission.py"} & names
    assert not any(n.startswith(("tests/", "runner/", "bench/")) for n in names)


def test_the_wheels_are_the_core_dependencies_and_no_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert builder.pinned_requirements() == project["dependencies"]
    extras = project["optional-dependencies"]
    local_only = {builder._normalise(r.split("==")[0].split("[")[0]) for r in extras["local"]}
    core = {builder._normalise(r.split("==")[0].split("[")[0]) for r in project["dependencies"]}
    assert {"moto", "rich", "fpdf2"} <= local_only
    assert not local_only & core


def test_the_package_holds_no_embedded_stack_dependency(full_package: zipfile.ZipFile) -> None:
    top_level = {n.split("/")[0] for n in full_package.namelist()}
    for unwanted in ("moto", "rich", "fpdf", "aiobotocore", "pdftext", "rapidocr_onnxruntime"):
        assert not {t for t in top_level if t == unwanted or t.startswith(f"{unwanted}-")}, (
            f"{unwanted} is in the Lambda package"
        )


def test_builds_are_byte_identical(tmp_path: Path) -> None:
    # Terraform's source_code_hash must not change when the tree did not.
    first = _build(tmp_path / "a", "--sources-only").read_bytes()
    second = _build(tmp_path / "b", "--sources-only").read_bytes()
    assert hashlib.sha256(first).digest() == hashlib.sha256(second).digest()


def test_wheels_are_manylinux_for_the_lambda_python(full_package: zipfile.ZipFile) -> None:
    names = full_package.namelist()
    tag = builder.PYTHON_VERSION.replace(".", "")
    extensions = [n for n in names if n.endswith(".so") and "cpython" in n]
    assert extensions, "compiled wheels (pydantic-core) are in the package"
    assert all(f"cpython-{tag}-x86_64-linux-gnu" in n for n in extensions), extensions
    assert "pypdfium2_raw/libpdfium.so" in names


def test_pinned_versions_are_the_locked_ones(full_package: zipfile.ZipFile) -> None:
    locked = dict(
        line.split("==")
        for line in (ROOT / "requirements.lock").read_text().split()
        if "==" in line
    )
    locked = {builder._normalise(k): v for k, v in locked.items()}
    dist_infos = {n.split("/")[0] for n in full_package.namelist() if ".dist-info/" in n}
    versions = {}
    for d in dist_infos:
        name, version = d[: -len(".dist-info")].rsplit("-", 1)
        versions[builder._normalise(name)] = version
    core = [r.split("==")[0].split("[")[0] for r in builder.pinned_requirements()]
    for dependency in (*core, "botocore", "pydantic-core"):
        assert versions[builder._normalise(dependency)] == locked[builder._normalise(dependency)]


def test_everything_the_handlers_import_is_in_the_package(full_package: zipfile.ZipFile) -> None:
    names = set(full_package.namelist())
    top_level = {n.split("/")[0].removesuffix(".py") for n in names}
    seen: set[str] = set()
    pending = list(HANDLER_MODULES)
    missing: set[str] = set()
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        root = module.split(".")[0]
        if root in OUR_PACKAGES:
            path = _module_file(names, module)
            if path is None:
                continue  # `from pagefleet import keys` names a module or an attribute
            source = full_package.read(path).decode()
            pending.extend(builder.imported_modules(source, top_level_only=True))
            # Importing a.b.c runs a/__init__.py and a/b/__init__.py first.
            parts = module.split(".")
            pending.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        elif root not in sys.stdlib_module_names and root != "__future__" and root not in top_level:
            missing.add(root)
    assert not missing, f"imported by the handlers but not packaged: {sorted(missing)}"
