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
    """The deploy to check: planned (``--plan``), deployed (``--stack``), or the defaults."""
    if args.plan is None and args.stack is None:
        if not args.region:
            raise usage(
                "preflight needs --plan (`terraform show -json PLANFILE`), --stack or --region"
            )
        return Planned(region=args.region)
    option, given = ("--plan", args.plan) if args.plan else ("--stack", args.stack)
    path = Path(given).expanduser()
    try:
        text = path.read_text()
        planned = (
            Planned.from_terraform_plan(text) if args.plan else Planned.from_terraform_outputs(text)
        )
    except OSError as exc:
        raise usage(f"cannot read {option} {path}: {exc.strerror}") from None
    except (ValueError, KeyError) as exc:
        made_by = (
            f"`terraform plan -out tfplan && terraform show -json tfplan > {path}`"
            if args.plan
            else f"`terraform -chdir=terraform output -json > {path}`"
        )
        raise usage(f"{option} {path} is not what {made_by} writes ({exc})") from None
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
