"""The root module applied against the embedded moto server as `make rehearse` applies it
(rehearsal/apply.py: what moto cannot create, and why), with its state in an S3 backend there
(initialised by `make terraform-init TF_BACKEND_CONFIG=...`). On it the pipeline is rehearsed
from the applied state alone, under the applied IAM policies (rehearsal/run.py), and compared
with the embedded stack; what Terraform made is read back and compared with pagefleet/stack.py
(the one definition) and with the local stack."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from embedded import MotoServer
from embedded.dispatch import Dispatcher, EnvironmentSpec
from embedded.pipeline import FUNCTIONS, LocalPipeline, default_concurrency
from embedded.provision import Stack, create_stack
from pagefleet import aws, stack
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from rehearsal import apply
from rehearsal.deployment import Deployment
from rehearsal.iam import SEEN_SERVICES, Role
from rehearsal.run import RUNNER_LOCAL, Rehearsal, RehearsalFailed
from runner.converters.text_layer import convert_document
from runner.worker_plan import RunnerSettings
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
    """The root module applied to the moto server as `make rehearse` applies it; returns the
    outputs, and what was deployed (:mod:`rehearsal.deployment`)."""
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
    # What `make rehearse` applies (rehearsal/apply.py says what moto cannot create, and why).
    made = apply.deploy(terraform, apply.variables(name, moto_server.url, str(package)))
    # An apply with -target writes only the outputs that depend on a targeted resource: not
    # queue_prefix, which is the name itself (root main.tf: PAGEFLEET_QUEUE_PREFIX).
    return made.outputs | {
        "name": name,
        "queue_prefix": name,
        "state_bucket": state_bucket,
        "deployment": made.deployment,
    }


@pytest.fixture(scope="module")
def deployed(applied: dict[str, Any]) -> Deployment:
    """What the apply made, read from its state, and the runner's task definition from the
    plan made after it (moto refuses it: rehearsal/apply.py)."""
    deployment: Deployment = applied["deployment"]
    return deployment


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


@pytest.fixture(scope="module")
def rehearsal(deployed: Deployment, moto_server: MotoServer) -> Iterator[Rehearsal]:
    """The handlers and the runner run from the applied state alone (rehearsal/run.py)."""
    with Rehearsal(deployed, moto_server.url) as running:
        yield running


@needs_terraform
def test_the_pipeline_rehearsed_on_what_terraform_deployed(
    applied: dict[str, Any],
    deployed: Deployment,
    rehearsal: Rehearsal,
    moto_server: MotoServer,
    tmp_path: Path,
) -> None:
    """Every request through the IAM double as its component's role: an upload becomes the
    Markdown the same converter makes of the whole document in one process (rule 5; `make
    rehearse` compares the corpus's documents with the embedded stack's output), its end is
    announced on the bus Terraform made, and each role's granted-but-unused permissions are
    measured."""
    sqs, subscriber = _subscribe(moto_server, applied["job_event_bus_name"], f"{applied['name']}-s")
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(_pdf(5))
    bucket = Bucket(aws.client("s3", Settings(endpoint_url=moto_server.url)), deployed.bucket)
    outcome = rehearsal.timed(bucket, {"terraform/report": pdf.read_bytes()}, timeout_s=90)
    # The event follows the record's write: awaited by a long poll.
    received = sqs.receive_message(QueueUrl=subscriber, WaitTimeSeconds=20)["Messages"]
    record = outcome.records["terraform/report"]
    assert record.status == "done", record
    assert record.converter == RUNNER_LOCAL["PAGEFLEET_CONVERTER"]
    assert bucket.get("outbox/terraform/report.md").decode() == convert_document(pdf)
    [event] = [json.loads(m["Body"]) for m in received]
    assert event["detail"]["record"] == "outbox/terraform/report.json"
    assert (event["detail"]["job_id"], event["detail"]["status"]) == (record.job_id, "done")
    # The splitter's and the runner's roles signed requests, none denied; what a role was
    # granted and never used is reported, and what it used is not.
    splitter = deployed.functions["splitter"].role
    assert set(outcome.requests) >= {splitter, deployed.runner.role}
    assert outcome.denied == []
    assert not any("SendChunks" in unused for unused in outcome.unused.get(splitter, []))
    assert all(
        action.split(": ")[1].split(":")[0] in SEEN_SERVICES
        for unused in outcome.unused.values()
        for action in unused
    )


@needs_terraform
def test_a_statement_removed_from_a_role_fails_the_rehearsal_naming_it(
    deployed: Deployment, rehearsal: Rehearsal, moto_server: MotoServer
) -> None:
    """The splitter's role without SendChunks: the rehearsal fails at its first send, naming
    the role, the action and the statement of the applied policy that grants it."""
    splitter = deployed.functions["splitter"].role
    policy = copy.deepcopy(deployed.policies[splitter])
    policy["Statement"] = [s for s in policy["Statement"] if s["Sid"] != "SendChunks"]
    bucket = Bucket(aws.client("s3", Settings(endpoint_url=moto_server.url)), deployed.bucket)
    rehearsal.double.roles[splitter] = Role(splitter, policy)
    try:
        with pytest.raises(RehearsalFailed) as failed:
            rehearsal.convert(bucket, {"terraform/denied": _pdf(1)}, timeout_s=60)
    finally:
        rehearsal.double.roles[splitter] = Role(splitter, deployed.policies[splitter])
    assert f"{splitter} may not sqs:" in str(failed.value)
    assert "the rehearsed policy lacks statement SendChunks" in str(failed.value)


# --- drift: what the embedded stack and Terraform both set -------------------------------------

# The deployment's own names, compared with the state by the tests above.
_NAMES = {"bucket", "queue_prefix", "region", "event_bus", "endpoint_url"}
# Where Terraform and the embedded stack differ on purpose, both values pinned: a setting
# changed on one side only fails the drift test until it is changed on the other too, or
# recorded here with its reason.
_CHOSEN: dict[tuple[str, str], tuple[Any, Any]] = {
    # The splitter plans chunks for the fleet's converter and lanes (spread_tasks x
    # workers_per_gpu); the embedded runner converts on the CPU, one lane per worker.
    ("functions", "converter"): ("marker", "text-layer"),
    ("functions", "fleet_lanes"): (2, 0),
    ("runner", "converter"): ("marker", "text-layer"),
    # One GPU's workers (the 2 the runner sizes on a .2xlarge, pinned) and its MPS daemon and
    # vLLM sidecar; locally one worker per core, sized by the runner.
    ("runner", "workers"): (2, 0),
    ("runner", "workers_per_gpu"): (2, 0),
    ("runner", "mps"): ("on", "auto"),
    ("runner", "marker_inference_url"): ("http://vllm:8000/v1", None),
    ("runner", "marker_vllm_gpu_type"): ("l4", None),
    # ECS's stopTimeout (drain + 15 s); the embedded stack stops its runner itself.
    ("runner", "stop_timeout_s"): (40.0, 30.0),
    # Lambda scales each mapping up to its maximum concurrency; the embedded stack to a few
    # processes, no more than the machine's cores.
    ("splitter", "concurrency"): (10, default_concurrency()["splitter"]),
    ("completion", "concurrency"): (5, default_concurrency()["completion"]),
    ("upload-dead-letters", "concurrency"): (2, 1),
    ("chunk-dead-letters", "concurrency"): (2, 1),
    ("completion-dead-letters", "concurrency"): (2, 1),
}


def _parsed(env: dict[str, str]) -> dict[str, Any]:
    """The PAGEFLEET_* settings of ``env`` as the handlers and the runner read them (by
    field), less the deployment's names; a name neither settings model knows fails here."""
    fields: dict[str, Any] = {}
    for name, value in env.items():
        if not name.startswith("PAGEFLEET_"):
            continue
        field = name.removeprefix("PAGEFLEET_").lower()
        model = Settings if field in Settings.model_fields else RunnerSettings
        assert field in model.model_fields, f"{name} is no setting of the handlers or the runner"
        if field not in _NAMES:
            fields[field] = getattr(model.model_validate({field: value}), field)
    return fields


def _defaults(fields: dict[str, Any], local: Settings) -> dict[str, Any]:
    runner = RunnerSettings()
    return {f: getattr(local if f in Settings.model_fields else runner, f) for f in fields}


@needs_terraform
def test_what_the_embedded_stack_and_terraform_both_set_agrees(
    applied: dict[str, Any], deployed: Deployment, moto_server: MotoServer
) -> None:
    """Function environments, the runner task's environment, and each event source mapping
    (handler, queue, batch size and window, ReportBatchItemFailures, timeout, concurrency)
    as applied, against what the embedded stack gives its functions, its runner and its
    dispatcher; queues and notifications are compared by the tests above."""
    made = _embedded_stack(moto_server, applied, "d")
    pipeline = LocalPipeline(made.settings, server=moto_server, stack=made)
    local = pipeline.function_settings
    differ: dict[tuple[str, str], tuple[Any, Any]] = {}

    def compare(side: str, applied_values: dict[str, Any], embedded: dict[str, Any]) -> None:
        for name, value in applied_values.items():
            if value != embedded[name]:
                differ[(side, name)] = (value, embedded[name])

    for function in deployed.functions.values():
        fields = _parsed(function.environment)
        compare("functions", fields, _defaults(fields, local))
    fields = _parsed(deployed.runner.environment)
    compare("runner", fields, _defaults(fields, local))

    # The embedded stack's event source mappings, made as it makes them (not started).
    dispatcher = Dispatcher(made.sqs, local.region)
    pipeline._map_functions(dispatcher, made)
    pipeline.logs.close()
    by_handler = {f.handler: f for f in deployed.functions.values()}
    for name, mapping in dispatcher._mappings.items():
        role, dead_letters, entry_point, _ = FUNCTIONS[name]
        function = by_handler[entry_point.replace(":", ".")]
        applied_mapping = deployed.mappings[function.key]
        queue = deployed.queue(applied_mapping.source_arn).name
        assert isinstance(mapping.handler, EnvironmentSpec)
        compare(
            name,
            {
                "queue": queue.removeprefix(f"{applied['name']}-"),
                "batch_size": applied_mapping.batch_size,
                "batching_window_s": applied_mapping.batching_window_s,
                "report_failures": applied_mapping.report_failures,
                "timeout_s": function.timeout_s,
                "concurrency": applied_mapping.maximum_concurrency,
            },
            {
                "queue": f"{role}-dlq" if dead_letters else role,
                "batch_size": mapping.batch_size,
                "batching_window_s": mapping.batching_window_s,
                "report_failures": mapping.report_failures,
                "timeout_s": mapping.handler.timeout_s,
                "concurrency": mapping.concurrency,
            },
        )
    assert len(dispatcher._mappings) == len(deployed.mappings)
    assert differ == _CHOSEN
