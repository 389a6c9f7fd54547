"""The Terraform deployment, offline: fmt, validate, `terraform test` (mocked provider), and an
apply of storage + queues + functions against the embedded moto server, after which the
pipeline converts a PDF on what Terraform made, and what Terraform made is read back and
compared with pagefleet/stack.py (the one definition) and with the local stack."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from pagefleet import aws, stack
from pagefleet.local import MotoServer
from pagefleet.local.pipeline import LocalPipeline
from pagefleet.local.provision import Stack, create_stack
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import upload
from tests.conftest import wait_for_record

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


def _find_mirror() -> Path | None:
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


def _load_stack_json_script():
    spec = importlib.util.spec_from_file_location(
        "stack_json", TF_DIR / "scripts" / "stack_json.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stack_json_is_pagefleet_stack() -> None:
    """Terraform reads stack.json; it must say what pagefleet/stack.py says."""
    rendered = _load_stack_json_script().render()
    assert (TF_DIR / "stack.json").read_text() == rendered, (
        "terraform/stack.json is stale: run `make terraform-stack-json`"
    )


# --- everything below needs the terraform binary and the aws provider ----------------------

needs_terraform = pytest.mark.skipif(TERRAFORM is None, reason="terraform is not on PATH")


class Terraform:
    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.workdir = workdir
        self.env = env

    def __call__(
        self, *args: str, timeout_s: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [TERRAFORM, *args],
            cwd=self.workdir,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        assert result.returncode == 0, (
            f"terraform {args[0]} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
        return result


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    """A copy of terraform/ (no state or plugins from the working tree), initialised from the
    local provider mirror."""
    if TERRAFORM is None:
        pytest.skip("terraform is not on PATH")
    mirror = _find_mirror()
    if mirror is None:
        pytest.skip("no local mirror of the hashicorp/aws provider (offline init impossible)")
    base = tmp_path_factory.mktemp("tf")
    workdir = base / "terraform"
    shutil.copytree(
        TF_DIR,
        workdir,
        ignore=shutil.ignore_patterns(
            ".terraform", ".terraform.lock.hcl", "terraform.tfstate*", ".terraformrc"
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
    }
    tf = Terraform(workdir, env)
    tf("init", "-backend=false", "-input=false", "-no-color")
    return tf


@needs_terraform
def test_fmt_and_validate(terraform: Terraform) -> None:
    terraform("fmt", "-check", "-recursive", "-diff", "-no-color")
    terraform("validate", "-no-color")


@needs_terraform
def test_terraform_test_with_mocked_provider(terraform: Terraform) -> None:
    result = terraform("test", "-no-color")
    assert " 0 failed" in result.stdout
    # Every module is exercised by at least one run.
    for name in ("storage", "queues", "functions", "runners", "autoscaling", "root"):
        assert f"tests/{name}.tftest.hcl... pass" in result.stdout


# --- apply against moto ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def applied(
    terraform: Terraform, moto_server: MotoServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """storage + queues + functions applied to the moto server; returns the outputs."""
    package = tmp_path_factory.mktemp("pkg") / "lambda.zip"
    # The functions never run on moto (no Docker), so the package need not carry wheels.
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "docker" / "build_lambda_package.py"),
            "--sources-only",
            "--output",
            str(package),
        ],
        check=True,
        capture_output=True,
    )
    name = f"tf{uuid.uuid4().hex[:8]}"
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
    }
    env.pop("AWS_SESSION_TOKEN", None)
    variables = {
        "name": name,
        "bucket_name": f"{name}-bucket",
        "endpoint_url": moto_server.url,
        "lambda_package_path": str(package),
        "create_runners": "false",
        # moto lacks Application Auto Scaling tagging (apply hangs) and the runner fleet.
        "create_autoscaling": "false",
        # moto would run the functions in Docker on every message; the test dispatches instead.
        "event_source_mapping_enabled": "false",
        "force_destroy": "true",
        # moto 5.2.5 evaluates the TLS-only Deny (aws:SecureTransport, unknown to it) as a deny
        # of every request; storage.tftest.hcl pins that policy instead.
        "s3_deny_insecure_transport": "false",
    }
    args = [f"-var={k}={v}" for k, v in variables.items()]
    terraform("apply", "-auto-approve", "-input=false", "-no-color", *args, timeout_s=240, env=env)
    outputs = json.loads(terraform("output", "-json", env=env).stdout)
    return {k: v["value"] for k, v in outputs.items()} | {"name": name}


def _settings(moto_server: MotoServer, applied: dict[str, Any], **extra: Any) -> Settings:
    return Settings(
        endpoint_url=moto_server.url,
        bucket=applied["bucket_name"],
        queue_prefix=applied["queue_prefix"],
        **extra,
    )


def _attributes(sqs: Any, url: str) -> dict[str, str]:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


def _comparable(attributes: dict[str, str], names: list[str]) -> dict[str, Any]:
    """The named attributes, with RedrivePolicy parsed and its target reduced to a role."""
    picked: dict[str, Any] = {}
    for name in names:
        value: Any = attributes.get(name)
        if name == "RedrivePolicy" and value is not None:
            value = json.loads(value)
            value = {
                "target": value["deadLetterTargetArn"].rsplit("-", 2)[-2:],
                "maxReceiveCount": int(value["maxReceiveCount"]),
            }
        picked[name] = value
    return picked


def _notification_rules(s3: Any, bucket: str) -> set[tuple[str, str, str, tuple[str, ...]]]:
    config = s3.get_bucket_notification_configuration(Bucket=bucket)
    rules = set()
    for q in config.get("QueueConfigurations", []):
        filters = {r["Name"].lower(): r["Value"] for r in q["Filter"]["Key"]["FilterRules"]}
        role = q["QueueArn"].rsplit(":", 1)[1].rsplit("-", 1)[1]
        rules.add((role, filters["prefix"], filters["suffix"], tuple(sorted(q["Events"]))))
    return rules


@needs_terraform
def test_queues_read_back_equal_the_stack_definition_and_the_local_stack(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    settings = _settings(moto_server, applied)
    sqs = aws.client("sqs", settings)
    local = create_stack(
        Settings(
            endpoint_url=moto_server.url,
            queue_prefix=f"{applied['name']}l",
            bucket=f"{applied['name']}-local",
        )
    )
    for spec in stack.queue_specs(settings):
        url, dlq_url = (
            applied["queue_urls"][spec.role],
            applied["dead_letter_queue_urls"][spec.role],
        )
        got, got_dlq = _attributes(sqs, url), _attributes(sqs, dlq_url)
        assert got_dlq["QueueArn"].endswith(f":{spec.dlq_name(settings.queue_prefix)}")
        wanted = stack.queue_attributes(spec, got_dlq["QueueArn"])
        names = sorted(wanted)
        assert _comparable(got, names) == _comparable(wanted, names), spec.role
        wanted_dlq = stack.dlq_attributes(spec)
        assert {k: got_dlq[k] for k in wanted_dlq} == wanted_dlq, spec.role
        # ... and the same as what the local stack made from the same definition.
        local_got = _attributes(sqs, local.queue_urls[spec.role])
        assert _comparable(got, names) == _comparable(local_got, names), spec.role
        local_dlq = _attributes(sqs, local.dlq_urls[spec.role])
        assert {k: got_dlq[k] for k in wanted_dlq} == {k: local_dlq[k] for k in wanted_dlq}
        # What Terraform adds beyond the definition: encryption, and DLQs that outlive sources.
        assert got["KmsMasterKeyId"] == applied["kms_key_arn"]
        assert int(got_dlq["MessageRetentionPeriod"]) > int(got["MessageRetentionPeriod"])


@needs_terraform
def test_notifications_read_back_equal_the_stack_definition_and_the_local_stack(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    settings = _settings(moto_server, applied)
    s3 = aws.client("s3", settings)
    wanted = {
        (n.queue_role, n.prefix, n.suffix, tuple(sorted(n.events)))
        for n in stack.notification_specs()
    }
    assert _notification_rules(s3, applied["bucket_name"]) == wanted
    local = create_stack(
        Settings(
            endpoint_url=moto_server.url,
            queue_prefix=f"{applied['name']}n",
            bucket=f"{applied['name']}-localn",
        )
    )
    assert _notification_rules(s3, local.settings.bucket) == wanted


@needs_terraform
def test_bucket_read_back_is_versioned_encrypted_and_not_public(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    s3 = aws.client("s3", _settings(moto_server, applied))
    bucket = applied["bucket_name"]
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert all(block.values()) and len(block) == 4


def _stack_from_terraform(settings: Settings, applied: dict[str, Any]) -> Stack:
    sqs = aws.client("sqs", settings)
    made = Stack(settings=settings, s3=aws.client("s3", settings), sqs=sqs)
    for role, url in applied["queue_urls"].items():
        dlq_url = applied["dead_letter_queue_urls"][role]
        made.queue_urls[role], made.dlq_urls[role] = url, dlq_url
        made.queue_arns[role] = _attributes(sqs, url)["QueueArn"]
        made.dlq_arns[role] = _attributes(sqs, dlq_url)["QueueArn"]
    return made


def _pdf(pages: int) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for page in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 8, f"Page {page} of the terraform deployment test.")
    return bytes(pdf.output())


@needs_terraform
def test_pipeline_converts_a_pdf_on_the_resources_terraform_made(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    settings = _settings(moto_server, applied, chunk_pages=2, poll_wait_s=1, heartbeat_s=2)
    made = _stack_from_terraform(settings, applied)
    bucket = Bucket(made.s3, settings.bucket)
    with LocalPipeline(settings, workers=1, server=moto_server, stack=made):
        # Upper-case suffix: only the notification rules Terraform set can route it.
        upload(bucket, "terraform/report", _pdf(5), suffix=".PDF")
        record = wait_for_record(bucket, "terraform/report", timeout_s=90)
    assert record.status == "done", record
    assert record.pages == 5 and len(record.chunks) == 3
    markdown = bucket.get("outbox/terraform/report.md").decode()
    for page in range(1, 6):
        assert f"Page {page} of the terraform deployment test." in markdown
