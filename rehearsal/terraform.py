"""Terraform run offline: the binary, the local provider mirror, and a copy of terraform/
initialised from it (the tests' apply and `make rehearse` use the same)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TF_DIR = ROOT / "terraform"
TERRAFORM = shutil.which("terraform")
MIRROR_CANDIDATES = (
    "/opt/tf-plugins",
    "~/.terraform.d/plugins",
    "~/.local/share/terraform/plugins",
    "/usr/local/share/terraform/plugins",
    "/usr/share/terraform/plugins",
)
AWS_PROVIDER = "registry.terraform.io/hashicorp/aws"

MOTO_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
}


class TerraformUnavailable(RuntimeError):
    """No terraform binary, or no local mirror of the aws provider (offline init impossible)."""


def find_mirror() -> Path | None:
    """The local filesystem mirror holding the aws provider, as terraform.mk finds it."""
    if os.environ.get("TF_PLUGIN_MIRROR"):
        return Path(os.environ["TF_PLUGIN_MIRROR"])
    for candidate in MIRROR_CANDIDATES:
        path = Path(candidate).expanduser()
        if any((path / AWS_PROVIDER).glob("*/*/terraform-provider-aws*")):
            return path
    found = subprocess.run(
        [
            "find",
            "/",
            "-xdev",
            "-path",
            f"*/{AWS_PROVIDER}/*/terraform-provider-aws*",
            "-print",
            "-quit",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return Path(found.split(f"/{AWS_PROVIDER}/")[0]) if found else None


class TerraformFailed(RuntimeError):
    pass


class Terraform:
    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.env = env
        self.mirror: Path | None = None

    def __call__(
        self, *args: str, timeout_s: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        assert TERRAFORM is not None
        result = subprocess.run(
            [TERRAFORM, *args],
            cwd=self.workdir,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if result.returncode != 0:
            raise TerraformFailed(
                f"terraform {args[0]} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
            )
        return result


def initialised(base: Path) -> Terraform:
    """A copy of terraform/ under ``base`` (no state or plugins from the working tree),
    initialised from the local provider mirror without a backend."""
    if TERRAFORM is None:
        raise TerraformUnavailable("terraform is not on PATH")
    mirror = find_mirror()
    if mirror is None:
        raise TerraformUnavailable(
            "no local mirror of the hashicorp/aws provider (offline init impossible)"
        )
    workdir = base / "terraform"
    # The committed lock file comes along: init fails if it does not match the mirror's provider.
    shutil.copytree(
        TF_DIR,
        workdir,
        ignore=shutil.ignore_patterns(
            ".terraform",
            "terraform.tfstate*",
            ".terraformrc",
            "backend_s3.tf",
            "*.auto.tfvars.json",
        ),
    )
    # The runners module embeds the repository's mps/ scripts (../mps from terraform/).
    shutil.copytree(ROOT / "mps", base / "mps")
    cli_config = base / "terraformrc"
    cli_config.write_text(
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path    = "{mirror}"\n'
        '    include = ["registry.terraform.io/hashicorp/*"]\n  }\n'
        '  direct {\n    exclude = ["registry.terraform.io/hashicorp/*"]\n  }\n}\n'
    )
    env = {
        **os.environ,
        "TF_CLI_CONFIG_FILE": str(cli_config),
        "TF_IN_AUTOMATION": "1",
        "CHECKPOINT_DISABLE": "1",
        "NO_COLOR": "1",
        # The aws provider starts once or twice per module and per `terraform test` run, and
        # each start builds its whole schema: Go's collector at 4x the default heap growth
        # spends a quarter less CPU on it (test_terraform.py: 70 -> 54 CPU s, ~0.5 GB a start).
        "GOGC": "400",
    }
    tf = Terraform(workdir, env)
    tf.mirror = mirror
    tf("init", "-backend=false", "-input=false", "-no-color")
    return tf


@contextmanager
def one_provider_process(tf: Terraform, env: dict[str, str] | None = None) -> Iterator[None]:
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
    # Started on its own, the provider fails to configure with a custom CA bundle ("unable to
    # add custom RootCAs HTTPClient, has no WithTransportOptions"): the endpoints here are
    # plain HTTP, so the machine's AWS_CA_BUNDLE is left out.
    # ``env``: what the provider reads from its environment (credentials), besides ``tf``'s.
    env = {k: v for k, v in {**tf.env, **(env or {})}.items() if k != "AWS_CA_BUNDLE"}
    provider = subprocess.Popen(
        [binary, "-debug"],
        env=env,
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
