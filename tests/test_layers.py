"""Every import points down, floor by floor as the top-level folders stand: the command (`cli/`)
above the embedded stack (`embedded/`), which composes the handlers and the runner, which use the
core (`pagefleet/`); nothing below imports what is above it, nothing deployed to AWS imports
moto, and each deployable runs without the extras it does not install (pyproject.toml's groups)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.lambda_builder import builder

ROOT = Path(__file__).resolve().parents[1]
# The top floors: the embedded stack and, above it, the `pagefleet` command and the rehearsal
# of a deployment (`make rehearse`), side by side.
TOP = ("embedded", "cli", "rehearsal")
LOCAL_EXTRA = ("moto", "rich", "fpdf")  # pyproject.toml's `local` extra
RUNNER_EXTRA = ("aiobotocore", "pdftext", "rapidocr_onnxruntime", "psutil", "pynvml")


def _modules(package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if path.name == "__main__.py":  # importing it runs the program
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


CORE = _modules("pagefleet")
HANDLERS = _modules("handlers")
RUNNER = _modules("runner")
EMBEDDED = _modules("embedded")
CLI = _modules("cli")
REHEARSAL = _modules("rehearsal")


def _imports(path: Path) -> set[str]:
    """Every absolute import in the file, at any depth (a lazy import is still a dependency)."""
    return builder.imported_modules(path.read_text())


def _violations(modules: dict[str, Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{name} imports {imported}"
        for name, path in modules.items()
        for imported in sorted(_imports(path))
        if _within(imported, forbidden)
    ]


def test_the_layers_are_not_empty() -> None:
    # A rename that empties a layer would make the checks below pass vacuously.
    assert "pagefleet.keys" in CORE and "handlers.splitter" in HANDLERS
    assert "runner.worker" in RUNNER and "embedded.pipeline" in EMBEDDED
    assert "cli.operate" in CLI


def test_the_core_imports_neither_handlers_nor_runner_nor_the_top_layer() -> None:
    assert _violations(CORE, ("handlers", "runner", *TOP, *LOCAL_EXTRA)) == []


def test_handlers_and_runner_import_nothing_above_them_or_each_other() -> None:
    assert _violations(HANDLERS, ("runner", *TOP, *LOCAL_EXTRA)) == []
    assert _violations(RUNNER, ("handlers", *TOP, *LOCAL_EXTRA)) == []


def test_the_embedded_stack_imports_nothing_of_the_command() -> None:
    assert _violations(EMBEDDED, ("cli", "rehearsal")) == []


def test_the_command_and_the_rehearsal_import_nothing_of_each_other() -> None:
    assert "rehearsal.run" in REHEARSAL
    assert _violations(CLI, ("rehearsal",)) == []
    assert _violations(REHEARSAL, ("cli",)) == []


def test_only_the_embedded_stack_imports_moto() -> None:
    # The GPU image and the Lambda package copy the core, the handlers and the runner: a moto
    # patch there would change what AWS's answers look like to the code.
    floors = {**CORE, **HANDLERS, **RUNNER, **CLI}
    assert _violations(floors, ("moto",)) == []


def _import_with_absent(absent: tuple[str, ...], modules: list[str]) -> subprocess.CompletedProcess:
    """Import ``modules`` in a fresh interpreter in which ``absent`` cannot be imported, as in
    an install without the extra that brings them."""
    script = textwrap.dedent(
        f"""
        import importlib, importlib.abc, sys

        class Absent(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {absent!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None

        sys.meta_path.insert(0, Absent())
        for module in {modules!r}:
            importlib.import_module(module)
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_core_handlers_and_runner_import_without_the_local_extra() -> None:
    # The marker converter imports marker-pdf, an extra of its own, inside its functions.
    modules = [*CORE, *HANDLERS, *RUNNER]
    result = _import_with_absent(LOCAL_EXTRA, modules)
    assert result.returncode == 0, result.stderr


def test_core_and_handlers_import_with_only_the_core_dependencies() -> None:
    # What the Lambda package holds: no runner extra either.
    result = _import_with_absent((*LOCAL_EXTRA, *RUNNER_EXTRA), [*CORE, *HANDLERS])
    assert result.returncode == 0, result.stderr


def test_the_commands_for_a_deployed_stack_run_without_moto() -> None:
    # `submit`, `status`, `redrive` and `get` talk to AWS: only `run` and `up` start moto.
    result = _import_with_absent(("moto",), ["cli", "cli.operate"])
    assert result.returncode == 0, result.stderr


def test_the_command_without_the_local_extra_says_what_to_install() -> None:
    result = _import_with_absent(LOCAL_EXTRA, ["cli"])
    assert result.returncode != 0
    assert "pip install 'pagefleet[local]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_each_package_lists_the_modules_it_holds() -> None:
    # The package docstrings are the map a newcomer reads first; __all__ keeps them honest.
    for package in ("pagefleet", "handlers", "runner"):
        module = importlib.import_module(package)
        held = sorted(
            path.stem if path.is_file() else path.name
            for path in (ROOT / package).iterdir()
            if (path.suffix == ".py" and not path.name.startswith("__"))
            or (path / "__init__.py").is_file()
        )
        assert sorted(module.__all__) == held, package
        assert module.__doc__
