"""`pagefleet preflight` against a moto server over HTTP: a new account's every missing piece on
a line with its fix, and a ready account passing.

moto serves EC2, IAM, ECR and SSM (the ECS GPU AMI's public parameter and its image included),
but not Service Quotas' EC2 quotas nor Lambda's GetAccountSettings: those two are answered in
front of it, over the same HTTP, with the response documents of AWS's API references
(docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html, whose
CLI example fills in the fields; docs.aws.amazon.com/lambda/latest/api/API_GetAccountSettings.html).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from cli import main
from embedded.server import MotoServer
from pagefleet.preflight import (
    ECS_SERVICE_LINKED_ROLE,
    FARGATE_TASK_VCPUS,
    GPU_AMIS,
    Planned,
    ami_check,
)
from tests.fault_proxy import LoopbackProxy, ProxyHandler

ROOT = Path(__file__).resolve().parents[1]
REGION = "us-east-1"
_names = itertools.count()


_SERVICE_NAMES = {"ec2": "Amazon Elastic Compute Cloud (Amazon EC2)", "fargate": "AWS Fargate"}


def _quota(code: str, name: str, value: float, service: str = "ec2") -> dict[str, Any]:
    return {
        "Quota": {
            "ServiceCode": service,
            "ServiceName": _SERVICE_NAMES[service],
            "QuotaArn": f"arn:aws:servicequotas:{REGION}:123456789012:{service}/{code}",
            "QuotaCode": code,
            "QuotaName": name,
            "Value": value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
        }
    }


def _account_settings(total: int, unreserved: int) -> dict[str, Any]:
    return {
        "AccountLimit": {
            "TotalCodeSize": 80530636800,
            "CodeSizeUnzipped": 262144000,
            "CodeSizeZipped": 52428800,
            "ConcurrentExecutions": total,
            "UnreservedConcurrentExecutions": unreserved,
        },
        "AccountUsage": {"TotalCodeSize": 0, "FunctionCount": 0},
    }


class _Answers(ProxyHandler):
    owner: AccountDouble

    def _handle(self) -> None:
        body = self._read_body()
        target = self.headers.get("X-Amz-Target")
        if target in self.owner.denied:  # as AWS answers a caller without the permission
            error = {"__type": "AccessDeniedException", "message": "not authorized"}
            kind = "application/x-amz-json-1.1"
            self._reply(400, "Bad Request", [("Content-Type", kind)], json.dumps(error).encode())
            return
        if target == "ServiceQuotasV20190624.GetServiceQuota":
            answer = self.owner.quotas[json.loads(body)["QuotaCode"]]
            kind = "application/x-amz-json-1.1"
        elif self.path.rstrip("/") == "/2016-08-19/account-settings":
            answer, kind = self.owner.lambda_settings, "application/json"
        else:
            self._reply(*self._forward(body))
            return
        self._reply(200, "OK", [("Content-Type", kind)], json.dumps(answer).encode())


class AccountDouble(LoopbackProxy):
    """moto, and in front of it the two answers moto lacks."""

    handler = _Answers
    name = "account-double"

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.quotas: dict[str, dict[str, Any]] = {}
        self.lambda_settings = _account_settings(1000, 1000)
        self.denied: set[str] = set()

    def gpu_quotas(self, on_demand: float, spot: float) -> None:
        self.quotas = {
            "L-DB2E81BA": _quota("L-DB2E81BA", "Running On-Demand G and VT instances", on_demand),
            "L-3819A6DF": _quota("L-3819A6DF", "All G and VT Spot Instance Requests", spot),
        }

    def fargate_quota(self, on_demand: float) -> None:
        name = "Fargate On-Demand vCPU resource count"
        self.quotas["L-3032A538"] = _quota("L-3032A538", name, on_demand, "fargate")


@pytest.fixture
def account(moto_server: MotoServer) -> Iterator[AccountDouble]:
    double = AccountDouble(moto_server.url)
    double.start()
    yield double
    double.stop()


def _client(service: str, url: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _subnets(url: str) -> tuple[str, str]:
    """A subnet routed to a NAT gateway, and one with no route out."""
    ec2 = _client("ec2", url)
    vpc = ec2.create_vpc(CidrBlock="10.7.0.0/16")["Vpc"]["VpcId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.7.0.0/24")["Subnet"]["SubnetId"]
    routed = ec2.create_subnet(VpcId=vpc, CidrBlock="10.7.1.0/24")["Subnet"]["SubnetId"]
    closed = ec2.create_subnet(VpcId=vpc, CidrBlock="10.7.2.0/24")["Subnet"]["SubnetId"]
    eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=public, AllocationId=eip)["NatGateway"]["NatGatewayId"]
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", NatGatewayId=nat)
    ec2.associate_route_table(RouteTableId=table, SubnetId=routed)
    return routed, closed


def _plan(tmp_path: Path, **variables: Any) -> str:
    """What `terraform show -json PLANFILE` writes, as far as preflight reads it."""
    document = {
        "format_version": "1.2",
        "terraform_version": "1.11.4",
        "variables": {name: {"value": value} for name, value in variables.items()},
        "planned_values": {"root_module": {}},
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    return str(path)


def _preflight(capsys: pytest.CaptureFixture[str], plan: str, url: str) -> tuple[int, list[Any]]:
    code = main(["preflight", "--plan", plan, "--endpoint-url", url, "--json"])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_a_new_account_gets_a_line_with_a_fix_for_each_thing_it_lacks(
    account: AccountDouble, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    account.gpu_quotas(on_demand=0, spot=0)  # a new account's
    account.lambda_settings = _account_settings(10, 10)
    _, closed = _subnets(account.url)
    name = f"preflight{next(_names)}"
    plan = _plan(
        tmp_path,
        region=REGION,
        name=name,
        max_runners=3,
        on_demand_base_capacity=1,
        subnet_ids=[closed],
        runner_image_tag="abc1234",
        lambda_reserved_concurrency={"splitter": 5, "completion": 3},
    )
    code, checks = _preflight(capsys, plan, account.url)
    assert code == 1
    failed = {c["name"]: c for c in checks if c["ok"] is False}
    assert set(failed) == {
        "Lambda concurrency",
        "ECS service-linked role",
        "on-demand G vCPUs",
        "spot G vCPUs",
        f"egress of {closed}",
        "runner image",
    }
    assert "--quota-code L-DB2E81BA --desired-value 8" in failed["on-demand G vCPUs"]["fix"]
    assert "--quota-code L-3819A6DF --desired-value 16" in failed["spot G vCPUs"]["fix"]
    assert 'meanwhile runner_kind = "cpu"' in failed["spot G vCPUs"]["fix"]
    assert "2 x 8" in failed["spot G vCPUs"]["found"]  # two Spot g6/g5/g6e.2xlarge, 8 vCPUs each
    assert "8 to reserve" in failed["Lambda concurrency"]["found"]
    assert "create_ecs_service_linked_role = true" in failed["ECS service-linked role"]["fix"]
    assert "NAT gateway" in failed[f"egress of {closed}"]["fix"]
    assert f"{name}:abc1234 not in ECR" in failed["runner image"]["found"]
    [ami] = [c for c in checks if c["name"] == "GPU AMI"]
    assert ami["ok"] and ami["found"].startswith(f"{Planned(region=REGION).gpu_ami_release} (ami-")


def _pushed(url: str, tag: str) -> str:
    """A new repository (named as a deployment) holding an image tagged ``tag``."""
    name = f"preflight{next(_names)}"
    ecr = _client("ecr", url)
    ecr.create_repository(repositoryName=name)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "x"},
        "layers": [],
    }
    ecr.put_image(repositoryName=name, imageManifest=json.dumps(manifest), imageTag=tag)
    return name


def test_an_account_ready_for_the_deploy_passes(
    account: AccountDouble, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    account.gpu_quotas(on_demand=64, spot=64)
    routed, _ = _subnets(account.url)
    name = _pushed(account.url, "abc1234")
    iam = _client("iam", account.url)
    iam.create_role(
        RoleName=ECS_SERVICE_LINKED_ROLE,
        Path="/aws-service-role/ecs.amazonaws.com/",
        AssumeRolePolicyDocument="{}",
    )
    try:
        plan = _plan(
            tmp_path, region=REGION, name=name, subnet_ids=[routed], runner_image_tag="abc1234"
        )
        code, checks = _preflight(capsys, plan, account.url)
        assert code == 0, checks
        assert [c["name"] for c in checks] == [
            "Lambda concurrency",
            "ECS service-linked role",
            "spot G vCPUs",  # the default: every instance Spot
            f"egress of {routed}",
            "runner image",
            "GPU AMI",
        ]
        # The role there and the plan creating it again: the apply would be refused.
        plan = _plan(
            tmp_path,
            region=REGION,
            name=name,
            subnet_ids=[routed],
            runner_image_tag="abc1234",
            create_ecs_service_linked_role=True,
        )
        assert _preflight(capsys, plan, account.url)[0] == 1
    finally:
        iam.delete_role(RoleName=ECS_SERVICE_LINKED_ROLE)


def test_cpu_runners_need_a_fargate_quota_and_nothing_of_a_gpu(
    account: AccountDouble, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new account: no GPU quota, no ECS service-linked role, a small Fargate quota. With
    runner_kind = "cpu" it deploys: its Fargate quota is what the fleet needs."""
    account.gpu_quotas(on_demand=0, spot=0)
    account.fargate_quota(on_demand=6)
    account.lambda_settings = _account_settings(10, 10)
    routed, _ = _subnets(account.url)
    name = _pushed(account.url, "abc1234")
    given = {
        "region": REGION,
        "name": name,
        "runner_kind": "cpu",
        "subnet_ids": [routed],
        "runner_image_tag": "abc1234",
    }
    code, checks = _preflight(capsys, _plan(tmp_path, **given, max_runners=3), account.url)
    assert code == 0, checks
    assert [c["name"] for c in checks] == [
        "Lambda concurrency",
        "ECS service-linked role",
        "Fargate vCPUs",
        f"egress of {routed}",
        "runner image",
    ]
    by_name = {c["name"]: c for c in checks}
    assert by_name["Fargate vCPUs"]["found"] == (
        "Fargate On-Demand vCPU resource count (L-3032A538): 6 vCPUs, 6 needed for 3 x 2"
    )
    assert "the cluster's creation makes it" in by_name["ECS service-linked role"]["found"]
    # The scaling policy's max_runners tasks want more than a new account's quota.
    code, checks = _preflight(capsys, _plan(tmp_path, **given), account.url)
    assert code == 1
    [failed] = [c for c in checks if c["ok"] is not True]
    assert failed["name"] == "Fargate vCPUs"
    assert "--service-code fargate --quota-code L-3032A538 --desired-value 16" in failed["fix"]


def test_a_check_the_credentials_may_not_ask_is_unknown_and_fails_the_preflight(
    account: AccountDouble, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    account.denied = {"ServiceQuotasV20190624.GetServiceQuota"}
    routed, _ = _subnets(account.url)
    plan = _plan(tmp_path, region=REGION, subnet_ids=[routed], runner_image_tag="abc1234")
    code, checks = _preflight(capsys, plan, account.url)
    assert code == 1
    [quotas] = [c for c in checks if c["name"] == "GPU quotas"]
    assert quotas["ok"] is None
    assert quotas["found"] == "could not ask: GetServiceQuota: AccessDeniedException"
    assert main(["preflight", "--plan", str(tmp_path / "nosuch.json")]) == 2
    assert "cannot read --plan" in capsys.readouterr().err


def test_a_full_fleet_splits_into_on_demand_and_spot_as_the_group_does() -> None:
    planned = Planned(
        region=REGION, on_demand_base_capacity=1, on_demand_percentage_above_base_capacity=50
    )
    assert planned.runner_instances(8) == {"on-demand": 5, "spot": 3}  # 1 + ceil(7 / 2)
    assert Planned(region=REGION).runner_instances(8) == {"on-demand": 0, "spot": 8}


def test_what_preflight_plans_for_is_what_terraform_declares() -> None:
    """Each planned variable is a root variable of that name, with the same default."""
    variables = (ROOT / "terraform" / "variables.tf").read_text()
    for name, field in Planned.model_fields.items():
        block = re.search(rf'variable "{name}" {{(.*?)\n}}', variables, re.DOTALL)
        assert block, name
        default = re.search(r"^  default += (.+)$", block.group(1), re.MULTILINE)
        if name == "region" or default is None:
            continue
        declared = json.loads(default.group(1))  # these defaults are JSON too
        assert declared == field.get_default(call_default_factory=True), name
    # A CPU runner task's vCPUs are the runners module's.
    cpu_task = json.loads((ROOT / "terraform/modules/runners/cpu_task.json").read_text())
    assert cpu_task["cpu"] // 1024 == FARGATE_TASK_VCPUS
    # The parameter preflight asks about is the one Terraform hands the runners.
    main = (ROOT / "terraform" / "main.tf").read_text()
    assert (
        f'ami_ssm_parameter                        = "{GPU_AMIS}/${{var.gpu_ami_release}}/image_id"'
        in main
    )


def test_a_deployment_is_checked_from_its_outputs_and_told_of_a_newer_ami(
    account: AccountDouble, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = "al2023-ami-ecs-gpu-hvm-2023.0.20250224-kernel-6.1-x86_64-ebs"
    outputs = {
        "bucket_name": {"value": "b"},
        "preflight": {"value": {"region": REGION, "create_runners": False}},
    }
    (tmp_path / "outputs.json").write_text(json.dumps(outputs))
    assert (
        main(
            ["preflight", "--stack", str(tmp_path / "outputs.json"), "--endpoint-url", account.url]
        )
        == 0
    )
    assert "Lambda concurrency" in capsys.readouterr().out
    ssm, ec2 = _client("ssm", account.url), _client("ec2", account.url)
    check = ami_check(ssm, ec2, older)
    assert check.ok and check.found.startswith(f"{older} (ami-")
    latest = ssm.get_parameter(Name=f"{GPU_AMIS}/recommended/image_name")["Parameter"]["Value"]
    assert latest != older and check.fix == f'to upgrade: gpu_ami_release = "{latest}", then apply'
    assert ami_check(ssm, ec2, "recommended").found.endswith("AWS's latest")
