"""An IAM double for S3 and SQS: a proxy in front of moto that answers each request the way AWS
answers the role that signed it, under that role's policy as Terraform plans it.

The policies are ``terraform/policies.json`` (``terraform/scripts/policies_json.py`` writes it
from the modules' plans; `terraform test` fails when it is stale), never rules written per
test. A request is signed with a role's own access key (:meth:`IamDouble.credentials`), as
each Lambda and the runner task sign theirs on AWS. The double maps it to its IAM action and
resource (the test's bucket and queue prefix stand for the plan's), forwards it if the policy
allows it, and otherwise answers 403 AccessDenied. And as S3 does: a GET or HEAD of a missing
key, allowed, is a 403, not a 404, for a role without s3:ListBucket on the bucket.

What the double does not model: conditions (a statement with one is refused at load, so a
policy that grows one fails here first), resource policies, KMS.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from xml.etree import ElementTree

from tests.fault_proxy import LoopbackProxy, ProxyHandler

POLICIES = Path(__file__).resolve().parents[1] / "terraform" / "policies.json"
KEY_PREFIX = "PAGEFLEETROLE"  # access key ids are <prefix><role>

# Bucket subresources of a GET that are not a listing, and object subresources: their own
# actions, which no pagefleet role has.
_OBJECT_SUBRESOURCES = {"tagging": "ObjectTagging", "acl": "ObjectAcl", "attributes": "Object"}
# SQS's batch actions are authorised by the single ones.
_SQS_BATCH = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}


def _pattern(glob: str, *, ignore_case: bool) -> re.Pattern[str]:
    """IAM's wildcards: ``*`` any run of characters (``/`` too), ``?`` any one."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


@dataclass(frozen=True)
class Statement:
    allow: bool
    actions: tuple[re.Pattern[str], ...]
    resources: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Statement:
        unknown = set(raw) - {"Sid", "Effect", "Action", "Resource"}
        if unknown:
            raise ValueError(f"the IAM double cannot evaluate {sorted(unknown)} in {raw}")

        def listed(value: str | list[str]) -> list[str]:
            return [value] if isinstance(value, str) else value

        return cls(
            allow=raw["Effect"] == "Allow",
            actions=tuple(_pattern(a, ignore_case=True) for a in listed(raw["Action"])),
            resources=tuple(_pattern(r, ignore_case=False) for r in listed(raw["Resource"])),
        )

    def covers(self, action: str, resource: str) -> bool:
        return any(a.fullmatch(action) for a in self.actions) and any(
            r.fullmatch(resource) for r in self.resources
        )


class Role:
    def __init__(self, name: str, policy: dict[str, Any]) -> None:
        self.name = name
        self.statements = [Statement.of(s) for s in policy["Statement"]]

    def allows(self, action: str, resource: str) -> bool:
        """IAM's evaluation for one identity policy: an explicit deny wins, else an allow."""
        covering = [s for s in self.statements if s.covers(action, resource)]
        return bool(covering) and all(s.allow for s in covering)


@dataclass(frozen=True)
class Request:
    """One request as IAM sees it: the actions it needs, each on its resource."""

    service: str  # s3 | sqs
    needs: tuple[tuple[str, str], ...]
    reads_object: str | None = None  # the object ARN of a GET/HEAD, for the 404 rule
    bucket_arn: str | None = None


class IamDouble(LoopbackProxy):
    """``bucket`` and ``queue_prefix``: the test stack's names, standing for the plan's."""

    name = "iam-double"

    def __init__(self, upstream: str, bucket: str, queue_prefix: str) -> None:
        super().__init__(upstream)
        document = json.loads(POLICIES.read_text())
        self.plan_bucket: str = document["bucket"]
        self.plan_prefix: str = document["queue_prefix"]
        self.bucket = bucket
        self.queue_prefix = queue_prefix
        self.roles = {name: Role(name, role["policy"]) for name, role in document["roles"].items()}
        self.entry_points: dict[str, str] = {
            name: role["entry_point"] for name, role in document["roles"].items()
        }
        self._lock = threading.Lock()
        # (role, action, "allowed" | "denied" | "missing as 403") of every request
        self.seen: Counter[tuple[str, str, str]] = Counter()

    # --- who is asking ---

    def credentials(self, role: str) -> dict[str, str]:
        """The environment that makes a process sign as ``role``."""
        assert role in self.roles, role
        return {
            "AWS_ACCESS_KEY_ID": KEY_PREFIX + role,
            "AWS_SECRET_ACCESS_KEY": "iam-double",
            "AWS_SESSION_TOKEN": "iam-double",
        }

    def role_of(self, entry_point: str) -> str:
        """The role whose function runs ``entry_point`` (``handlers.x:y`` or ``handlers.x.y``;
        ``python -m runner`` for the runner's task role)."""
        wanted = entry_point.replace(":", ".")
        return next(name for name, point in self.entry_points.items() if point == wanted)

    def role_of_request(self, authorization: str) -> Role | None:
        match = re.search(r"Credential=([^/]+)/", authorization)
        key = match.group(1) if match else ""
        return self.roles.get(key[len(KEY_PREFIX) :]) if key.startswith(KEY_PREFIX) else None

    def denials(self) -> list[tuple[str, str]]:
        return [(role, action) for role, action, what in self.seen if what == "denied"]

    def note(self, role: str, action: str, what: str) -> None:
        with self._lock:
            self.seen[(role, action, what)] += 1

    # --- what is asked ---

    @cached_property
    def _arn_tail(self) -> str:
        """``<region>:<account>`` of the plan's SQS resources."""
        for role in json.loads(POLICIES.read_text())["roles"].values():
            for statement in role["policy"]["Statement"]:
                for resource in statement["Resource"]:
                    if resource.startswith("arn:aws:sqs:"):
                        return ":".join(resource.split(":")[3:5])
        raise AssertionError("no SQS resource in the policies")

    def _bucket_arn(self, bucket: str) -> str:
        return f"arn:aws:s3:::{self.plan_bucket if bucket == self.bucket else bucket}"

    def _queue_arn(self, name: str) -> str:
        if name.startswith(self.queue_prefix + "-"):
            name = self.plan_prefix + name[len(self.queue_prefix) :]
        return f"arn:aws:sqs:{self._arn_tail}:{name}"

    def s3_request(self, method: str, path: str, headers: Any, body: bytes) -> Request:
        parts = urlsplit(path)
        query = parse_qs(parts.query, keep_blank_values=True)
        bucket, _, key = unquote(parts.path).lstrip("/").partition("/")
        bucket_arn = self._bucket_arn(bucket)
        if not key:
            return Request("s3", self._bucket_needs(method, query, bucket_arn, body), None)
        arn = f"{bucket_arn}/{key}"
        version = "Version" if "versionId" in query else ""
        sub = next((_OBJECT_SUBRESOURCES[q] for q in query if q in _OBJECT_SUBRESOURCES), None)
        if method in {"GET", "HEAD"}:
            action = f"s3:Get{sub or 'Object'}{version}"
            return Request("s3", ((action, arn),), arn if sub is None else None, bucket_arn)
        if method in {"PUT", "POST"}:
            needs = [(f"s3:Put{sub or 'Object'}", arn)]
            if source := headers.get("x-amz-copy-source"):
                needs.append(("s3:GetObject", f"arn:aws:s3:::{unquote(source).lstrip('/')}"))
            return Request("s3", tuple(needs))
        return Request("s3", ((f"s3:DeleteObject{version}", arn),))

    def _bucket_needs(
        self, method: str, query: dict[str, list[str]], bucket_arn: str, body: bytes
    ) -> tuple[tuple[str, str], ...]:
        if method == "POST" and "delete" in query:
            keys = [
                element.text or ""
                for element in ElementTree.fromstring(body).iter()
                if element.tag.endswith("Key")
            ]
            return tuple(("s3:DeleteObject", f"{bucket_arn}/{k}") for k in keys)
        if method in {"GET", "HEAD"} and set(query) <= {
            "list-type",
            "prefix",
            "delimiter",
            "continuation-token",
            "max-keys",
            "start-after",
            "encoding-type",
            "fetch-owner",
        }:
            return (("s3:ListBucket", bucket_arn),)
        # Any other bucket operation (configuration, versions): none a role here is given.
        return ((f"s3:{method}Bucket?{'&'.join(sorted(query))}", bucket_arn),)

    def sqs_request(self, target: str, body: bytes) -> Request:
        if target:  # the JSON protocol
            operation = target.rsplit(".", 1)[-1]
            fields = json.loads(body or b"{}")
        else:  # the query protocol
            form = parse_qs(body.decode())
            operation = form.get("Action", [""])[0]
            fields = {k: v[0] for k, v in form.items()}
        name = fields.get("QueueName") or fields.get("QueueUrl", "").rstrip("/").split("/")[-1]
        action = "sqs:" + _SQS_BATCH.get(operation, operation)
        return Request("sqs", ((action, self._queue_arn(name)),))


class _IamHandler(ProxyHandler):
    owner: IamDouble

    def _handle(self) -> None:
        body = self._read_body()
        double = self.owner
        target = self.headers.get("X-Amz-Target", "")
        # SQS: its JSON protocol names the operation in a header; its query protocol posts a
        # form to the root, where no S3 request but ListBuckets (a GET) goes.
        if target or (self.command == "POST" and urlsplit(self.path).path in {"", "/"}):
            request = double.sqs_request(target, body)
        else:
            request = double.s3_request(self.command, self.path, self.headers, body)
        role = double.role_of_request(self.headers.get("Authorization", ""))
        who = role.name if role else "nobody"
        for action, resource in request.needs:
            if role is None or not role.allows(action, resource):
                double.note(who, action, "denied")
                self._deny(f"{who} may not {action} on {resource}")
                return
        action = request.needs[0][0] if request.needs else "?"
        status, reason, headers, payload = self._forward(body)
        if (
            status == 404
            and request.reads_object is not None
            and request.bucket_arn is not None
            and role is not None
            and not role.allows("s3:ListBucket", request.bucket_arn)
        ):
            # S3 tells a missing key only to whoever may list the bucket.
            double.note(who, action, "missing as 403")
            self._deny(f"{who} may not {action} on {request.reads_object}")
            return
        double.note(who, action, "allowed")
        self._reply(status, reason, headers, payload)

    def _deny(self, message: str) -> None:
        self._send_aws_error(403, "AccessDenied", "AccessDeniedException", message)


IamDouble.handler = _IamHandler


@contextmanager
def iam_double(upstream: str, bucket: str, queue_prefix: str) -> Iterator[IamDouble]:
    double = IamDouble(upstream, bucket, queue_prefix)
    double.start()
    try:
        yield double
    finally:
        double.stop()
