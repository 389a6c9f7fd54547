"""Write terraform/policies.json: the IAM policies of the roles pagefleet's code runs under, as
Terraform plans them.

The tests' IAM double (``rehearsal/iam.py``) answers S3 and SQS requests the way AWS answers
these roles, so the runner's and the handlers' tests meet the permissions they have on AWS (a
missing key is a 403 without s3:ListBucket). The policies are read from the plans of the
modules' own test runs (``terraform test -json -verbose``: run "functions" of
tests/functions.tftest.hcl and run "runners" of tests/runners.tftest.hcl, both against a mocked
provider, offline), not written down again. Those two runs assert that the committed file
grants what they plan (``terraform test`` fails on a stale one); run
`make terraform-policies-json` after changing a policy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TF_DIR = Path(__file__).resolve().parents[1]
OUT = TF_DIR / "policies.json"
RUNS = {"tests/functions.tftest.hcl": "functions", "tests/runners.tftest.hcl": "runners"}
# The runner's task role: what `python -m runner` (every worker) runs under.
RUNNER = "runner"


def plans(workdir: Path, env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The plans of the runs in RUNS, by run name, from an initialised terraform/ at
    ``workdir``."""
    filters = [f"-filter={path}" for path in RUNS]
    result = subprocess.run(
        ["terraform", "test", "-json", "-verbose", "-no-color", *filters],
        cwd=workdir,
        env=env if env is not None else dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    found: dict[str, dict[str, Any]] = {}
    for line in result.stdout.splitlines():
        message = json.loads(line)
        if message.get("type") == "test_plan" and RUNS.get(message["@testfile"]) == (
            run := message["@testrun"]
        ):
            found[run] = message["test_plan"]
    # A run plans before it asserts: its plan is here even when it failed, as it does on the
    # stale file this script is about to replace.
    if set(found) != set(RUNS.values()):
        raise RuntimeError(
            f"no plan for the runs {sorted(set(RUNS.values()) - set(found))}:\n"
            f"{result.stdout[-3000:]}{result.stderr}"
        )
    return found


def _planned(plan: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    """The planned attributes of each resource of type ``kind``, by its for_each key."""
    return {
        str(change.get("index", "")): change["change"]["after"]
        for change in plan["resource_changes"]
        if change["type"] == kind and change["mode"] == "managed"
    }


def document(found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    functions = _planned(found["functions"], "aws_lambda_function")
    function_policies = _planned(found["functions"], "aws_iam_role_policy")
    runner_policies = {
        p["name"]: p for p in _planned(found["runners"], "aws_iam_role_policy").values()
    }
    variables = next(iter(functions.values()))["environment"][0]["variables"]
    roles = {
        name: {
            "entry_point": function["handler"],
            "policy": json.loads(function_policies[name]["policy"]),
        }
        for name, function in sorted(functions.items())
    }
    roles[RUNNER] = {
        "entry_point": "python -m runner",
        "policy": json.loads(runner_policies["pagefleet-runner"]["policy"]),
    }
    return {
        "_generated_by": "terraform/scripts/policies_json.py from the modules' plans; do not edit",
        # The names the plans were made with: the double maps a test's own onto them.
        "bucket": variables["PAGEFLEET_BUCKET"],
        "queue_prefix": variables["PAGEFLEET_QUEUE_PREFIX"],
        "roles": roles,
    }


def render(workdir: Path = TF_DIR, env: dict[str, str] | None = None) -> str:
    return json.dumps(document(plans(workdir, env)), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    # The sibling script's: run as a script, this folder is on sys.path.
    from stack_json import write_or_check

    return write_or_check(OUT, render(), "terraform-policies-json", argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
