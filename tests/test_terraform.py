"""The Terraform deployment, offline: fmt, validate, `terraform test` (mocked provider), the
messages of the validations a user meets first, and an apply of storage + queues + functions +
alarms against the embedded moto server, with its state in an S3 backend there (initialised by
`make terraform-init TF_BACKEND_CONFIG=...`), after which the pipeline converts a PDF on what
Terraform made, and what Terraform made is read back and compared with pagefleet/stack.py (the
one definition) and with the local stack. Also `docker/push_image.sh` (`make runner-image`,
`make vllm-image`) against stand-ins for docker, aws and terraform."""

from __future__ import annotations

import importlib.util
import json
import os
import re
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
        self.mirror: Path | None = None

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
    }
    tf = Terraform(workdir, env)
    tf.mirror = mirror
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
    for name in ("storage", "queues", "functions", "runners", "autoscaling", "alarms", "root"):
        assert f"tests/{name}.tftest.hcl... pass" in result.stdout


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


# --- what a user meets first: a plan refused with a message that says what to set ------------

# Each variable is wrong in its own way; one plan reports every refusal (each plan starts the
# provider, about 10 s).
REFUSED_PLAN_VARIABLES = {
    "create_runners": "true",
    "vpc_id": "vpc-0123456789abcdef0",
    "subnet_ids": "[]",
    "gpu_instance_types": '["g6.xlarge","p4d.24xlarge"]',
    "runner_image_tag": "latest",
}
REFUSALS = {
    "runners without subnets": "the GPU runners need subnets: set subnet_ids",
    "a multi-GPU instance type": "p4d.24xlarge has 8 GPUs: a runner task holds one GPU",
    "the latest tag": 'runner_image_tag must not be "latest"',
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
    env = dict(MOTO_CREDENTIALS)
    # The state goes to an S3 backend on the moto server, initialised the way `make deploy`
    # does it (terraform.mk: TF_BACKEND_CONFIG); the apply below then needs no other init.
    state_bucket = f"{name}-state"
    aws.client("s3", Settings(endpoint_url=moto_server.url)).create_bucket(Bucket=state_bucket)
    backend = tmp_path_factory.mktemp("backend") / "moto.s3.tfbackend"
    backend.write_text(
        f'bucket = "{state_bucket}"\n'
        'key = "pagefleet/terraform.tfstate"\n'
        'region = "us-east-1"\n'
        "use_lockfile = true\n"
        "use_path_style = true\n"
        "skip_credentials_validation = true\n"
        "skip_requesting_account_id = true\n"
        "skip_metadata_api_check = true\n"
        "skip_region_validation = true\n"
        f'endpoints = {{ s3 = "{moto_server.url}" }}\n'
    )
    init = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-f",
            str(ROOT / "terraform" / "terraform.mk"),
            "terraform-init",
            f"TF_DIR={terraform.workdir}",
            f"TF_BACKEND_CONFIG={backend}",
            f"TF_PLUGIN_MIRROR={terraform.mirror}",
            f"TF={TERRAFORM}",
        ],
        cwd=ROOT,
        env={**terraform.env, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert init.returncode == 0, init.stdout[-3000:] + init.stderr[-3000:]
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
    values = {k: v["value"] for k, v in outputs.items()}
    return values | {"name": name, "state_bucket": state_bucket}


MOTO_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_REGION": "us-east-1",
}


@needs_terraform
def test_state_is_in_the_s3_backend_make_initialised(
    applied: dict[str, Any], moto_server: MotoServer, terraform: Terraform
) -> None:
    s3 = aws.client("s3", Settings(endpoint_url=moto_server.url))
    state = json.loads(
        s3.get_object(Bucket=applied["state_bucket"], Key="pagefleet/terraform.tfstate")["Body"]
        .read()
        .decode()
    )
    assert any(r["type"] == "aws_sqs_queue" for r in state["resources"])
    assert not (terraform.workdir / "terraform.tfstate").exists()


@needs_terraform
def test_alarms_applied_with_the_stack(applied: dict[str, Any], moto_server: MotoServer) -> None:
    cloudwatch = aws.client("cloudwatch", Settings(endpoint_url=moto_server.url))
    alarms = {
        a["AlarmName"]: a
        for a in cloudwatch.describe_alarms(AlarmNamePrefix=f"{applied['name']}-")["MetricAlarms"]
    }
    name = applied["name"]
    for role in ("ingest", "chunks", "completion"):
        queries = alarms[f"{name}-{role}-dead-letters"]["Metrics"]
        watched = {q["MetricStat"]["Metric"]["MetricName"] for q in queries if "MetricStat" in q}
        assert watched == {
            "NumberOfMessagesReceived",
            "ApproximateNumberOfMessagesVisible",
            "NumberOfMessagesSent",
        }
    for function in ("splitter", "completion", "dead-letter", "upload-dead-letter"):
        assert alarms[f"{name}-{function}-errors"]["MetricName"] == "Errors"
        assert alarms[f"{name}-{function}-throttles"]["MetricName"] == "Throttles"
    assert alarms[f"{name}-oldest-chunk-age"]["MetricName"] == "ApproximateAgeOfOldestMessage"


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
    # Chunks of about 2 pages for one lane, however cheap (the cost planner would keep 5 cheap
    # pages in one chunk).
    settings = _settings(
        moto_server,
        applied,
        chunk_pages=2,
        chunk_min_cost_s=0.0,
        fleet_lanes=1,
        poll_wait_s=1,
        heartbeat_s=2,
    )
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


# --- make runner-image / make vllm-image: docker/push_image.sh against stand-ins ---------------

REPO_URL = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/pf"
STUBS = {
    # `terraform state show` of the repository, as the real one prints it.
    "terraform": """#!/bin/sh
echo "terraform $*" >>"$STUB_LOG"
[ -n "$STUB_NO_STATE" ] && exit 1
case "$*" in *aws_ecr_repository.vllm*) suffix=-vllm ;; *) suffix= ;; esac
printf '# module.runners.aws_ecr_repository.this[0]:\nresource "aws_ecr_repository" "this" {\n'
printf '    repository_url       = "%s%s"\n}\n' "$STUB_REPO_URL" "$suffix"
""",
    "aws": """#!/bin/sh
echo "aws $*" >>"$STUB_LOG"
case "$*" in
  *get-login-password*) echo secret ;;
  *describe-images*) [ -n "$STUB_PUSHED" ] ;;
esac
""",
    "docker": """#!/bin/sh
echo "docker $*" >>"$STUB_LOG"
[ "$1" = login ] && cat >/dev/null
exit 0
""",
}


@pytest.fixture
def push_image(tmp_path: Path) -> Any:
    """Runs docker/push_image.sh with stand-ins for terraform, aws and docker; returns
    (result, log lines, the terraform dir)."""
    bin_dir, tf_dir = tmp_path / "bin", tmp_path / "terraform"
    bin_dir.mkdir()
    tf_dir.mkdir()
    for name, text in STUBS.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "calls.log"

    def run(*args: str, cwd: Path = ROOT, **env: str) -> tuple[Any, list[str], Path]:
        log.write_text("")
        result = subprocess.run(
            ["bash", str(ROOT / "docker" / "push_image.sh"), *args],
            cwd=cwd,
            env={
                **os.environ,
                "PATH": f"{bin_dir}:{os.environ['PATH']}",
                "TF_DIR": str(tf_dir),
                "STUB_LOG": str(log),
                "STUB_REPO_URL": REPO_URL,
                **env,
            },
            capture_output=True,
            text=True,
            timeout=30,
        )
        return result, log.read_text().splitlines(), tf_dir

    return run


def test_runner_image_builds_for_amd64_pushes_the_tag_and_hands_it_to_terraform(
    push_image: Any,
) -> None:
    result, calls, tf_dir = push_image("runner", "0123456789ab")
    assert result.returncode == 0, result.stderr
    assert "aws ecr get-login-password --region eu-west-1" in calls
    registry = REPO_URL.split("/")[0]
    assert f"docker login --username AWS --password-stdin {registry}" in calls
    builds = [c for c in calls if c.startswith("docker buildx build")]
    assert builds == [
        f"docker buildx build --platform linux/amd64 --provenance=false "
        f"-f docker/runner.Dockerfile -t {REPO_URL}:0123456789ab --push ."
    ]
    written = json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text())
    assert written == {"runner_image_tag": "0123456789ab"}


def test_runner_image_already_pushed_is_not_built_again(push_image: Any) -> None:
    result, calls, tf_dir = push_image("runner", "0123456789ab", STUB_PUSHED="1")
    assert result.returncode == 0, result.stderr
    assert not [c for c in calls if c.startswith("docker buildx")]
    assert "already in the repository" in result.stdout
    assert json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text())


def test_runner_image_refuses_latest_and_a_missing_repository(push_image: Any) -> None:
    result, _, tf_dir = push_image("runner", "latest")
    assert result.returncode != 0 and "never used" in result.stderr
    assert not (tf_dir / "runner-image.auto.tfvars.json").exists()
    result, _, _ = push_image("runner", "abc", STUB_NO_STATE="1")
    assert result.returncode != 0 and "make image-repositories" in result.stderr


def test_runner_image_tag_is_the_commit_and_needs_a_clean_tree(
    push_image: Any, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "a.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    result, _, tf_dir = push_image("runner", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert json.loads((tf_dir / "runner-image.auto.tfvars.json").read_text()) == {
        "runner_image_tag": head
    }
    (repo / "a.py").write_text("x = 2\n")
    result, calls, _ = push_image("runner", cwd=repo)
    assert result.returncode != 0 and "uncommitted changes" in result.stderr
    assert not [c for c in calls if c.startswith("docker buildx")]


def test_vllm_image_is_mirrored_into_ecr_under_its_version(push_image: Any) -> None:
    result, calls, tf_dir = push_image("vllm", "vllm/vllm-openai:v0.20.1")
    assert result.returncode == 0, result.stderr
    assert [c for c in calls if c.startswith("docker") and "login" not in c] == [
        "docker pull --platform linux/amd64 vllm/vllm-openai:v0.20.1",
        f"docker tag vllm/vllm-openai:v0.20.1 {REPO_URL}-vllm:v0.20.1",
        f"docker push {REPO_URL}-vllm:v0.20.1",
    ]
    assert json.loads((tf_dir / "vllm-image.auto.tfvars.json").read_text()) == {
        "vllm_image": f"{REPO_URL}-vllm:v0.20.1"
    }
    result, _, _ = push_image("vllm", "vllm/vllm-openai:latest")
    assert result.returncode != 0 and "version tag" in result.stderr


def test_make_mirrors_the_vllm_image_terraform_defaults_to() -> None:
    made = re.search(r"^VLLM_IMAGE \?= (\S+)$", (ROOT / "docker" / "runner.mk").read_text(), re.M)
    default = re.search(
        r'variable "vllm_image" \{.*?default\s+=\s+"([^"]+)"',
        (TF_DIR / "variables.tf").read_text(),
        re.S,
    )
    assert made and default and made.group(1) == default.group(1)
