"""What the rehearsal applies to a moto server, and how.

The root module with every part moto can create, the runners included as far as moto goes:

- applied: storage (bucket, key, notifications, policies), queues and DLQs (with their
  policies), the five functions with their roles, log groups and event source mappings (created
  disabled: moto would run each function in Docker on every message; the rehearsal polls as
  each mapping says instead), the job event bus, the alarms, and of the runners: the ECR
  repositories, the ECS cluster, log group, the task and execution roles with their policies and
  the task definition (what the runner is started with).
- not applied: the runners' fleet (launch template, Auto Scaling group, security group,
  capacity provider, ECS service): it needs the ECS GPU AMI's SSM parameter, a VPC with
  subnets and EC2 capacity behind a capacity provider, none of which a moto server has; the
  dashboard, which names that Auto Scaling group; and module.autoscaling, whose Application
  Auto Scaling resources hang on moto (its tagging call is not implemented).
"""

from __future__ import annotations

# Resource addresses passed as -target: their dependencies come along (the functions bring
# the queues and storage, the task definition brings its roles, repositories and log group).
TARGETS = (
    "module.storage",
    "module.queues",
    "module.functions",
    "aws_cloudwatch_event_bus.jobs",
    "module.alarms",
    "module.runners.aws_ecs_task_definition.this",
    "module.runners.aws_iam_role_policy.task",
    "module.runners.aws_iam_role_policy.execution",
)


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
