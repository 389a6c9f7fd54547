"""Terraform for the tests: a copy of terraform/ initialised from the offline provider mirror
(one per test module, so modules can run in parallel), and one provider process for many
commands."""

from __future__ import annotations

import pytest

from rehearsal.terraform import (
    MOTO_CREDENTIALS,
    ROOT,
    TERRAFORM,
    TF_DIR,
    Terraform,
    TerraformUnavailable,
    one_provider_process,
)
from rehearsal.terraform import initialised as initialise

__all__ = [
    "MOTO_CREDENTIALS",
    "ROOT",
    "TERRAFORM",
    "TF_DIR",
    "Terraform",
    "initialised",
    "needs_terraform",
    "one_provider_process",
]

needs_terraform = pytest.mark.skipif(TERRAFORM is None, reason="terraform is not on PATH")


def initialised(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    """A copy of terraform/ initialised from the local provider mirror (rehearsal/terraform.py),
    or the test skipped where that cannot be done offline."""
    try:
        return initialise(tmp_path_factory.mktemp("tf"))
    except TerraformUnavailable as exc:
        pytest.skip(str(exc))
