"""Write terraform/stack.json from pagefleet/stack.py: the one definition Terraform reads.

Terraform cannot import Python, so the queue specs, notification filters, the settings
defaults the deployment depends on and the scaling policy (``pagefleet/scaling.py``, the
numbers the fleet simulator replays) are exported here; `tests/test_terraform.py` fails when the
committed file and `pagefleet.stack` disagree.  Run `make terraform-stack-json` after changing
`pagefleet/stack.py`, `pagefleet/settings.py` or `pagefleet/scaling.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pagefleet import scaling, stack
from pagefleet.settings import Settings
from runner.worker_plan import marker_workers_on

OUT = Path(__file__).resolve().parents[1] / "stack.json"
GPU_TYPES = OUT.parent / "modules" / "runners" / "gpu_instance_types.json"
# The vLLM sidecar's memory reservation (modules/runners' vllm_memory_mb default), held before
# the runner sizes W from what is left.
SIDECAR_MB = 2048

# Runner and handler settings whose defaults Terraform uses unless a variable overrides them.
SETTINGS_EXPORTED = (
    "chunk_pages",
    "max_pages",
    "max_bytes",
    "max_attempts",
    "visibility_timeout_s",
    "convert_timeout_s",
    "drain_timeout_s",
    "heartbeat_s",
    "poll_wait_s",
)


def stack_document() -> dict[str, Any]:
    settings = Settings()
    specs = stack.queue_specs(settings)
    # Role names stand in for ARNs, so each rule keeps the role it is for.
    config = stack.notification_configuration({s.role: s.role for s in specs})
    defaults = settings.model_dump()
    return {
        "_generated_by": "terraform/scripts/stack_json.py from pagefleet/stack.py; do not edit",
        "handler_timeout_s": stack.HANDLER_TIMEOUT_S,
        "batch_size": stack.BATCH_SIZES,
        "queues": {s.role: s.model_dump(exclude={"role"}) for s in specs},
        "notifications": [
            {
                "id": rule["Id"],
                "queue_role": rule["QueueArn"],
                "events": rule["Events"],
                "filter_prefix": _filter(rule, "prefix"),
                "filter_suffix": _filter(rule, "suffix"),
            }
            for rule in config["QueueConfigurations"]
        ],
        "settings": {name: defaults[name] for name in SETTINGS_EXPORTED},
        "scaling": scaling.export(scaling.default_policy()),
        # Marker workers a GPU task runs on each one-GPU type, as the runner sizes them
        # (runner/worker_plan.py): Terraform pins PAGEFLEET_WORKERS_PER_GPU to the smallest of
        # its instance types' and counts the splitter's lanes with it.
        "marker_workers": {
            name: marker_workers_on(vcpus, SIDECAR_MB)
            for name, vcpus in json.loads(GPU_TYPES.read_text())["vcpus"].items()
        },
    }


def _filter(rule: dict[str, Any], name: str) -> str | None:
    rules = rule["Filter"]["Key"]["FilterRules"]
    return next((r["Value"] for r in rules if r["Name"] == name), None)


def render() -> str:
    return json.dumps(stack_document(), indent=2, sort_keys=True) + "\n"


def write_or_check(out: Path, text: str, make_target: str, argv: list[str]) -> int:
    """Write ``text`` to ``out``, or with ``--check`` only say whether ``out`` holds it."""
    if "--check" in argv:
        if out.read_text() != text:
            print(f"{out} is stale: run `make {make_target}`", file=sys.stderr)
            return 1
        return 0
    out.write_text(text)
    return 0


def main(argv: list[str]) -> int:
    return write_or_check(OUT, render(), "terraform-stack-json", argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
