"""An apply of storage + queues + functions + alarms against the embedded moto server, with its
state in an S3 backend there (initialised by `make terraform-init TF_BACKEND_CONFIG=...`), after
which the pipeline converts a PDF on what Terraform made (and announces it on the job event bus
Terraform made), and what Terraform made is read back and compared with pagefleet/stack.py (the
one definition) and with the local stack."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import boto3
import pytest

from embedded import MotoServer
from embedded.pipeline import LocalPipeline
from embedded.provision import Stack, create_stack
from pagefleet import aws, stack
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import upload
from tests.conftest import wait_for_record
from tests.terraform_support import (
    MOTO_CREDENTIALS,
    ROOT,
    TERRAFORM,
    Terraform,
    initialised,
    needs_terraform,
)


@pytest.fixture(scope="module")
def terraform(tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return initialised(tmp_path_factory)


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
    # pagefleet's own code talks to S3 and SQS only; the alarms are read with a plain client.
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1", endpoint_url=moto_server.url)
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
    for function in (
        "splitter",
        "completion",
        "dead-letter",
        "upload-dead-letter",
        "completion-dead-letter",
    ):
        assert alarms[f"{name}-{function}-errors"]["MetricName"] == "Errors"
        assert alarms[f"{name}-{function}-throttles"]["MetricName"] == "Throttles"
    ages = [f"{name}-oldest-chunk-age"] + [
        f"{name}-{role}-oldest-message-age" for role in ("ingest", "completion")
    ]
    assert {alarms[age]["MetricName"] for age in ages} == {"ApproximateAgeOfOldestMessage"}


def _settings(moto_server: MotoServer, applied: dict[str, Any], **extra: Any) -> Settings:
    return Settings(
        endpoint_url=moto_server.url,
        bucket=applied["bucket_name"],
        queue_prefix=applied["queue_prefix"],
        **extra,
    )


def _embedded_stack(moto_server: MotoServer, applied: dict[str, Any], tag: str) -> Stack:
    """What `pagefleet up` makes from the same definition, beside what Terraform made."""
    name = f"{applied['name']}{tag}"
    return create_stack(
        Settings(endpoint_url=moto_server.url, queue_prefix=name, bucket=f"{name}-local")
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
        rules.add((role, filters["prefix"], filters.get("suffix", ""), tuple(sorted(q["Events"]))))
    return rules


@needs_terraform
def test_queues_read_back_equal_the_stack_definition_and_the_embedded_stack(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    settings = _settings(moto_server, applied)
    sqs = aws.client("sqs", settings)
    local = _embedded_stack(moto_server, applied, "l")
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
        # What Terraform adds beyond the definition: encryption, and DLQs that keep messages at
        # least as long as their sources (a DLQ counts a message's age from its first enqueue).
        assert got["KmsMasterKeyId"] == applied["kms_key_arn"]
        assert int(got_dlq["MessageRetentionPeriod"]) >= int(got["MessageRetentionPeriod"])


@needs_terraform
def test_notifications_read_back_equal_the_stack_definition_and_the_embedded_stack(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    settings = _settings(moto_server, applied)
    s3 = aws.client("s3", settings)
    wanted = {
        (n.queue_role, n.prefix, n.suffix, tuple(sorted(n.events)))
        for n in stack.notification_specs()
    }
    assert _notification_rules(s3, applied["bucket_name"]) == wanted
    local = _embedded_stack(moto_server, applied, "n")
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


def _subscribe(moto_server: MotoServer, bus: str, name: str) -> tuple[Any, str]:
    """A queue that a rule on ``bus`` sends pagefleet's job-end events to, as a user
    subscribes (terraform/modules/functions/README.md); returns the SQS client and its URL."""
    events = boto3.client("events", region_name="us-east-1", endpoint_url=moto_server.url)
    sqs = aws.client("sqs", Settings(endpoint_url=moto_server.url))
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    events.put_rule(Name=name, EventBusName=bus, EventPattern='{"source": ["pagefleet"]}')
    arn = _attributes(sqs, url)["QueueArn"]
    events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "queue", "Arn": arn}])
    return sqs, url


@needs_terraform
def test_pipeline_converts_a_pdf_on_the_resources_terraform_made(
    applied: dict[str, Any], moto_server: MotoServer
) -> None:
    # What Terraform tells the completion function: the bus it made for job-end events ...
    lambda_ = boto3.client("lambda", region_name="us-east-1", endpoint_url=moto_server.url)
    configured = lambda_.get_function_configuration(
        FunctionName=applied["lambda_function_names"]["completion"]
    )["Environment"]["Variables"]
    assert configured["PAGEFLEET_EVENT_BUS"] == applied["job_event_bus_name"]
    # ... and lets it put events there: the ARN its policy names is the bus's.
    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=moto_server.url)
    role = f"{applied['name']}-us-east-1-completion"
    policy = iam.get_role_policy(RoleName=role, PolicyName="pagefleet")["PolicyDocument"]
    [put] = [s for s in policy["Statement"] if s["Sid"] == "PutJobEvents"]
    assert put["Resource"] == [applied["job_event_bus_arn"]]
    sqs, subscriber = _subscribe(moto_server, applied["job_event_bus_name"], f"{applied['name']}-s")
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
        event_bus=configured["PAGEFLEET_EVENT_BUS"],
    )
    made = _stack_from_terraform(settings, applied)
    bucket = Bucket(made.s3, settings.bucket)
    with LocalPipeline(settings, workers=1, server=moto_server, stack=made):
        # Upper-case suffix: only the notification rules Terraform set can route it.
        upload(bucket, "terraform/report", _pdf(5), suffix=".PDF")
        record = wait_for_record(bucket, "terraform/report", timeout_s=90)
        # The event follows the record's write: awaited by a long poll.
        received = sqs.receive_message(QueueUrl=subscriber, WaitTimeSeconds=20)["Messages"]
    assert record.status == "done", record
    assert record.pages == 5 and len(record.chunks) == 3
    markdown = bucket.get("outbox/terraform/report.md").decode()
    for page in range(1, 6):
        assert f"Page {page} of the terraform deployment test." in markdown
    [event] = [json.loads(m["Body"]) for m in received]
    assert event["detail"]["record"] == "outbox/terraform/report.json"
    assert (event["detail"]["job_id"], event["detail"]["status"]) == (record.job_id, "done")
