"""A fault-injecting HTTP proxy for S3 and SQS: the network between pagefleet and AWS, at its worst.

Put it in front of a moto server and point the handlers and the runner at it. At a seeded rate it
answers a request with a 5xx without passing it on, passes it on and drops the reply (the request
took effect, the caller never hears: the case that makes retries write twice), or passes it on
after a delay. Everything else goes through untouched.

Bounded, for this machine's rules: it listens on 127.0.0.1 only, forwards only to a loopback
upstream, serves at most ``max_requests`` requests (then every request fails fast with 503), and
waits at most ``upstream_timeout_s`` for the upstream.

Requests whose User-Agent names the embedded stack itself (its event source mappings and janitor
stand in for AWS's own services) are spared: on AWS they never cross the caller's network.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from embedded.provision import STACK_APP_ID
from embedded.server import Served

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
}


@dataclass
class FaultRates:
    """Fractions of requests: answered 5xx, replies lost, delayed (by ``delay_s`` at most)."""

    error: float = 0.0
    lost: float = 0.0
    delay: float = 0.0
    delay_s: tuple[float, float] = (0.05, 0.3)

    def __post_init__(self) -> None:
        if self.error + self.lost + self.delay > 1:
            raise ValueError("fault rates add up to more than 1")


class LoopbackProxy(Served):
    """An HTTP proxy on 127.0.0.1 in front of a loopback upstream; its ``handler`` decides what
    each request gets."""

    handler: type[ProxyHandler]
    name = "proxy"

    def __init__(self, upstream: str, *, upstream_timeout_s: float = 60.0) -> None:
        parts = urlsplit(upstream)
        assert parts.hostname is not None and parts.port is not None, upstream
        if not ipaddress.ip_address(socket.gethostbyname(parts.hostname)).is_loopback:
            raise ValueError(f"the proxy forwards to loopback only, not {upstream}")
        self.upstream = (parts.hostname, parts.port)
        self.upstream_timeout_s = upstream_timeout_s

    def start(self) -> str:
        # The handler class of this proxy, told which proxy it serves.
        handler = type("Handler", (self.handler,), {"owner": self})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        return self._serve(server, self.name)


class FaultProxy(LoopbackProxy):
    name = "fault-proxy"

    def __init__(
        self,
        upstream: str,
        rates: FaultRates | None = None,
        *,
        seed: int = 13,
        max_requests: int = 200_000,
        upstream_timeout_s: float = 60.0,
    ) -> None:
        super().__init__(upstream, upstream_timeout_s=upstream_timeout_s)
        self.rates = rates or FaultRates()
        self.max_requests = max_requests
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()  # passed, error, lost, delayed, spared, refused

    def set_rates(self, rates: FaultRates) -> None:
        with self._lock:
            self.rates = rates

    @property
    def faults(self) -> int:
        return self.counts["error"] + self.counts["lost"] + self.counts["delayed"]

    # --- decisions ---

    def decide(self, user_agent: str) -> str:
        """What happens to one request: pass, error, lost, delay (or refuse, past the cap)."""
        with self._lock:
            total = sum(self.counts.values())
            if total >= self.max_requests:
                self.counts["refused"] += 1
                return "refuse"
            if f"app/{STACK_APP_ID}" in user_agent:
                self.counts["spared"] += 1
                return "pass"
            draw = self._rng.random()
            rates = self.rates
            if draw < rates.error:
                kind = "error"
            elif draw < rates.error + rates.lost:
                kind = "lost"
            elif draw < rates.error + rates.lost + rates.delay:
                kind = "delay"
            else:
                kind = "pass"
            self.counts["delayed" if kind == "delay" else "passed" if kind == "pass" else kind] += 1
            return kind

    def delay_s(self) -> float:
        with self._lock:
            return self._rng.uniform(*self.rates.delay_s)


class ProxyHandler(BaseHTTPRequestHandler):
    """Reads a request, forwards it upstream over a kept connection, replies; subclasses
    decide in :meth:`_handle`."""

    owner: LoopbackProxy
    protocol_version = "HTTP/1.1"  # keep-alive, as boto's connection pools expect
    _local = threading.local()

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request otherwise

    def do_GET(self) -> None:
        self._handle()

    do_PUT = do_POST = do_DELETE = do_HEAD = do_GET

    def _handle(self) -> None:
        self._reply(*self._forward(self._read_body()))

    def _reply(
        self, status: int, reason: str, headers: list[tuple[str, str]], payload: bytes
    ) -> None:
        self.send_response_only(status, reason)
        for name, value in headers:
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _send_aws_error(self, status: int, code: str, sqs_type: str, message: str) -> None:
        """An error as S3 (XML) or SQS's JSON protocol (``sqs_type``) spells it."""
        if self.headers.get("X-Amz-Target"):  # SQS's JSON protocol
            payload = json.dumps(
                {"__type": f"com.amazonaws.sqs#{sqs_type}", "message": message}
            ).encode()
            headers = [("Content-Type", "application/x-amz-json-1.0")]
            if status < 500:  # the caller's fault: botocore reads the query protocol's code
                headers.append(("x-amzn-query-error", f"{code};Sender"))
        else:
            payload = (
                "<?xml version='1.0' encoding='UTF-8'?>"
                f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
            ).encode()
            headers = [("Content-Type", "application/xml")]
        self._reply(status, "", headers, payload)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length", 0) or 0)
        return self.rfile.read(length) if length else b""

    def _forward(self, body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        if body or self.command in {"PUT", "POST"}:
            headers["Content-Length"] = str(len(body))
        for attempt in range(2):  # a pooled upstream connection the server closed: once more
            conn = self._upstream()
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                response = conn.getresponse()
                payload = response.read()
                return response.status, response.reason, response.getheaders(), payload
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _upstream(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            host, port = self.owner.upstream
            conn = http.client.HTTPConnection(host, port, timeout=self.owner.upstream_timeout_s)
            self._local.conn = conn
        return conn


class _FaultHandler(ProxyHandler):
    owner: FaultProxy

    def _handle(self) -> None:
        body = self._read_body()
        kind = self.owner.decide(self.headers.get("User-Agent", ""))
        if kind in {"error", "refuse"}:
            self._send_error(kind)
            return
        if kind == "delay":
            time.sleep(self.owner.delay_s())
        status, reason, headers, payload = self._forward(body)
        if kind == "lost":
            # The upstream did it; the caller never hears. Closing without a reply is what a
            # connection reset mid-response looks like to an HTTP client.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._reply(status, reason, headers, payload)

    def _send_error(self, kind: str) -> None:
        status = 503 if kind == "refuse" else 500
        self._send_aws_error(status, "InternalError", "InternalError", f"fault proxy: {kind}")


FaultProxy.handler = _FaultHandler


@contextmanager
def fault_proxy(
    upstream: str, rates: FaultRates | None = None, seed: int = 13
) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream, rates, seed=seed)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
