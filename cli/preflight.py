"""``pagefleet preflight``: before ``terraform apply``, what the AWS account lacks for it."""

from __future__ import annotations

import argparse
from pathlib import Path

import boto3
from rich.table import Table

from cli.failures import Exit, usage
from cli.views import emit_json, out
from pagefleet.preflight import Account, Planned, preflight
from pagefleet.scaling import default_policy

MARK = {True: "[green]ok", False: "[red]missing", None: "[yellow]unknown"}


def planned_of(args: argparse.Namespace) -> Planned:
    if args.plan is None:
        if not args.region:
            raise usage("preflight needs --region, or --plan (`terraform show -json PLANFILE`)")
        return Planned(region=args.region)
    path = Path(args.plan).expanduser()
    try:
        planned = Planned.from_terraform_plan(path.read_text())
    except OSError as exc:
        raise usage(f"cannot read --plan {path}: {exc.strerror}") from None
    except (ValueError, KeyError) as exc:
        raise usage(
            f"--plan {path} is not `terraform show -json` of a plan ({exc}): "
            f"`terraform plan -out tfplan && terraform show -json tfplan > {path}`"
        ) from None
    return planned.model_copy(update={"region": args.region}) if args.region else planned


def run(args: argparse.Namespace) -> int:
    planned = planned_of(args)
    session = boto3.Session(region_name=planned.region)
    url = args.endpoint_url  # a moto server in the tests; AWS's own otherwise
    account = Account(
        ec2=session.client("ec2", endpoint_url=url),
        iam=session.client("iam", endpoint_url=url),
        ecr=session.client("ecr", endpoint_url=url),
        ssm=session.client("ssm", endpoint_url=url),
        quotas=session.client("service-quotas", endpoint_url=url),
        lambdas=session.client("lambda", endpoint_url=url),
    )
    max_runners = planned.max_runners or default_policy().max_runners
    checks = preflight(account, planned, max_runners)
    if args.json:
        for check in checks:
            emit_json(check._asdict())
    else:
        table = Table(title=f"preflight: {planned.name} in {planned.region}")
        for column in ("check", "", "found", "fix"):
            table.add_column(column)
        for check in checks:
            table.add_row(check.name, MARK[check.ok], check.found, check.fix)
        out.print(table)
    return Exit.DONE if all(c.ok for c in checks) else Exit.FAILED
