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

import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from embedded.provision import STACK_APP_ID
from embedded.proxy import LoopbackProxy, ProxyHandler


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
