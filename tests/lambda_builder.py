"""docker/build_lambda_package.py loaded as a module (it is a script, not in a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "docker" / "build_lambda_package.py"

_spec = importlib.util.spec_from_file_location("build_lambda_package", SCRIPT)
assert _spec is not None and _spec.loader is not None
builder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builder)
