"""A loopback HTTP proxy in front of the embedded moto server: the base of the proxies that
stand between pagefleet's code and its endpoint (the tests' fault-injecting proxy, the
rehearsal's IAM double). It listens on 127.0.0.1 only and forwards only to a loopback upstream.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

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
