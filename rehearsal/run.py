"""The pipeline run from what Terraform deployed, and nothing else.

Each function runs as Lambda runs it (:mod:`embedded.environment`: a process per execution
environment) with its own environment variables, handler and timeout as applied, fed by its
event source mapping as applied (batch size, batching window, ReportBatchItemFailures, maximum
concurrency) whose polls sign as the function's role, as Lambda's pollers do. The runner runs
as ``python -m runner`` with the task definition's environment. Uploads land in the applied
bucket, whose applied notifications announce them. Every S3 and SQS request of the handlers,
the pollers and the runner goes through the IAM double (:mod:`rehearsal.iam`) as that
component's role, under the applied policies and the queues' resource policies, over TLS.

What the rehearsal changes in what is deployed, each for a machine without AWS or a GPU:
:data:`ENDPOINT` and the credentials (the double, not AWS), and for the runner
:data:`RUNNER_LOCAL` (the CPU converter instead of marker, no MPS, a short long poll).
Anything else in this process's environment under ``PAGEFLEET_`` would leak into the
functions: refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from embedded.dispatch import Dispatcher, EnvironmentSpec
from embedded.logs import RUNNER, LogRouter
from embedded.server import StopOnExit
from pagefleet.models import JobRecord
from pagefleet.storage import Bucket
from pagefleet.submission import StillConverting, await_records, upload
from rehearsal.deployment import Deployment
from rehearsal.iam import Denial, IamDouble, Role
from rehearsal.tls import loopback_certificate

ENDPOINT = "PAGEFLEET_ENDPOINT_URL"
# marker 2.x needs a GPU and its model servers; MPS an NVIDIA GPU. And a 1 s long poll (the
# task leaves SQS's 20 s), so that a stopping runner's workers drain within a second, as the
# embedded stack's do. Everything else is as planned.
RUNNER_LOCAL = {
    "PAGEFLEET_CONVERTER": "text-layer",
    "PAGEFLEET_MPS": "off",
    "PAGEFLEET_POLL_WAIT_S": "1",
}
# Execution environments per function at most, whatever the mapping's maximum concurrency
# (Lambda's floor is 2): each is a process, and this machine is small.
LOCAL_CONCURRENCY = 2
# The pollers' long poll: Lambda's are 20 s; 1 s lets the rehearsal stop within a second.
POLL_WAIT_S = 1
# The variables a process needs to start at all, passed on from this one.
INHERITED = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "TZ")


class RehearsalFailed(RuntimeError):
    """What the rehearsal found: a denied request (with the statement it lacked), a runner
    that stopped, or documents that never got a record."""


@dataclass
class Outcome:
    records: dict[str, JobRecord]
    seconds: float
    # per role a rehearsed component runs as: what its policy grants and nothing used
    unused: dict[str, list[str]]
    requests: dict[str, int] = field(default_factory=dict)  # per role
    denied: list[str] = field(default_factory=list)


class Rehearsal(StopOnExit):
    """``upstream``: the moto server Terraform applied to. ``policies``: the roles' policies
    the double enforces, when not the applied ones (a test removes a statement)."""

    def __init__(
        self,
        deployment: Deployment,
        upstream: str,
        *,
        policies: dict[str, dict[str, Any]] | None = None,
        logs: LogRouter | None = None,
    ) -> None:
        stray = sorted(k for k in os.environ if k.startswith("PAGEFLEET_"))
        if stray:
            raise RehearsalFailed(f"the rehearsal runs from the applied state alone: unset {stray}")
        self.deployment = deployment
        self.upstream = upstream
        self.policies = policies if policies is not None else deployment.policies
        self._own_logs = logs is None
        self.logs = logs or LogRouter()
        self._folder = Path(tempfile.mkdtemp(prefix="pagefleet-rehearsal-"))
        tls, self.ca_bundle = loopback_certificate(self._folder)
        queue = next(iter(deployment.queues.values()))
        self.double = IamDouble(
            upstream,
            self.policies,
            arn_tail=":".join(queue.arn.split(":")[3:5]),
            data_keys=deployment.data_keys,
            resource_policies={q.arn: q.policy for q in deployment.queues.values() if q.policy},
            tls=tls,
        )
        self.dispatchers: list[Dispatcher] = []
        self.runner: subprocess.Popen[bytes] | None = None

    # --- starting ---

    def start(self) -> None:
        self.double.start()
        for key, mapping in self.deployment.mappings.items():
            function = self.deployment.functions[key]
            queue = self.deployment.queue(mapping.source_arn)
            env = {
                **function.environment,
                **self._signing(function.role),
                # What Lambda's runtime sets (the region its clients default to).
                "AWS_REGION": self.deployment.region,
                "AWS_DEFAULT_REGION": self.deployment.region,
                "AWS_LAMBDA_FUNCTION_NAME": function.name,
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(function.memory_mb),
                "PYTHONUNBUFFERED": "1",
            }
            dispatcher = Dispatcher(self._poller(function.role), self.deployment.region)
            dispatcher.wait_s = POLL_WAIT_S
            dispatcher.add(
                function.name,
                queue.url,
                queue.arn,
                EnvironmentSpec(
                    handler=_entry_point(function.handler),
                    env=env,
                    timeout_s=function.timeout_s,
                    attach_logs=self.logs.attach,
                ),
                mapping.batch_size,
                concurrency=min(mapping.maximum_concurrency or 1000, LOCAL_CONCURRENCY),
                batching_window_s=mapping.batching_window_s,
                report_failures=mapping.report_failures,
            )
            self.dispatchers.append(dispatcher)
        self._start_runner()
        for dispatcher in self.dispatchers:
            dispatcher.start()

    def _signing(self, role: str) -> dict[str, str]:
        """The environment that points a process at the double, signing as ``role``."""
        return {
            **self.double.credentials(role),
            ENDPOINT: self.double.url,
            "AWS_CA_BUNDLE": str(self.ca_bundle),
        }

    def _poller(self, role: str) -> Any:
        """An SQS client signing as ``role``: Lambda's pollers use the function's role."""
        credentials = self.double.credentials(role)
        return boto3.session.Session().client(
            "sqs",
            region_name=self.deployment.region,
            endpoint_url=self.double.url,
            aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=credentials["AWS_SESSION_TOKEN"],
            verify=str(self.ca_bundle),
            config=Config(retries={"total_max_attempts": 1}),
        )

    def _start_runner(self) -> None:
        runner = self.deployment.runner
        tmp = self._folder / "runner"
        tmp.mkdir()
        env = {
            **{k: os.environ[k] for k in INHERITED if k in os.environ},
            **runner.environment,
            **RUNNER_LOCAL,
            **self._signing(runner.role),
            "AWS_REGION": self.deployment.region,
            "PYTHONUNBUFFERED": "1",
            "TMPDIR": str(tmp),
            "PAGEFLEET_HEALTH_FILE": str(tmp / "health.json"),
            # Ends with this process, however it ends (embedded/pipeline.py does the same).
            "PAGEFLEET_PARENT_FD": "0",
        }
        self.runner = subprocess.Popen(
            [sys.executable, "-m", "runner"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.runner.stdout is not None
        self.logs.attach(RUNNER, self.runner.stdout)

    # --- running ---

    def convert(
        self, bucket: Bucket, documents: dict[str, bytes], timeout_s: float
    ) -> dict[str, JobRecord]:
        """Upload each document (``rel: PDF``) to the applied bucket as a user does; their
        records once every one has one. Raises :class:`RehearsalFailed` at the first denied
        request or if the runner stops."""
        for rel, data in documents.items():
            upload(bucket, rel, data)

        def look(_: dict[str, JobRecord]) -> None:
            if (failure := self.failure()) is not None:
                raise failure

        try:
            return await_records(bucket, documents, timeout_s=timeout_s, on_look=look)
        except StillConverting as exc:
            raise self.failure() or RehearsalFailed(str(exc)) from exc

    def timed(self, bucket: Bucket, documents: dict[str, bytes], timeout_s: float) -> Outcome:
        """:meth:`convert`, with what it took and what the roles used."""
        started = time.monotonic()
        records = self.convert(bucket, documents, timeout_s)
        seconds = time.monotonic() - started
        requests: dict[str, int] = {}
        for (role, _, _), count in self.double.seen.items():
            requests[role] = requests.get(role, 0) + count
        # The other roles (the ECS execution role) sign nothing here: AWS's agents use them.
        mine = {f.role for f in self.deployment.functions.values()} | {self.deployment.runner.role}
        unused = {role: found for role, found in self.double.unused().items() if role in mine}
        denied = [self.explain(d) for d in dict.fromkeys(self.double.denied)]
        return Outcome(records, seconds, unused, requests, denied)

    def failure(self) -> RehearsalFailed | None:
        if self.double.denied:
            return RehearsalFailed(
                "; ".join(self.explain(d) for d in dict.fromkeys(self.double.denied))
            )
        if self.runner is not None and (code := self.runner.poll()) is not None:
            return RehearsalFailed(f"the runner exited with code {code}; its log says why")
        return None

    def explain(self, denial: Denial) -> str:
        """A denial, with the applied policy's statement that grants what was denied."""
        if denial.denied_by:
            return str(denial)
        applied = self.deployment.policies.get(denial.role)
        granting = (
            Role(denial.role, applied).granting(denial.action, denial.resource) if applied else []
        )
        if granting:
            return f"{denial}: the rehearsed policy lacks statement {', '.join(granting)}"
        return f"{denial}: no statement of its applied policy grants it"

    # --- stopping ---

    def stop(self) -> None:
        for dispatcher in self.dispatchers:
            dispatcher.stop(wait=False)
        if self.runner is not None:
            self.runner.terminate()
            try:
                self.runner.wait(60)
            except subprocess.TimeoutExpired:
                self.runner.kill()
                self.runner.wait()
            if self.runner.stdin is not None:
                self.runner.stdin.close()
        for dispatcher in self.dispatchers:
            dispatcher.stop()
        self.double.stop()
        if self._own_logs:
            self.logs.close()
        else:
            self.logs.wait()
        shutil.rmtree(self._folder, ignore_errors=True)

    def __enter__(self) -> Rehearsal:
        self.start()
        return self


def comparable(record: JobRecord) -> dict[str, Any]:
    """What two runs of one document must agree on: not the job id, versions or timings."""
    return {
        "status": record.status,
        "pages": record.pages,
        "converter": record.converter,
        "converter_version": record.converter_version,
        "ocr_pages": record.ocr_pages,
        "markdown": record.markdown,
        "error": record.error.code if record.error else None,
    }


def _entry_point(handler: str) -> str:
    """Lambda's ``module.function`` as the environments' ``module:function``."""
    module, _, function = handler.rpartition(".")
    return f"{module}:{function}"
