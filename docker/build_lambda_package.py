"""Build build/lambda.zip: the handlers, the core and manylinux wheels for the Lambda runtime.

The wheels are chosen for the Lambda platform (not this machine's), with the versions pinned in
pyproject.toml; the zip is byte-for-byte reproducible (sorted entries, fixed timestamps), so an
unchanged tree gives Terraform an unchanged ``source_code_hash`` and no redeploy.

    python docker/build_lambda_package.py [--output build/lambda.zip] [--arch x86_64|arm64]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("handlers", "pagefleet")
# Local-only code: the embedded moto stack and its batch tool are never run in Lambda.
EXCLUDED_SOURCES = ("pagefleet/local",)
# What the handlers import at run time. boto3 is in the runtime too, but ours is pinned.
RUNTIME_DEPENDENCIES = (
    "pydantic",
    "pydantic-settings",
    "pypdfium2",
    "tenacity",
    "aws-lambda-powertools",
    "boto3",
)
PYTHON_VERSION = "3.12"  # the python3.12 runtime of terraform/modules/functions
PLATFORMS = {"x86_64": "manylinux2014_x86_64", "arm64": "manylinux2014_aarch64"}
# Lambda's limits for a zip uploaded directly and for the unpacked function.
MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_UNZIPPED_BYTES = 250 * 1024 * 1024
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def pinned_requirements() -> list[str]:
    """``name==version`` for each runtime dependency, from pyproject.toml's exact pins."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = {}
    for requirement in declared:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?==(\S+)", requirement.strip())
        if match:
            pins[_normalise(match.group(1))] = f"{match.group(1)}=={match.group(3)}"
    missing = [d for d in RUNTIME_DEPENDENCIES if _normalise(d) not in pins]
    if missing:
        raise SystemExit(f"pyproject.toml pins no exact version of {', '.join(missing)}")
    return [pins[_normalise(d)] for d in RUNTIME_DEPENDENCIES]


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


def copy_sources(target: Path) -> None:
    for package in SOURCES:
        shutil.copytree(
            ROOT / package,
            target / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    for excluded in EXCLUDED_SOURCES:
        shutil.rmtree(target / excluded, ignore_errors=True)


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
        help="only handlers/ and pagefleet/, no wheels (for offline tests against moto)",
    )
    args = parser.parse_args(argv)
    build(args.output, arch=args.arch, wheels=not args.sources_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
