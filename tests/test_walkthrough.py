"""The deploy walkthroughs: README.md's "Deploying to AWS", terraform/README.md's "From an
empty account to the first Markdown" and the examples' README. Every `make` target, script,
`pagefleet` command and option, AWS CLI operation and parameter, Terraform variable and output
their commands name exists; each file they write is out of `make runner-image`'s way; and the
commands that need no account run (`pagefleet <command> --help`, `make -n`).

Read, not run against AWS: the commands are parsed from the Markdown's `sh` blocks.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import botocore.session
import pytest
from botocore import xform_name

from bench.fleet.config import FleetConfig
from bench.fleet.prices import HOURS_PER_MONTH, Prices
from cli import parser as pagefleet_parser
from pagefleet.preflight import _QUOTAS
from pagefleet.scaling import default_policy
from tests.terraform_support import ROOT, TF_DIR

# Each walkthrough: its file, and the headings that open and close it.
WALKTHROUGHS = {
    "README.md": ("## Deploying to AWS", "\n## Layout"),
    "terraform/README.md": ("## From an empty account", "\n## The variables that matter"),
    "terraform/examples/README.md": ("Run one from the repository root", None),
}

# The two that go from an empty account to the teardown; the examples' start from step 6.
COST_WALKTHROUGHS = ("README.md", "terraform/README.md")

# The AWS CLI's own options (not the operation's parameters), and the high-level `aws s3`
# commands, which are the CLI's, not a service model's.
AWS_GLOBAL_OPTIONS = {"--region", "--query", "--output", "--endpoint-url", "--profile"}
AWS_CLI_SERVICE = {"s3api": "s3"}
SEPARATORS = {"&&", "||", ";", "|"}


@dataclass
class Walkthrough:
    """What one walkthrough's commands name."""

    commands: list[list[str]] = field(default_factory=list)
    # Files a command writes (`> f`, `>> f`, `--out DIR`), relative to the repository root.
    written: list[str] = field(default_factory=list)
    # `name = value` lines that go into a .tfvars file, and -var NAME=... flags.
    variables: list[str] = field(default_factory=list)


def section(text: str, opens: str, closes: str | None) -> str:
    """From ``opens`` to ``closes`` (None: the end)."""
    start = text.index(opens)
    return text[start : text.index(closes, start) if closes else None]


def sh_blocks(markdown: str) -> Iterator[str]:
    """The ```sh blocks, indented ones (in a numbered list) included, dedented."""
    for match in re.finditer(r"^([ \t]*)```sh\n(.*?)^\1```", markdown, re.M | re.S):
        yield textwrap.dedent(match[2])


def parse(markdown: str) -> Walkthrough:
    """Commands, files written and variables set by the sh blocks of ``markdown``."""
    found = Walkthrough()
    for block in sh_blocks(markdown):
        lines = iter(block.replace("\\\n", " ").splitlines())
        for line in lines:
            heredoc = re.search(r"<<'?(\w+)'?", line)
            if heredoc:
                body = []
                for inner in lines:
                    if inner.strip() == heredoc[1]:
                        break
                    body.append(inner)
                line = line[: heredoc.start()]
                if re.search(r"\S+\.tfvars\b", line):
                    found.variables += assignments("\n".join(body))
            # $(...) runs a command of its own; its output stands in the line.
            for inner in re.findall(r"\$\(([^()]*)\)", line):
                found.commands += split(inner)
            line = re.sub(r"\$\([^()]*\)", "SUBSTITUTED", line)
            for command in split(line):
                found.commands.append(command)
                found.written += writes(command)
                found.variables += set_variables(command)
    return found


def split(line: str) -> list[list[str]]:
    """One shell line into its commands (split at && || ; |), comments and redirections kept
    as tokens."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token in SEPARATORS:
            commands.append([])
        elif commands[-1] or not re.fullmatch(r"[A-Z_]+=\S*", token):
            commands[-1].append(token)  # a leading NAME=value sets the command's environment
    return [c for c in commands if c]


def writes(command: list[str]) -> list[str]:
    paths = [command[i + 1] for i, t in enumerate(command[:-1]) if t in (">", ">>")]
    if pagefleet_args(command) and "--out" in command:
        paths.append(command[command.index("--out") + 1])
    return [p for p in paths if p != "/dev/null"]


def assignments(tfvars: str) -> list[str]:
    return re.findall(r"^\s*([a-z_][a-z0-9_]*)\s*=", tfvars, re.M)


def set_variables(command: list[str]) -> list[str]:
    """Variables an `echo`/`printf` appends to a .tfvars file, and -var flags."""
    names = []
    if command[0] in ("echo", "printf") and any(t.endswith(".tfvars") for t in command):
        text = " ".join(
            t for t in command[1:] if t not in (">", ">>") and not t.endswith(".tfvars")
        )
        names += assignments(text.replace("\\n", "\n"))
    for i, token in enumerate(command):
        if token == "-var" and i + 1 < len(command):
            names.append(command[i + 1].split("=", 1)[0])
        elif token.startswith("-var="):
            names.append(token.removeprefix("-var=").split("=", 1)[0])
    return names


def pagefleet_args(command: list[str]) -> list[str] | None:
    """A `pagefleet` command's arguments (also `.venv/bin/pagefleet`), else None."""
    return command[1:] if Path(command[0]).name == "pagefleet" else None


def make_targets() -> set[str]:
    """Every target make knows from the Makefile and what it includes (`make -p`, which builds
    nothing)."""
    database = subprocess.run(
        ["make", "-pRrq", ":"], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stdout
    return set(re.findall(r"^([A-Za-z0-9][\w.-]*):(?!=)", database, re.M))


def declared(kind: str, path: Path) -> set[str]:
    return set(re.findall(rf'^{kind} "(\w+)"', path.read_text(), re.M))


# --- the checks: each returns what the walkthrough names that does not exist ---------------


def missing_make_targets(walkthrough: Walkthrough, targets: set[str]) -> list[str]:
    named = [t for c in walkthrough.commands if c[0] == "make" for t in c[1:] if "=" not in t]
    return [f"make {t}: no such target" for t in named if t not in targets]


def pagefleet_refusals(walkthrough: Walkthrough) -> list[str]:
    """Each `pagefleet` command parsed by the command's own parser, in-process: an unknown
    command or option, or a value of the wrong type, is refused."""
    refused = []
    for command in walkthrough.commands:
        args = pagefleet_args(command)
        if args is None:
            continue
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr):
                pagefleet_parser().parse_args(args)
        except SystemExit:
            refused.append(f"pagefleet {shlex.join(args)}: {stderr.getvalue().strip()}")
    return refused


def missing_outputs(walkthrough: Walkthrough, outputs: set[str]) -> list[str]:
    missing = []
    for command in walkthrough.commands:
        if command[0] == "terraform" and "output" in command:
            named = command[command.index("output") + 1 :]
            named = named[: min((named.index(r) for r in (">", ">>") if r in named), default=None)]
            names = [t for t in named if not t.startswith("-")]
            missing += [
                f"terraform output {n}: not in outputs.tf" for n in names if n not in outputs
            ]
    return missing


def aws_cli_refusals(walkthrough: Walkthrough) -> list[str]:
    """Each `aws SERVICE OPERATION --param ...` against botocore's service model: the operation
    and its parameters exist (the AWS CLI names them with botocore's xform_name)."""
    session = botocore.session.get_session()
    refused = []
    for command in walkthrough.commands:
        if command[0] != "aws" or len(command) < 3 or command[1] == "s3":
            continue
        service = AWS_CLI_SERVICE.get(command[1], command[1])
        model = session.get_service_model(service)
        operations = {xform_name(op, "-"): op for op in model.operation_names}
        if command[2] not in operations:
            refused.append(f"aws {command[1]} {command[2]}: no such operation")
            continue
        shape = model.operation_model(operations[command[2]]).input_shape
        params = {f"--{xform_name(m, '-')}" for m in (shape.members if shape else {})}
        for option in (t for t in command[3:] if t.startswith("--")):
            if option not in params | AWS_GLOBAL_OPTIONS:
                refused.append(f"aws {command[1]} {command[2]} {option}: no such parameter")
    return refused


def plans_without_the_variables(walkthrough: Walkthrough) -> list[str]:
    """A `terraform plan` of terraform/ must read the variables the walkthrough wrote
    (-var-file, relative to -chdir): without them it plans the defaults, which validation
    refuses (no subnets). An example's own variables have defaults that plan."""
    unread = []
    for command in walkthrough.commands:
        if command[0] != "terraform" or "plan" not in command:
            continue
        chdir = next((t.split("=", 1)[1] for t in command if t.startswith("-chdir=")), ".")
        if chdir != "terraform":
            continue
        var_files = [t.split("=", 1)[1] for t in command if t.startswith("-var-file=")]
        read = {str(Path(chdir, f)) for f in var_files}
        if not read or not read <= set(walkthrough.written):
            unread.append(f"{shlex.join(command)}: reads no -var-file the walkthrough writes")
    return unread


def in_the_image_build_s_way(walkthrough: Walkthrough) -> list[str]:
    """docker/push_image.sh refuses to tag an image while git sees a change outside terraform/,
    so a file the walkthrough writes must be under terraform/ or ignored by git."""
    outside = [p for p in walkthrough.written if not p.startswith("terraform/")]
    if not outside:
        return []
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *outside], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    return [f"{p} would block `make runner-image`" for p in outside if p not in ignored]


# --- the walkthroughs ---------------------------------------------------------------------


def walkthroughs() -> dict[str, Walkthrough]:
    return {
        name: parse(section((ROOT / name).read_text(), *bounds))
        for name, bounds in WALKTHROUGHS.items()
    }


WALKED = walkthroughs()


def test_the_walkthroughs_are_found_with_their_commands() -> None:
    for name, walkthrough in WALKED.items():
        kinds = {c[0].rsplit("/", 1)[-1] for c in walkthrough.commands}
        assert {"make", "pagefleet", "terraform"} <= kinds, (name, kinds)
    for name in COST_WALKTHROUGHS:
        assert {c[0] for c in WALKED[name].commands} >= {"aws"}, name
        assert WALKED[name].variables, name


def test_every_make_target_exists() -> None:
    targets = make_targets()
    assert {"deploy", "destroy", "image-repositories", "runner-image"} <= targets
    for name, walkthrough in WALKED.items():
        assert missing_make_targets(walkthrough, targets) == [], name


def test_every_pagefleet_command_and_option_exists() -> None:
    for name, walkthrough in WALKED.items():
        assert pagefleet_refusals(walkthrough) == [], name


def test_every_terraform_output_named_exists() -> None:
    outputs = declared("output", TF_DIR / "outputs.tf")
    for name, walkthrough in WALKED.items():
        assert missing_outputs(walkthrough, outputs) == [], name


def test_every_aws_cli_operation_and_parameter_exists() -> None:
    for name, walkthrough in WALKED.items():
        assert aws_cli_refusals(walkthrough) == [], name


def test_every_file_the_walkthrough_writes_is_out_of_the_image_build_s_way() -> None:
    """A backend settings file written at the repository root once blocked the image build."""
    assert "':!terraform'" in (ROOT / "docker" / "push_image.sh").read_text()
    for name, walkthrough in WALKED.items():
        assert walkthrough.written, name
        assert in_the_image_build_s_way(walkthrough) == [], name


def test_every_plan_reads_the_variables_written() -> None:
    for name, walkthrough in WALKED.items():
        assert plans_without_the_variables(walkthrough) == [], name
    for name in COST_WALKTHROUGHS:
        assert any(c[0] == "terraform" and "plan" in c for c in WALKED[name].commands), name


def test_the_quota_codes_are_the_ones_preflight_checks() -> None:
    known = {q.code for family in _QUOTAS.values() for q in family.values()}
    for name in COST_WALKTHROUGHS:
        walkthrough = WALKED[name]
        asked = {
            c[c.index("--quota-code") + 1] for c in walkthrough.commands if "--quota-code" in c
        }
        assert asked and asked <= known, (name, asked - known)


@pytest.mark.parametrize("variable", sorted({v for w in WALKED.values() for v in w.variables}))
def test_every_terraform_variable_set_exists(variable: str) -> None:
    assert variable in declared("variable", TF_DIR / "variables.tf")


@pytest.mark.parametrize(
    "command", sorted({c[1] for w in WALKED.values() for c in w.commands if pagefleet_args(c)})
)
def test_the_pagefleet_commands_run_offline(command: str) -> None:
    """`pagefleet <command> --help`, in-process: the walkthrough's commands start (imports,
    parser) without an account."""
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout), pytest.raises(SystemExit) as exit_:
        pagefleet_parser().parse_args([command, "--help"])
    assert exit_.value.code == 0
    assert f"usage: pagefleet {command}" in stdout.getvalue()


def test_the_make_commands_would_run() -> None:
    """`make -n` of each make command the walkthroughs run, its variables included: every
    prerequisite can be made (-n prints the recipes and runs none)."""
    commands = sorted({tuple(c[1:]) for w in WALKED.values() for c in w.commands if c[0] == "make"})
    for args in commands:
        dry = subprocess.run(
            ["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert dry.returncode == 0, (args, dry.stderr)


def test_every_script_run_is_the_repository_s() -> None:
    scripts = {
        c[0]
        for w in WALKED.values()
        for c in w.commands
        if c[0].startswith(("docker/", "scripts/"))
    }
    assert "docker/push_image.sh" in scripts
    for script in scripts:
        assert (ROOT / script).is_file() and (ROOT / script).stat().st_mode & 0o111, script


def test_the_costs_are_the_fleet_report_s() -> None:
    """The idle and busy figures of README step 12 (and terraform/README.md step 8), from the
    prices the fleet report used: NAT gateway hours, CloudWatch's alarm metrics and metrics,
    the functions' idle SQS polling; the simulator's default instance (terraform's first
    gpu_instance_types) at its Spot and on-demand rates, times max_runners."""
    p, gpu = Prices(), FleetConfig().gpu
    cloudwatch = (
        p.alarm_metrics * p.alarm_metric_per_month + p.custom_metrics * p.custom_metric_per_month
    ) / HOURS_PER_MONTH
    polling = p.lambda_pollers * 3600 / p.long_poll_s * p.sqs_per_request
    without_nat = cloudwatch + polling
    with_nat = p.nat_gateways * p.nat_gateway_per_h + without_nat
    fleet = default_policy().max_runners
    figures = [
        f"${with_nat:.3f}/h (~${with_nat * HOURS_PER_MONTH:.0f} a month)",
        f"${without_nat:.3f}/h",
        f"${p.nat_gateway_per_h:.3f}/h",
        f"${cloudwatch:.3f}/h",
        f"${gpu.spot_per_h:.2f}/h Spot, ${gpu.on_demand_per_h}/h on-demand",
        f"`max_runners = {fleet}` is ${fleet * gpu.spot_per_h:.2f}/h Spot, "
        f"${fleet * gpu.on_demand_per_h:.2f}/h on-demand",
    ]
    for name in COST_WALKTHROUGHS:
        text = " ".join(section((ROOT / name).read_text(), *WALKTHROUGHS[name]).split())
        assert [f for f in figures if f not in text] == [], name


# --- the checks themselves find what is wrong ---------------------------------------------

WRONG = """\
```sh
make deploi
.venv/bin/pagefleet status --wath --stack terraform-outputs.json
pagefleet prefligt --region eu-west-1
terraform -chdir=terraform output -raw dashboard_ulr
aws service-quotas request-service-quota-increase --quota-kode L-3819A6DF
echo 'max_runner = 4' >> terraform/prod.tfvars
terraform -chdir=terraform plan -out=prod.tfplan
terraform -chdir=terraform show -json prod.tfplan > plan.json
```
"""


def test_the_checks_report_what_is_wrong() -> None:
    """A target, an option, a command, an output, an AWS parameter and a variable misspelt, a
    file written where it blocks the image build, a plan without the variables: each found."""
    wrong = parse(WRONG)
    assert missing_make_targets(wrong, make_targets()) == ["make deploi: no such target"]
    refused = pagefleet_refusals(wrong)
    assert len(refused) == 2
    assert "unrecognized arguments: --wath" in refused[0]
    assert "invalid choice: 'prefligt'" in refused[1]
    assert missing_outputs(wrong, declared("output", TF_DIR / "outputs.tf")) == [
        "terraform output dashboard_ulr: not in outputs.tf"
    ]
    assert aws_cli_refusals(wrong) == [
        "aws service-quotas request-service-quota-increase --quota-kode: no such parameter"
    ]
    assert wrong.variables == ["max_runner"]
    assert "max_runner" not in declared("variable", TF_DIR / "variables.tf")
    assert in_the_image_build_s_way(wrong) == ["plan.json would block `make runner-image`"]
    assert plans_without_the_variables(wrong) == [
        "terraform -chdir=terraform plan -out=prod.tfplan: "
        "reads no -var-file the walkthrough writes"
    ]
