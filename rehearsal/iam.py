"""An IAM double for S3, SQS and EventBridge's PutEvents: a proxy in front of moto that answers
each request the way AWS answers the role that signed it, under that role's identity policy.

The policies are Terraform's, never rules written per test: the rehearsal's are the applied
ones (read from the state, :mod:`rehearsal.deployment`); the tests' are
``terraform/policies.json`` (``terraform/scripts/policies_json.py`` writes it from the modules'
plans; `terraform test` fails when it is stale), with the test's bucket and queue prefix
standing for the plan's (:meth:`IamDouble.planned`). A request is signed with a role's own
access key (:meth:`IamDouble.credentials`), as each Lambda and the runner task sign theirs on
AWS. The double maps it to its IAM action and resource, forwards it if the policy allows it,
and otherwise answers 403 AccessDenied. And as S3 does: a GET or HEAD of a missing key,
allowed, is a 403, not a 404, for a role without s3:ListBucket on the bucket.

Conditions modelled:

- key prefixes, by the resource ARNs of each statement (IAM's ``*`` and ``?``);
- KMS: with ``data_keys`` (a bucket's or queue's SSE-KMS key), a PutObject needs
  kms:GenerateDataKey on the key and a GetObject of an object kms:Decrypt ("Permissions",
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingKMSEncryption.html); a
  SendMessage to an encrypted queue kms:GenerateDataKey and kms:Decrypt, a ReceiveMessage
  kms:Decrypt ("Configure KMS permissions for producers/consumers",
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-key-management.html);
- resource policies' Deny statements for every principal whose one condition is
  ``Bool aws:SecureTransport`` (the queues' TLS-only policies), evaluated with the transport the
  request came by: this double listens on plain HTTP unless given a TLS context.

An identity-policy statement with any condition, or a resource-policy Deny with another one,
is refused at load: a policy that grows one fails here first.
"""

from __future__ import annotations

import json
import re
import ssl
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from xml.etree import ElementTree

from embedded.proxy import LoopbackProxy, ProxyHandler

POLICIES = Path(__file__).resolve().parents[1] / "terraform" / "policies.json"
KEY_PREFIX = "PAGEFLEETROLE"  # access key ids are <prefix><role>
# What the double can tell used or unused: the services it answers, and the KMS use they imply.
SEEN_SERVICES = ("s3", "sqs", "kms", "events")

# Bucket subresources of a GET that are not a listing, and object subresources: their own
# actions, which no pagefleet role has.
_OBJECT_SUBRESOURCES = {"tagging": "ObjectTagging", "acl": "ObjectAcl", "attributes": "Object"}
# SQS's batch actions are authorised by the single ones.
_SQS_BATCH = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
_LISTING = {
    "list-type",
    "prefix",
    "delimiter",
    "continuation-token",
    "max-keys",
    "start-after",
    "encoding-type",
    "fetch-owner",
}


def _pattern(glob: str, *, ignore_case: bool) -> re.Pattern[str]:
    """IAM's wildcards: ``*`` any run of characters (``/`` too), ``?`` any one."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob)
    return re.compile(body, re.IGNORECASE if ignore_case else 0)


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


@dataclass(frozen=True)
class Statement:
    sid: str
    allow: bool
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    # A resource policy's TLS-only Deny: applies only to a request that came without TLS.
    insecure_transport_only: bool = False

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Statement:
        """An identity policy's statement."""
        unknown = set(raw) - {"Sid", "Effect", "Action", "Resource"}
        if unknown:
            raise ValueError(f"the IAM double cannot evaluate {sorted(unknown)} in {raw}")
        return cls(
            sid=raw.get("Sid", ""),
            allow=raw["Effect"] == "Allow",
            actions=tuple(_listed(raw["Action"])),
            resources=tuple(_listed(raw["Resource"])),
        )

    @classmethod
    def of_resource_policy(cls, raw: dict[str, Any]) -> Statement | None:
        """A resource policy's statement as it bears on the roles: its Deny for everyone
        (``Principal: "*"``); None for one that names other principals (AWS services)."""
        principal = raw.get("Principal")
        if principal not in ("*", {"AWS": "*"}):
            return None
        unknown = set(raw) - {"Sid", "Effect", "Action", "Resource", "Principal", "Condition"}
        condition = raw.get("Condition")
        if (
            unknown
            or raw["Effect"] != "Deny"
            or condition != {"Bool": {"aws:SecureTransport": "false"}}
        ):
            raise ValueError(f"the IAM double cannot evaluate {raw}")
        return cls(
            sid=raw.get("Sid", ""),
            allow=False,
            actions=tuple(_listed(raw["Action"])),
            resources=tuple(_listed(raw["Resource"])),
            insecure_transport_only=True,
        )

    def covers(self, action: str, resource: str) -> bool:
        return any(_pattern(a, ignore_case=True).fullmatch(action) for a in self.actions) and any(
            _pattern(r, ignore_case=False).fullmatch(resource) for r in self.resources
        )


class Role:
    def __init__(self, name: str, policy: dict[str, Any]) -> None:
        self.name = name
        self.policy = policy
        self.statements = [Statement.of(s) for s in policy["Statement"]]

    def allows(self, action: str, resource: str) -> bool:
        """IAM's evaluation for one identity policy: an explicit deny wins, else an allow."""
        covering = [s for s in self.statements if s.covers(action, resource)]
        return bool(covering) and all(s.allow for s in covering)

    def granting(self, action: str, resource: str) -> list[str]:
        """The Sids of the Allow statements that grant ``action`` on ``resource``."""
        return [s.sid for s in self.statements if s.allow and s.covers(action, resource)]


@dataclass(frozen=True)
class Request:
    """One request as IAM sees it: the actions it needs, each on its resource."""

    service: str  # s3 | sqs
    needs: tuple[tuple[str, str], ...]
    reads_object: str | None = None  # the object ARN of a GET/HEAD, for the 404 rule
    bucket_arn: str | None = None
    decrypts: bool = False  # a GET of an object: kms:Decrypt once it is found


@dataclass(frozen=True)
class Denial:
    role: str
    action: str
    resource: str
    # The resource policy statement that denied it (TLS-only), or "" for a missing allow.
    denied_by: str = ""

    def __str__(self) -> str:
        if self.denied_by:
            return f"{self.role} may not {self.action} on {self.resource}: {self.denied_by}"
        return f"{self.role} may not {self.action} on {self.resource}"


class IamDouble(LoopbackProxy):
    """The names in the policies are the requests' own, unless ``bucket_alias`` and
    ``queue_prefix_alias`` map a request's bucket and queue prefix onto the policies' (the
    tests' stacks standing for the plan's). ``arn_tail``: ``<region>:<account>`` of queue ARNs.
    ``data_keys``: the SSE-KMS key of each encrypted bucket and queue, by its ARN.
    ``resource_policies``: each queue's or bucket's policy, by its ARN. ``tls``: serve HTTPS
    with this context (requests then come by secure transport)."""

    name = "iam-double"

    def __init__(
        self,
        upstream: str,
        policies: Mapping[str, dict[str, Any]],
        *,
        arn_tail: str,
        entry_points: Mapping[str, str] | None = None,
        bucket_alias: Mapping[str, str] | None = None,
        queue_prefix_alias: tuple[str, str] | None = None,
        data_keys: Mapping[str, str] | None = None,
        resource_policies: Mapping[str, dict[str, Any]] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__(upstream)
        self.roles = {name: Role(name, policy) for name, policy in policies.items()}
        self.entry_points = dict(entry_points or {})
        self.arn_tail = arn_tail
        self.bucket_alias = dict(bucket_alias or {})
        self.queue_prefix_alias = queue_prefix_alias
        self.data_keys = dict(data_keys or {})
        self.resource_statements: dict[str, list[Statement]] = {
            arn: [
                s
                for raw in _listed_statements(policy)
                if (s := Statement.of_resource_policy(raw)) is not None
            ]
            for arn, policy in (resource_policies or {}).items()
        }
        self.tls = tls
        self._lock = threading.Lock()
        # (role, action, "allowed" | "denied" | "missing as 403") of every request
        self.seen: Counter[tuple[str, str, str]] = Counter()
        # (role, action, resource) of every allowed request and of the KMS use it implies
        self.used: set[tuple[str, str, str]] = set()
        self.denied: list[Denial] = []

    @classmethod
    def planned(cls, upstream: str, bucket: str, queue_prefix: str) -> IamDouble:
        """The roles of ``terraform/policies.json``, the test stack's ``bucket`` and
        ``queue_prefix`` standing for the plan's."""
        document = json.loads(POLICIES.read_text())
        roles = document["roles"]
        return cls(
            upstream,
            {name: role["policy"] for name, role in roles.items()},
            arn_tail=_planned_arn_tail(roles),
            entry_points={name: role["entry_point"] for name, role in roles.items()},
            bucket_alias={bucket: document["bucket"]},
            queue_prefix_alias=(queue_prefix, document["queue_prefix"]),
        )

    def start(self) -> str:
        if self.tls is None:
            return super().start()
        handler = type("Handler", (self.handler,), {"owner": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.socket = self.tls.wrap_socket(server.socket, server_side=True)
        self.url = self._serve(server, self.name).replace("http://", "https://", 1)
        return self.url

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

    def unused(self) -> dict[str, list[str]]:
        """Per role, each ``Sid: action on resource`` of the services this double sees
        (:data:`SEEN_SERVICES`) that its policy grants and no allowed request used (least
        privilege, measured over what went through this double)."""
        with self._lock:
            used = set(self.used)
        found: dict[str, list[str]] = {}
        for name, role in self.roles.items():
            mine = [(a, r) for who, a, r in used if who == name]
            for statement in role.statements:
                if not statement.allow:
                    continue
                for action in statement.actions:
                    if action.split(":", 1)[0] not in SEEN_SERVICES:
                        continue
                    for resource in statement.resources:
                        single = Statement(statement.sid, True, (action,), (resource,))
                        if not any(single.covers(a, r) for a, r in mine):
                            found.setdefault(name, []).append(
                                f"{statement.sid}: {action} on {resource}"
                            )
        return found

    # --- what is asked ---

    def _bucket_arn(self, bucket: str) -> str:
        return f"arn:aws:s3:::{self.bucket_alias.get(bucket, bucket)}"

    def _queue_arn(self, name: str) -> str:
        if self.queue_prefix_alias is not None:
            mine, theirs = self.queue_prefix_alias
            if name.startswith(mine + "-"):
                name = theirs + name[len(mine) :]
        return f"arn:aws:sqs:{self.arn_tail}:{name}"

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
        data_key = self.data_keys.get(bucket_arn)
        if method in {"GET", "HEAD"}:
            action = f"s3:Get{sub or 'Object'}{version}"
            return Request(
                "s3",
                ((action, arn),),
                arn if sub is None else None,
                bucket_arn,
                decrypts=data_key is not None and method == "GET" and sub is None,
            )
        if method in {"PUT", "POST"}:
            needs = [(f"s3:Put{sub or 'Object'}", arn)]
            if source := headers.get("x-amz-copy-source"):
                needs.append(("s3:GetObject", f"arn:aws:s3:::{unquote(source).lstrip('/')}"))
                if data_key is not None:
                    needs.append(("kms:Decrypt", data_key))
            if data_key is not None and sub is None:
                needs.append(("kms:GenerateDataKey", data_key))
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
        if method in {"GET", "HEAD"} and set(query) <= _LISTING:
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
        arn = self._queue_arn(name)
        needs = [(action, arn)]
        if (data_key := self.data_keys.get(arn)) is not None:
            if action == "sqs:SendMessage":
                needs += [("kms:GenerateDataKey", data_key), ("kms:Decrypt", data_key)]
            elif action == "sqs:ReceiveMessage":
                needs.append(("kms:Decrypt", data_key))
        return Request("sqs", tuple(needs))

    def events_request(self, target: str, body: bytes) -> Request:
        """EventBridge (its JSON protocol): PutEvents on each entry's bus."""
        operation = target.rsplit(".", 1)[-1]
        fields = json.loads(body or b"{}")
        buses = {e.get("EventBusName") or "default" for e in fields.get("Entries", [])} or {""}
        needs = tuple(
            (
                f"events:{operation}",
                bus
                if bus.startswith("arn:")
                else f"arn:aws:events:{self.arn_tail}:event-bus/{bus}",
            )
            for bus in sorted(buses)
        )
        return Request("events", needs)

    def decide(self, role: Role | None, action: str, resource: str) -> Denial | None:
        """Why ``role`` may not ``action`` on ``resource`` (None: it may)."""
        who = role.name if role else "nobody"
        for statement in self.resource_statements.get(resource.split("/", 1)[0], []):
            denies = statement.covers(action, resource) and (
                not statement.insecure_transport_only or self.tls is None
            )
            if denies:
                return Denial(who, action, resource, f"denied by {statement.sid}")
        if role is None or not role.allows(action, resource):
            return Denial(who, action, resource)
        return None


def _listed_statements(policy: dict[str, Any]) -> list[dict[str, Any]]:
    statements: list[dict[str, Any]] = policy["Statement"]
    return statements


def _planned_arn_tail(roles: dict[str, Any]) -> str:
    """``<region>:<account>`` of the plan's SQS resources."""
    for role in roles.values():
        for statement in role["policy"]["Statement"]:
            for resource in statement["Resource"]:
                if resource.startswith("arn:aws:sqs:"):
                    return ":".join(resource.split(":")[3:5])
    raise AssertionError("no SQS resource in the policies")


class _IamHandler(ProxyHandler):
    owner: IamDouble

    def _handle(self) -> None:
        body = self._read_body()
        double = self.owner
        target = self.headers.get("X-Amz-Target", "")
        # SQS: its JSON protocol names the operation in a header; its query protocol posts a
        # form to the root, where no S3 request but ListBuckets (a GET) goes.
        if target.startswith("AWSEvents."):
            request = double.events_request(target, body)
        elif target or (self.command == "POST" and urlsplit(self.path).path in {"", "/"}):
            request = double.sqs_request(target, body)
        else:
            request = double.s3_request(self.command, self.path, self.headers, body)
        role = double.role_of_request(self.headers.get("Authorization", ""))
        who = role.name if role else "nobody"
        action = request.needs[0][0] if request.needs else "?"
        for need, resource in request.needs:
            if (denial := double.decide(role, need, resource)) is not None:
                self._refuse(denial, action)
                return
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
        used = list(request.needs)
        if request.decrypts and status < 300 and request.bucket_arn is not None:
            # The object came back encrypted under the bucket's key: reading it decrypts.
            key = double.data_keys[request.bucket_arn]
            if (denial := double.decide(role, "kms:Decrypt", key)) is not None:
                self._refuse(denial, action)
                return
            used.append(("kms:Decrypt", key))
        double.note(who, action, "allowed")
        with double._lock:
            double.used.update((who, a, r) for a, r in used)
        self._reply(status, reason, headers, payload)

    def _refuse(self, denial: Denial, action: str) -> None:
        double = self.owner
        double.note(denial.role, action, "denied")
        if denial.action != action:
            double.note(denial.role, denial.action, "denied")
        with double._lock:
            double.denied.append(denial)
        self._deny(str(denial))

    def _deny(self, message: str) -> None:
        self._send_aws_error(403, "AccessDenied", "AccessDeniedException", message)


IamDouble.handler = _IamHandler


@contextmanager
def iam_double(upstream: str, bucket: str, queue_prefix: str) -> Iterator[IamDouble]:
    """The planned roles (:meth:`IamDouble.planned`), serving until the block ends."""
    double = IamDouble.planned(upstream, bucket, queue_prefix)
    double.start()
    try:
        yield double
    finally:
        double.stop()
