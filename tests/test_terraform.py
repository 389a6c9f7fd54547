"""The Terraform deployment, offline: fmt, validate, `terraform test` (mocked provider; its
functions and runners runs also hold terraform/policies.json to what they plan), the lock
file, and the messages of the validations a user meets first. The apply against moto is in
test_terraform_apply.py, `make runner-image` / `make vllm-image` in test_push_image.py."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from collections.abc import Iterator

import pytest

from embedded import MotoServer
from tests.terraform_support import (
    MOTO_CREDENTIALS,
    ROOT,
    TERRAFORM,
    TF_DIR,
    Terraform,
    initialised,
    needs_terraform,
    one_provider_process,
)


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, TF_DIR / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stack_json_is_pagefleet_stack() -> None:
    """Terraform reads stack.json; it must say what pagefleet/stack.py says."""
    rendered = _load_script("stack_json").render()
    assert (TF_DIR / "stack.json").read_text() == rendered, (
        "terraform/stack.json is stale: run `make terraform-stack-json`"
    )


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Terraform]:
    tf = initialised(tmp_path_factory)
    with one_provider_process(tf):
        yield tf


@needs_terraform
def test_fmt_and_validate(terraform: Terraform) -> None:
    terraform("fmt", "-check", "-recursive", "-diff", "-no-color")
    terraform("validate", "-no-color")


@needs_terraform
def test_terraform_test_with_mocked_provider(terraform: Terraform) -> None:
    result = terraform("test", "-no-color")
    assert " 0 failed" in result.stdout
    # Every module is exercised by at least one run.
    for name in ("storage", "queues", "functions", "runners", "autoscaling", "alarms", "root"):
        assert f"tests/{name}.tftest.hcl... pass" in result.stdout


EXAMPLES = sorted(p.parent.name for p in (TF_DIR / "examples").glob("*/main.tf"))


@needs_terraform
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_validates_and_plans(terraform: Terraform, example: str) -> None:
    """terraform/examples/*, roots of their own calling the module by relative path: each
    validates (its inputs are the module's variables) and its tests plan, offline."""
    workdir = terraform.workdir / "examples" / example
    run = Terraform(workdir, terraform.env)
    run("init", "-backend=false", "-input=false", "-no-color")
    run("validate", "-no-color")
    result = run("test", "-no-color")
    assert " 0 failed" in result.stdout
    for test_file in sorted((workdir / "tests").glob("*.tftest.hcl")):
        assert f"tests/{test_file.name}... pass" in result.stdout


def test_lock_file_is_committed_bounded_and_covers_every_platform() -> None:
    """The provider is bounded to the tested major, and the lock holds the registry's checksums
    of every platform's package (zh:) plus the h1: of the platform the mirror has."""
    versions = (TF_DIR / "versions.tf").read_text()
    assert 'version = ">= 5.100, < 6.0"' in versions
    lock = (TF_DIR / ".terraform.lock.hcl").read_text()
    assert 'version     = "5.100.0"' in lock
    assert 'constraints = ">= 5.100.0, < 6.0.0"' in lock
    assert len(re.findall(r'"zh:[0-9a-f]{64}"', lock)) == 15
    assert re.search(r'"h1:[A-Za-z0-9+/]{43}="', lock)
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", "terraform/.terraform.lock.hcl"],
        cwd=ROOT,
        capture_output=True,
    )
    assert tracked.returncode == 0, "terraform/.terraform.lock.hcl is not committed"


# The service behind each AWS resource and data source type the configuration uses: an offline
# apply (endpoint_url, the moto apply) must send every one of them to that endpoint; one left
# out goes to real AWS. None: answered by the provider itself, no API call.
SERVICE_OF_TYPE_PREFIX = {
    "aws_appautoscaling_": "applicationautoscaling",
    "aws_autoscaling_": "autoscaling",
    "aws_budgets_": "budgets",
    "aws_ce_": "ce",
    "aws_cloudwatch_dashboard": "cloudwatch",
    "aws_cloudwatch_event_": "events",
    "aws_cloudwatch_log_": "cloudwatchlogs",
    "aws_cloudwatch_metric_alarm": "cloudwatch",
    "aws_ecr_": "ecr",
    "aws_ecs_": "ecs",
    "aws_iam_policy_document": None,
    "aws_iam_": "iam",
    "aws_kms_": "kms",
    "aws_lambda_": "lambda",
    "aws_launch_template": "ec2",
    "aws_security_group": "ec2",
    "aws_s3_": "s3",
    "aws_sns_": "sns",
    "aws_sqs_": "sqs",
    "aws_ssm_": "ssm",
    # The complete-vpc example's network (examples/: roots of their own, never applied offline).
    "aws_default_security_group": "ec2",
    "aws_eip": "ec2",
    "aws_internet_gateway": "ec2",
    "aws_nat_gateway": "ec2",
    "aws_route": "ec2",
    "aws_subnet": "ec2",
    "aws_vpc": "ec2",
    "aws_caller_identity": "sts",
    "aws_partition": None,
    "aws_region": None,
}


def test_an_offline_apply_sends_every_service_the_configuration_uses_to_its_endpoint() -> None:
    used = {
        match
        for path in TF_DIR.rglob("*.tf")
        if ".terraform" not in path.parts
        for match in re.findall(r'^(?:resource|data) "(aws_[a-z0-9_]+)"', path.read_text(), re.M)
    }
    services = set()
    for kind in sorted(used):
        # The longest prefix decides: aws_iam_policy_document is no IAM call, aws_iam_role is.
        prefix = max(
            (p for p in SERVICE_OF_TYPE_PREFIX if kind.startswith(p)), key=len, default=None
        )
        assert prefix is not None, f"{kind}: which service? (SERVICE_OF_TYPE_PREFIX)"
        services.add(SERVICE_OF_TYPE_PREFIX[prefix])
    provider = (TF_DIR / "versions.tf").read_text()
    endpoints = set(re.findall(r"^\s+(\w+)\s+= endpoints\.value$", provider, re.M))
    assert services - {None} <= endpoints, sorted(services - {None} - endpoints)


def test_the_terraform_floor_has_what_the_walkthrough_uses() -> None:
    """The walkthrough's S3 backend locks with use_lockfile, which Terraform 1.11 made GA; an
    older Terraform accepted by required_version would fail at init."""
    assert "use_lockfile = true" in (TF_DIR / "README.md").read_text()
    floor = re.search(r'required_version = ">= (\d+)\.(\d+)', (TF_DIR / "versions.tf").read_text())
    assert floor is not None and (int(floor[1]), int(floor[2])) >= (1, 11), floor


# --- what a user meets first: a plan refused with a message that says what to set ------------

# Each variable is wrong in its own way; one plan reports every refusal (each plan starts the
# provider, about 10 s).
REFUSED_PLAN_VARIABLES = {
    "create_runners": "true",
    "vpc_id": "vpc-0123456789abcdef0",
    "subnet_ids": "[]",
    "gpu_instance_types": '["g6.xlarge","p4d.24xlarge"]',
    "runner_image_tag": "latest",
    "heartbeat_s": "40",
}
REFUSALS = {
    "runners without subnets": "the GPU runners need subnets: set subnet_ids",
    "a multi-GPU instance type": "p4d.24xlarge has 8 GPUs: a runner task holds one GPU",
    "the latest tag": 'runner_image_tag must not be "latest"',
    "a heartbeat the lease cannot hold": "visibility_timeout_s (60) must be at least twice "
    "heartbeat_s (40;",
}


@needs_terraform
def test_plan_refuses_with_messages_that_say_what_to_set(
    terraform: Terraform, moto_server: MotoServer
) -> None:
    variables = {
        "endpoint_url": moto_server.url,
        "lambda_package_path": "tests/fixtures/lambda.zip",
        **REFUSED_PLAN_VARIABLES,
    }
    result = subprocess.run(
        [TERRAFORM, "plan", "-input=false", "-no-color", "-lock=false"]
        + [f"-var={k}={v}" for k, v in variables.items()],
        cwd=terraform.workdir,
        env={**terraform.env, **MOTO_CREDENTIALS},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stdout[-2000:]
    # Terraform wraps the messages and draws a frame beside them.
    said = " ".join(re.sub(r"[│╷╵]", " ", result.stderr).split())
    for case, message in REFUSALS.items():
        assert message in said, f"{case}: {said[-3000:]}"
