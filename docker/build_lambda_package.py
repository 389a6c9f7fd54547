"""Build build/lambda.zip: the handlers, the core and manylinux wheels for the Lambda runtime.

Nothing in it is chosen by hand: the wheels are pyproject.toml's core ``dependencies`` (the
extras are for the runner, the embedded stack and the tools), resolved for the Lambda platform
(not this machine's) at the lock's versions; the sources are the modules the handlers import,
followed from ``handlers/`` through every ``import`` of ``handlers`` or ``pagefleet``. The
zip is byte-for-byte reproducible (sorted entries, fixed timestamps), so an unchanged tree
gives Terraform an unchanged ``source_code_hash`` and no redeploy.

    python docker/build_lambda_package.py [--output build/lambda.zip] [--arch x86_64|arm64]
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANDLERS = "handlers"
OUR_PACKAGES = ("handlers", "pagefleet")
PYTHON_VERSION = "3.12"  # the python3.12 runtime of terraform/modules/functions
PLATFORMS = {"x86_64": "manylinux2014_x86_64", "arm64": "manylinux2014_aarch64"}
# Lambda's limits for a zip uploaded directly and for the unpacked function.
MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_UNZIPPED_BYTES = 250 * 1024 * 1024
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def pinned_requirements() -> list[str]:
    """The core dependencies, each pinned exactly (the extras never reach the Lambda)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    loose = [r for r in declared if not re.fullmatch(r"[A-Za-z0-9_.-]+(\[[^\]]*\])?==\S+", r)]
    if loose:
        raise SystemExit(f"pyproject.toml pins no exact version of {', '.join(loose)}")
    return list(declared)


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def install_wheels(target: Path, arch: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-compile",
            "--disable-pip-version-check",
            "--no-warn-conflicts",
            # Transitive dependencies (botocore, pydantic-core, ...) at the lock's versions too.
            "--constraint",
            str(ROOT / "requirements.lock"),
            "--target",
            str(target),
            "--platform",
            PLATFORMS[arch],
            "--python-version",
            PYTHON_VERSION,
            "--implementation",
            "cp",
            "--only-binary=:all:",
            *pinned_requirements(),
        ],
        check=True,
    )


def imported_modules(source: str, *, top_level_only: bool = False) -> set[str]:
    """Every module an ``import`` in ``source`` may load: at any depth (lazy imports too), or
    ``top_level_only``, those loaded when the file itself is imported."""
    tree = ast.parse(source)
    found: set[str] = set()
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            # `from pagefleet import keys` may name a module.
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def module_path(module: str) -> Path | None:
    """The source file of one of our modules, relative to the repository, if it is one."""
    base = Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if (ROOT / candidate).is_file():
            return candidate
    return None


def handler_sources() -> list[Path]:
    """``handlers/`` and every module of ours they import, with their packages' __init__."""
    pending = [f"{HANDLERS}.{path.stem}" for path in (ROOT / HANDLERS).glob("*.py")]
    files: set[Path] = set()
    while pending:
        module = pending.pop()
        parts = module.split(".")
        if parts[0] not in OUR_PACKAGES or (path := module_path(module)) is None:
            continue
        if path in files:
            continue
        files.add(path)
        # Importing a.b.c runs a/__init__.py and a/b/__init__.py first.
        pending.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        pending.extend(imported_modules((ROOT / path).read_text()))
    return sorted(files)


def copy_sources(target: Path) -> None:
    for path in handler_sources():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, target / path)


def write_zip(tree: Path, output: Path) -> int:
    """Zip ``tree`` reproducibly; returns the unpacked size in bytes."""
    files = sorted(
        p
        for p in tree.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    unpacked = 0
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_suffix(".zip.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path in files:
            info = zipfile.ZipInfo(path.relative_to(tree).as_posix(), FIXED_DATE)
            # Executable bits survive (shared objects); everything is readable by the runtime user.
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            data = path.read_bytes()
            unpacked += len(data)
            archive.writestr(info, data)
    partial.replace(output)  # never a half-written zip at the path Terraform reads
    return unpacked


def build(output: Path, *, arch: str = "x86_64", wheels: bool = True) -> Path:
    with tempfile.TemporaryDirectory(prefix="lambda-package-") as tmp:
        tree = Path(tmp) / "package"
        tree.mkdir()
        if wheels:
            install_wheels(tree, arch)
        copy_sources(tree)
        unpacked = write_zip(tree, output)
    size = output.stat().st_size
    if size > MAX_ZIP_BYTES or unpacked > MAX_UNZIPPED_BYTES:
        raise SystemExit(
            f"{output}: {size} bytes zipped, {unpacked} unpacked, over Lambda's limits "
            f"({MAX_ZIP_BYTES}, {MAX_UNZIPPED_BYTES})"
        )
    print(f"{output}: {size / 1e6:.1f} MB ({unpacked / 1e6:.1f} MB unpacked)")
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "build" / "lambda.zip")
    parser.add_argument("--arch", choices=sorted(PLATFORMS), default="x86_64")
    parser.add_argument(
        "--sources-only",
        action="store_true",
        help="only the handlers and the core modules they import, no wheels (offline tests)",
    )
    args = parser.parse_args(argv)
    build(args.output, arch=args.arch, wheels=not args.sources_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
