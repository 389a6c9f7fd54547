"""What the rehearsal applies to a moto server, and how.

The root module with every part moto can create, the runners included as far as moto goes:

- applied: storage (bucket, key, notifications, policies), queues and DLQs (with their
  policies), the five functions with their roles, log groups and event source mappings (created
  disabled: moto would run each function in Docker on every message; the rehearsal polls as
  each mapping says instead), the job event bus, the alarms, and of the runners: the ECR
  repositories, the ECS cluster, log group, and the task and execution roles with their
  policies.
- planned only: the runners' task definition (what the runner is started with). moto 5.2.x
  refuses an EC2 task definition whose containers set ``memoryReservation`` without a hard
  ``memory`` and no task-level memory (moto/ecs/models.py ``_validate_container_defs``), which
  AWS accepts ("memoryReservation", Amazon ECS task definition parameters); it is read from a
  plan made after the apply, when the repository URLs it names are known.
- not applied: the runners' fleet (launch template, Auto Scaling group, security group,
  capacity provider, ECS service): it needs the ECS GPU AMI's SSM parameter, a VPC with
  subnets and EC2 capacity behind a capacity provider, none of which a moto server has; the
  dashboard, which names that Auto Scaling group; and module.autoscaling, whose Application
  Auto Scaling resources hang on moto (its tagging call is not implemented).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from rehearsal.deployment import Deployment, read
from rehearsal.terraform import MOTO_CREDENTIALS, Terraform, one_provider_process

# Resource addresses passed as -target: their dependencies come along (the functions bring
# the queues and storage, the task definition brings its roles, repositories and log group).
TARGETS = (
    "module.storage",
    "module.queues",
    "module.functions",
    "aws_cloudwatch_event_bus.jobs",
    "module.alarms",
    "module.runners.aws_ecr_repository.this",
    "module.runners.aws_ecr_repository.vllm",
    "module.runners.aws_ecs_cluster.this",
    "module.runners.aws_iam_role_policy.task",
    "module.runners.aws_iam_role_policy.execution",
)

# Planned after the apply: its container definitions are known once the repositories exist.
PLANNED = "module.runners.aws_ecs_task_definition.this"


def variables(name: str, endpoint_url: str, package_path: str) -> dict[str, str]:
    """The root module's variables for an apply to the moto server at ``endpoint_url``."""
    return {
        "name": name,
        "bucket_name": f"{name}-bucket",
        "endpoint_url": endpoint_url,
        "lambda_package_path": package_path,
        # The runners' task definition and roles are applied (TARGETS); the fleet is not, so
        # the VPC and subnets only satisfy the variables' validation.
        "create_runners": "true",
        "vpc_id": "vpc-0abc",
        "subnet_ids": '["subnet-0abc"]',
        # Any tag: the task definition names the image; nothing pulls it.
        "runner_image_tag": "rehearsal",
        "create_autoscaling": "false",
        "create_dashboard": "false",
        "event_source_mapping_enabled": "false",
        "force_destroy": "true",
        "ecr_force_delete": "true",
        # moto 5.2.5 evaluates the TLS-only Deny (aws:SecureTransport, unknown to it) as a deny
        # of every request; the rehearsal's IAM double evaluates the queues' TLS-only policies
        # instead, and storage.tftest.hcl pins the bucket's.
        "s3_deny_insecure_transport": "false",
    }


def apply_args(values: dict[str, str]) -> list[str]:
    return [
        "apply",
        "-auto-approve",
        "-input=false",
        "-no-color",
        *[f"-target={t}" for t in TARGETS],
        *[f"-var={k}={v}" for k, v in values.items()],
    ]


def plan_args(values: dict[str, str], out: str) -> list[str]:
    return [
        "plan",
        "-input=false",
        "-no-color",
        # The apply has just written the state it would refresh.
        "-refresh=false",
        f"-target={PLANNED}",
        f"-out={out}",
        *[f"-var={k}={v}" for k, v in values.items()],
    ]


@dataclass
class Applied:
    deployment: Deployment
    outputs: dict[str, Any]  # the root module's, by name
    apply_s: float
    plan_s: float


def deploy(tf: Terraform, values: dict[str, str]) -> Applied:
    """Apply ``values`` with :data:`TARGETS` from ``tf``'s initialised copy of terraform/,
    then plan :data:`PLANNED`; what the state and the plan say was deployed. Every command
    talks to one provider process (each start builds the provider's schema)."""
    with one_provider_process(tf, MOTO_CREDENTIALS):
        started = time.monotonic()
        tf(*apply_args(values), timeout_s=600, env=MOTO_CREDENTIALS)
        state: dict[str, Any] = json.loads(tf("show", "-json", env=MOTO_CREDENTIALS).stdout)
        outputs = json.loads(tf("output", "-json", env=MOTO_CREDENTIALS).stdout)
        applied_s = time.monotonic() - started
        started = time.monotonic()
        tf(*plan_args(values, "rehearsal.plan"), timeout_s=300, env=MOTO_CREDENTIALS)
        plan = json.loads(tf("show", "-json", "rehearsal.plan", env=MOTO_CREDENTIALS).stdout)
    return Applied(
        read(state, plan),
        {name: output["value"] for name, output in outputs.items()},
        applied_s,
        time.monotonic() - started,
    )
