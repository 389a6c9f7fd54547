"""What a deploy needs of an AWS account, asked read-only before ``terraform apply``: each
check says what it found and, where it falls short, the one thing to do about it.

A new account lets ``terraform apply`` succeed and then runs nothing: no GPU instance launches
on a quota of 0 vCPUs (``runner_kind = "cpu"`` runs Fargate tasks instead, on the account's
Fargate vCPU quota), a Lambda reservation fails the apply on a concurrency quota of 10, the
capacity provider needs ECS's service-linked role, a runner subnet without a route out never
downloads the OCR model, a task never starts without its image. Every one of these is a
question the account answers in a second; raising a GPU quota takes hours to days, so the
answers are worth having first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_ec2.literals import InstanceTypeType
    from mypy_boto3_ecr import ECRClient
    from mypy_boto3_iam import IAMClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_service_quotas import ServiceQuotasClient
    from mypy_boto3_ssm import SSMClient

# The ECS-optimized AL2023 GPU AMIs (NVIDIA driver and container toolkit included), by release
# or "recommended": terraform/main.tf builds the runners' parameter the same way.
GPU_AMIS = "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu"
ECS_SERVICE_LINKED_ROLE = "AWSServiceRoleForECS"
# Lambda keeps this much of the account's concurrency unreserved; a reservation below it fails.
LAMBDA_UNRESERVED_FLOOR = 100


class Quota(NamedTuple):
    """A vCPU quota of Service Quotas, in vCPUs."""

    code: str
    name: str
    service: str = "ec2"


# By instance family: G and VT share one quota per purchase option, P another.
_QUOTAS: dict[str, dict[Literal["on-demand", "spot"], Quota]] = {
    "g": {
        "on-demand": Quota("L-DB2E81BA", "Running On-Demand G and VT instances"),
        "spot": Quota("L-3819A6DF", "All G and VT Spot Instance Requests"),
    },
    "p": {
        "on-demand": Quota("L-417A185B", "Running On-Demand P instances"),
        "spot": Quota("L-7212CCBC", "All P Spot Instance Requests"),
    },
}


# The CPU runners' Fargate tasks run on demand against this quota (service code fargate, as the
# Service Quotas console lists it). "New AWS accounts might have initial lower quotas"
# (docs.aws.amazon.com/AmazonECS/latest/developerguide/service-quotas.html). Fargate Spot has
# its own (L-36FBB829), which the runners do not use.
FARGATE_ON_DEMAND = Quota("L-3032A538", "Fargate On-Demand vCPU resource count", "fargate")
# vCPUs of one CPU runner task: terraform/modules/runners/cpu_task.json's cpu / 1024 (a test
# holds the two equal).
FARGATE_TASK_VCPUS = 2


class Planned(BaseModel):
    """The root module's variables that decide what the account must have (their names and
    defaults are terraform/variables.tf's)."""

    region: str
    name: str = "pagefleet"
    create_runners: bool = True
    runner_kind: Literal["gpu", "cpu"] = "gpu"
    gpu_instance_types: list[str] = Field(
        default_factory=lambda: ["g6.2xlarge", "g5.2xlarge", "g6e.2xlarge"]
    )
    max_runners: int | None = None  # None: the scaling policy's
    on_demand_base_capacity: int = 0
    on_demand_percentage_above_base_capacity: int = 0
    subnet_ids: list[str] = Field(default_factory=list)
    runner_image_tag: str | None = None
    lambda_reserved_concurrency: dict[str, int] | None = None
    create_ecs_service_linked_role: bool = False
    gpu_ami_release: str = "al2023-ami-ecs-gpu-hvm-2023.0.20260922-kernel-6.1-x86_64-ebs"

    @classmethod
    def from_terraform_plan(cls, plan_json: str) -> Planned:
        """From ``terraform show -json PLANFILE``: its ``variables``, each ``{"value": ...}``."""
        variables = json.loads(plan_json)["variables"]
        given = {name: v["value"] for name, v in variables.items() if v.get("value") is not None}
        return cls.model_validate({k: v for k, v in given.items() if k in cls.model_fields})

    @classmethod
    def from_terraform_outputs(cls, outputs_json: str) -> Planned:
        """From ``terraform output -json`` of a deployment: its ``preflight`` output."""
        return cls.model_validate(json.loads(outputs_json)["preflight"]["value"])

    def runner_instances(self, max_runners: int) -> dict[Literal["on-demand", "spot"], int]:
        """The instances a full fleet holds, by purchase option, as the Auto Scaling group's
        instances distribution splits them."""
        base = min(self.on_demand_base_capacity, max_runners)
        above = max_runners - base
        on_demand = base + math.ceil(above * self.on_demand_percentage_above_base_capacity / 100)
        return {"on-demand": on_demand, "spot": max_runners - on_demand}


class Check(NamedTuple):
    """One answer: ``ok`` None when the account could not be asked."""

    name: str
    ok: bool | None
    found: str
    fix: str = ""


def gpu_quota_check(
    option: Literal["on-demand", "spot"],
    family: str,
    instances: int,
    vcpus: int,
    quota_response: Mapping[str, Any],
    region: str,
) -> Check:
    """``quota_response``: Service Quotas' GetServiceQuota answer for the family's quota."""
    return vcpu_quota_check(
        f"{option} {family.upper()} vCPUs",
        _QUOTAS[family][option],
        instances,
        vcpus,
        quota_response,
        region,
        'new accounts: hours to days; meanwhile runner_kind = "cpu" converts on Fargate',
    )


def fargate_quota_check(tasks: int, quota_response: Mapping[str, Any], region: str) -> Check:
    """The CPU runners' full fleet against the Fargate on-demand vCPU quota
    (``quota_response``: GetServiceQuota's answer for :data:`FARGATE_ON_DEMAND`)."""
    return vcpu_quota_check(
        "Fargate vCPUs",
        FARGATE_ON_DEMAND,
        tasks,
        FARGATE_TASK_VCPUS,
        quota_response,
        region,
        "or lower max_runners",
    )


def vcpu_quota_check(
    name: str,
    quota: Quota,
    count: int,
    vcpus: int,
    quota_response: Mapping[str, Any],
    region: str,
    note: str,
) -> Check:
    """``count`` instances or tasks of ``vcpus`` each against ``quota``."""
    have = int(quota_response["Quota"]["Value"])
    need = count * vcpus
    found = f"{quota.name} ({quota.code}): {have} vCPUs, {need} needed for {count} x {vcpus}"
    if have >= need:
        return Check(name, True, found)
    fix = (
        f"aws service-quotas request-service-quota-increase --region {region} --service-code "
        f"{quota.service} --quota-code {quota.code} --desired-value {need}  ({note})"
    )
    return Check(name, False, found, fix)


def lambda_concurrency_check(
    settings_response: Mapping[str, Any], reservations: Mapping[str, int] | None
) -> Check:
    """``settings_response``: Lambda's GetAccountSettings answer. A reservation must leave
    :data:`LAMBDA_UNRESERVED_FLOOR` of the account's concurrency unreserved."""
    limit = settings_response["AccountLimit"]
    total, unreserved = limit["ConcurrentExecutions"], limit["UnreservedConcurrentExecutions"]
    planned = sum(r for r in (reservations or {}).values() if r > 0)
    found = f"account concurrency {total}, {unreserved} unreserved; {planned} to reserve"
    if unreserved - planned >= LAMBDA_UNRESERVED_FLOOR or planned == 0:
        return Check("Lambda concurrency", True, found)
    return Check(
        "Lambda concurrency",
        False,
        found,
        f"reserve at most {max(unreserved - LAMBDA_UNRESERVED_FLOOR, 0)} in all "
        "(lambda_reserved_concurrency = null reserves none), or request a higher "
        "'Concurrent executions' quota (service code lambda, L-B99A9384)",
    )


def service_linked_role_check(iam: IAMClient, planned: Planned) -> Check:
    name = "ECS service-linked role"
    try:
        iam.get_role(RoleName=ECS_SERVICE_LINKED_ROLE)
    except ClientError as exc:
        if _code(exc) != "NoSuchEntity":
            raise
        if planned.create_ecs_service_linked_role:
            return Check(name, True, "absent; create_ecs_service_linked_role = true creates it")
        if planned.runner_kind == "cpu":
            # Only a capacity provider, which Fargate runners have none of, needs it before
            # ECS makes it: CreateCluster creates it for a caller that may
            # (docs.aws.amazon.com/AmazonECS/latest/APIReference/API_CreateCluster.html).
            return Check(
                name,
                True,
                f"{ECS_SERVICE_LINKED_ROLE} absent; the cluster's creation makes it (the CPU "
                "runners need no capacity provider)",
                "the deploying identity needs iam:CreateServiceLinkedRole",
            )
        return Check(
            name,
            False,
            f"{ECS_SERVICE_LINKED_ROLE} absent (an account that never used ECS)",
            "set create_ecs_service_linked_role = true, or run `aws iam "
            "create-service-linked-role --aws-service-name ecs.amazonaws.com`",
        )
    if planned.create_ecs_service_linked_role:
        return Check(
            name,
            False,
            f"{ECS_SERVICE_LINKED_ROLE} exists, and the plan creates it again (refused)",
            "set create_ecs_service_linked_role = false",
        )
    return Check(name, True, f"{ECS_SERVICE_LINKED_ROLE} exists")


def egress_checks(ec2: EC2Client, subnet_ids: Iterable[str]) -> list[Check]:
    """Each runner subnet reaches the internet: the OCR model server downloads its model from
    Hugging Face on an instance's first task, so VPC endpoints alone are not enough."""
    ids = list(subnet_ids)
    if not ids:
        return [Check("runner subnets", False, "none planned", "set subnet_ids (and vpc_id)")]
    subnets = {s["SubnetId"]: s for s in ec2.describe_subnets(SubnetIds=ids)["Subnets"]}
    checks = []
    for subnet_id in ids:
        subnet = subnets[subnet_id]
        routes = _default_routes(ec2, subnet_id, subnet["VpcId"])
        name = f"egress of {subnet_id}"
        if any(r.get("NatGatewayId") for r in routes):
            checks.append(Check(name, True, "a route to a NAT gateway"))
        elif any(str(r.get("GatewayId", "")).startswith("igw-") for r in routes):
            if subnet.get("MapPublicIpOnLaunch"):
                checks.append(Check(name, True, "a route to an internet gateway, public IPs"))
            else:
                checks.append(
                    Check(
                        name,
                        False,
                        "a route to an internet gateway, but instances get no public IP",
                        "use a private subnet with a NAT gateway",
                    )
                )
        else:
            checks.append(
                Check(
                    name,
                    False,
                    "no route to 0.0.0.0/0",
                    "add a NAT gateway and a 0.0.0.0/0 route to it in the subnet's route table",
                )
            )
    return checks


def _default_routes(ec2: EC2Client, subnet_id: str, vpc_id: str) -> list[Mapping[str, Any]]:
    """The 0.0.0.0/0 routes of the subnet's route table: its own, or else its VPC's main one."""
    tables = ec2.describe_route_tables(
        Filters=[{"Name": "association.subnet-id", "Values": [subnet_id]}]
    )["RouteTables"]
    if not tables:
        tables = ec2.describe_route_tables(
            Filters=[
                {"Name": "vpc-id", "Values": [vpc_id]},
                {"Name": "association.main", "Values": ["true"]},
            ]
        )["RouteTables"]
    return [
        route
        for table in tables
        for route in table.get("Routes", [])
        if route.get("DestinationCidrBlock") == "0.0.0.0/0" and route.get("State") != "blackhole"
    ]


def image_check(ecr: ECRClient, planned: Planned) -> Check:
    name, repository = "runner image", planned.name
    if not planned.runner_image_tag:
        return Check(name, False, "no runner_image_tag planned", "run `make runner-image`")
    where = f"{repository}:{planned.runner_image_tag}"
    try:
        ecr.describe_images(
            repositoryName=repository, imageIds=[{"imageTag": planned.runner_image_tag}]
        )
    except ClientError as exc:
        if _code(exc) not in ("ImageNotFoundException", "RepositoryNotFoundException"):
            raise
        # The repository is Terraform's: a first apply with create_runners = false makes it.
        return Check(
            name,
            False,
            f"{where} not in ECR ({_code(exc)})",
            "`make runner-image` pushes it (the repository exists after a first apply)",
        )
    return Check(name, True, f"{where} in ECR")


def ami_check(ssm: SSMClient, ec2: EC2Client, release: str) -> Check:
    """The AMI release the runners launch, and whether AWS recommends a newer one (the name of
    a release dates it; its release notes give the NVIDIA driver it ships)."""
    name = "GPU AMI"
    parameter = f"{GPU_AMIS}/{release}/image_id"
    try:
        image_id = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
        latest = ssm.get_parameter(Name=f"{GPU_AMIS}/recommended/image_name")["Parameter"]["Value"]
    except ClientError as exc:
        if _code(exc) != "ParameterNotFound":
            raise
        return Check(
            name, False, f"{parameter} not found", "set gpu_ami_release to a release AWS publishes"
        )
    if not ec2.describe_images(ImageIds=[image_id])["Images"]:
        return Check(name, False, f"{image_id} (from {parameter}) not found", "check the region")
    pinned = latest if release == "recommended" else release
    if pinned == latest:
        return Check(name, True, f"{pinned} ({image_id}), AWS's latest")
    return Check(
        name,
        True,
        f"{pinned} ({image_id}); AWS's latest is {latest}",
        f'to upgrade: gpu_ami_release = "{latest}", then apply',
    )


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class Account(NamedTuple):
    """The clients preflight asks, all of one region."""

    ec2: EC2Client
    iam: IAMClient
    ecr: ECRClient
    ssm: SSMClient
    quotas: ServiceQuotasClient
    lambdas: LambdaClient


def asked(name: str, ask: Callable[[], Check | list[Check]]) -> list[Check]:
    """``ask``'s checks; one that the account refused to answer (no permission) says so."""
    try:
        answer = ask()
    except ClientError as exc:
        error = exc.response.get("Error", {})
        return [
            Check(
                name,
                None,
                f"could not ask: {exc.operation_name}: {error.get('Code')}",
                "run preflight with credentials that may read it (ReadOnlyAccess does)",
            )
        ]
    return answer if isinstance(answer, list) else [answer]


def preflight(account: Account, planned: Planned, max_runners: int) -> list[Check]:
    """Every check of ``planned`` against the account, in the order a deploy meets them."""
    checks = asked(
        "Lambda concurrency",
        lambda: lambda_concurrency_check(
            account.lambdas.get_account_settings(), planned.lambda_reserved_concurrency
        ),
    )
    if not planned.create_runners:
        return checks
    checks += asked(
        "ECS service-linked role", lambda: service_linked_role_check(account.iam, planned)
    )
    if planned.runner_kind == "cpu":
        checks += asked(
            "Fargate quota",
            lambda: fargate_quota_check(
                max_runners,
                account.quotas.get_service_quota(
                    ServiceCode=FARGATE_ON_DEMAND.service, QuotaCode=FARGATE_ON_DEMAND.code
                ),
                planned.region,
            ),
        )
    else:
        checks += asked("GPU quotas", lambda: _quota_checks(account, planned, max_runners))
    checks += asked("runner subnets", lambda: egress_checks(account.ec2, planned.subnet_ids))
    checks += asked("runner image", lambda: image_check(account.ecr, planned))
    if planned.runner_kind == "gpu":
        checks += asked(
            "GPU AMI", lambda: ami_check(account.ssm, account.ec2, planned.gpu_ami_release)
        )
    return checks


def _quota_checks(account: Account, planned: Planned, max_runners: int) -> list[Check]:
    named = cast("list[InstanceTypeType]", planned.gpu_instance_types)  # validated by Terraform
    types = account.ec2.describe_instance_types(InstanceTypes=named)["InstanceTypes"]
    vcpus: dict[str, int] = {t["InstanceType"]: t["VCpuInfo"]["DefaultVCpus"] for t in types}
    checks = []
    for family in sorted({_family(t) for t in planned.gpu_instance_types}):
        # The largest of the family's types: the group may launch any of them.
        most = max(vcpus[t] for t in planned.gpu_instance_types if _family(t) == family)
        for option, instances in planned.runner_instances(max_runners).items():
            if instances == 0:
                continue
            quota = _QUOTAS[family][option]
            response = account.quotas.get_service_quota(ServiceCode="ec2", QuotaCode=quota.code)
            checks.append(
                gpu_quota_check(option, family, instances, most, response, planned.region)
            )
    return checks


def _family(instance_type: str) -> str:
    """``g6.xlarge`` -> ``g``; VT instances share G's quotas."""
    letter = instance_type[0]
    return "g" if letter in ("g", "v") else letter
