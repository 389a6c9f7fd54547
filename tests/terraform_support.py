"""Terraform for the tests: a copy of terraform/ initialised from the offline provider mirror
(one per test module, so modules can run in parallel), and one provider process for many
commands."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from rehearsal.terraform import (
    AWS_PROVIDER,
    MOTO_CREDENTIALS,
    ROOT,
    TERRAFORM,
    TF_DIR,
    Terraform,
    TerraformUnavailable,
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


@contextmanager
def one_provider_process(tf: Terraform) -> Iterator[None]:
    """Every command of ``tf`` talks to one aws provider process, started here in the mode
    Terraform's provider debugging uses (``-debug``, then ``TF_REATTACH_PROVIDERS``), instead
    of starting the provider for each command and each ``terraform test`` run: a start builds
    the provider's whole schema, ~1.5 CPU s, and test_terraform.py's commands start it ~50
    times. For commands run one after another: each configures the one process in turn.
    https://developer.hashicorp.com/terraform/plugin/debugging#running-terraform-with-a-provider-in-debug-mode
    """
    assert tf.mirror is not None
    lock = (tf.workdir / ".terraform.lock.hcl").read_text()
    version = lock.split(f'provider "{AWS_PROVIDER}"')[1].split('"')[1]
    (binary,) = (tf.mirror / AWS_PROVIDER / version).glob("*/terraform-provider-aws*")
    provider = subprocess.Popen(
        [binary, "-debug"],
        env=tf.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert provider.stdout is not None
        reattach = ""
        for line in provider.stdout:
            if "TF_REATTACH_PROVIDERS=" in line:
                reattach = line.split("=", 1)[1].strip().strip("'")
                break
        assert json.loads(reattach)[AWS_PROVIDER]["Pid"] == provider.pid, reattach
        # Whatever else it prints is drained, so that a full pipe never stalls it.
        threading.Thread(target=provider.stdout.read, daemon=True).start()
        tf.env = {**tf.env, "TF_REATTACH_PROVIDERS": reattach}
        yield
    finally:
        tf.env = {k: v for k, v in tf.env.items() if k != "TF_REATTACH_PROVIDERS"}
        provider.kill()
        provider.wait()
