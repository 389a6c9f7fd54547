"""What a Terraform apply deployed, read from its state (``terraform show -json``) and, for
what moto cannot create, its plan: the functions (handler, timeout, environment, role), their
event source mappings, the queues, the bucket's encryption and notifications, each role's
policy, and the runner task's environment and role.

Only the values the rehearsal runs with or the drift test compares; everything by its
Terraform resource type and attribute name (aws provider 5.100.0's schema).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

RUNNER_CONTAINER = "runner"  # terraform/modules/runners: the task's runner container


class Function(BaseModel):
    key: str  # the functions module's for_each key: splitter, completion, dead_letter, ...
    name: str
    handler: str  # module.function, as Lambda names it
    timeout_s: int
    memory_mb: int
    environment: dict[str, str]
    role: str  # the role's name


class Mapping(BaseModel):
    function: str  # the function's key
    source_arn: str
    batch_size: int
    batching_window_s: int
    report_failures: bool  # FunctionResponseTypes holds ReportBatchItemFailures
    maximum_concurrency: int | None
    enabled: bool


class Queue(BaseModel):
    name: str
    url: str
    arn: str
    visibility_timeout_s: int
    retention_s: int
    max_message_size: int
    redrive: dict[str, Any] | None  # deadLetterTargetArn, maxReceiveCount
    kms_key: str | None
    policy: dict[str, Any] | None


class Notification(BaseModel):
    id: str
    queue_arn: str
    events: list[str]
    prefix: str
    suffix: str


class Runner(BaseModel):
    environment: dict[str, str]
    role: str  # the task role's name
    planned: bool  # from the plan (moto cannot register the task definition)


class Deployment(BaseModel):
    region: str
    bucket: str
    bucket_arn: str
    bucket_kms_key: str | None
    notifications: list[Notification]
    queues: dict[str, Queue]  # by name
    functions: dict[str, Function]  # by key
    mappings: dict[str, Mapping]  # by function key
    policies: dict[str, dict[str, Any]]  # each role's inline policy document, by role name
    runner: Runner

    def queue(self, arn: str) -> Queue:
        return next(q for q in self.queues.values() if q.arn == arn)

    @property
    def data_keys(self) -> dict[str, str]:
        """The SSE-KMS key of the bucket and of each encrypted queue, by their ARNs."""
        keys = {q.arn: q.kms_key for q in self.queues.values() if q.kms_key}
        if self.bucket_kms_key:
            keys[self.bucket_arn] = self.bucket_kms_key
        return keys


def _resources(module: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from module.get("resources", [])
    for child in module.get("child_modules", []):
        yield from _resources(child)


def _managed(values: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [
        r
        for r in _resources(values["root_module"])
        if r["type"] == kind and r.get("mode", "managed") == "managed"
    ]


def _role_name(arn: str) -> str:
    return arn.rsplit("/", 1)[-1]


def read(state: dict[str, Any], plan: dict[str, Any]) -> Deployment:
    """``state``: ``terraform show -json`` after the apply; ``plan``: ``terraform show -json``
    of a plan holding the runner's task definition."""
    values = state["values"]
    [bucket] = _managed(values, "aws_s3_bucket")
    [encryption] = _managed(values, "aws_s3_bucket_server_side_encryption_configuration")
    [notification] = _managed(values, "aws_s3_bucket_notification")
    [region] = {
        r["values"]["name"] for r in _resources(values["root_module"]) if r["type"] == "aws_region"
    }
    by_default = encryption["values"]["rule"][0]["apply_server_side_encryption_by_default"][0]
    queues = {}
    for r in _managed(values, "aws_sqs_queue"):
        v = r["values"]
        queues[v["name"]] = Queue(
            name=v["name"],
            url=v["url"],
            arn=v["arn"],
            visibility_timeout_s=v["visibility_timeout_seconds"],
            retention_s=v["message_retention_seconds"],
            max_message_size=v["max_message_size"],
            redrive=json.loads(v["redrive_policy"]) if v["redrive_policy"] else None,
            kms_key=v["kms_master_key_id"] or None,
            policy=json.loads(v["policy"]) if v["policy"] else None,
        )
    functions = {}
    for r in _managed(values, "aws_lambda_function"):
        v = r["values"]
        functions[r["index"]] = Function(
            key=r["index"],
            name=v["function_name"],
            handler=v["handler"],
            timeout_s=v["timeout"],
            memory_mb=v["memory_size"],
            environment=v["environment"][0]["variables"] if v["environment"] else {},
            role=_role_name(v["role"]),
        )
    by_arn = {r["values"]["arn"]: r["index"] for r in _managed(values, "aws_lambda_function")}
    mappings = {}
    for r in _managed(values, "aws_lambda_event_source_mapping"):
        v = r["values"]
        key = by_arn[v["function_arn"]]
        scaling = v["scaling_config"]
        mappings[key] = Mapping(
            function=key,
            source_arn=v["event_source_arn"],
            batch_size=v["batch_size"],
            batching_window_s=v["maximum_batching_window_in_seconds"],
            report_failures="ReportBatchItemFailures" in v["function_response_types"],
            maximum_concurrency=scaling[0]["maximum_concurrency"] if scaling else None,
            enabled=v["enabled"],
        )
    policies = {
        r["values"]["role"]: json.loads(r["values"]["policy"])
        for r in _managed(values, "aws_iam_role_policy")
    }
    return Deployment(
        region=region,
        bucket=bucket["values"]["bucket"],
        bucket_arn=bucket["values"]["arn"],
        bucket_kms_key=by_default["kms_master_key_id"]
        if by_default["sse_algorithm"] == "aws:kms"
        else None,
        notifications=[
            Notification(
                id=q["id"],
                queue_arn=q["queue_arn"],
                events=q["events"],
                prefix=q["filter_prefix"],
                suffix=q["filter_suffix"],
            )
            for q in notification["values"]["queue"]
        ],
        queues=queues,
        functions=functions,
        mappings=mappings,
        policies=policies,
        runner=_runner(plan),
    )


def _runner(plan: dict[str, Any]) -> Runner:
    [change] = [
        c
        for c in plan["resource_changes"]
        if c["type"] == "aws_ecs_task_definition" and c["mode"] == "managed"
    ]
    after = change["change"]["after"]
    [container] = [
        c for c in json.loads(after["container_definitions"]) if c["name"] == RUNNER_CONTAINER
    ]
    return Runner(
        environment={e["name"]: e["value"] for e in container.get("environment", [])},
        role=_role_name(after["task_role_arn"]),
        planned=True,
    )
