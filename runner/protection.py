"""ECS task scale-in protection, held while this task's workers hold chunks.

Protection only spares a busy task from a scale-in; it is no correctness guarantee (a drained or
killed worker's chunk comes back through SQS). So a failed call is logged and retried, never fatal.
See https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-scale-in-protection-endpoint.html
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

    from runner.telemetry import Telemetry

# After a failed call, wait this long before the next attempt (the agent forwards to a
# throttled ECS API).
RETRY_S = 10.0
REQUEST_TIMEOUT_S = 5.0


class TaskProtection:
    """Turns protection on when busy, renews it before it expires, drops it after idling."""

    def __init__(
        self,
        agent_uri: str,
        expires_minutes: int,
        idle_s: float,
        telemetry: Telemetry,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._url = f"{agent_uri.rstrip('/')}/task-protection/v1/state"
        self._expires_minutes = expires_minutes
        self._idle_s = idle_s
        self._telemetry = telemetry
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self.enabled = False
        self._renew_at = 0.0
        self._last_busy = 0.0
        self._next_try = 0.0

    @classmethod
    def from_env(
        cls, expires_minutes: int, idle_s: float, telemetry: Telemetry
    ) -> TaskProtection | None:
        """Protection through the ECS agent, or None outside ECS (no ``ECS_AGENT_URI``)."""
        uri = os.environ.get("ECS_AGENT_URI")
        return cls(uri, expires_minutes, idle_s, telemetry) if uri else None

    async def update(self, busy: bool) -> None:
        now = self._clock()
        if now < self._next_try:
            return
        if busy:
            self._last_busy = now
            if not self.enabled or now >= self._renew_at:
                await self._put(True, now)
        elif self.enabled and now - self._last_busy >= self._idle_s:
            # Idling a while first: dropping protection between two chunks would cost two calls
            # per chunk and gain nothing.
            await self._put(False, now)

    async def _put(self, enabled: bool, now: float) -> None:
        import aiohttp  # here: only a task on ECS calls the agent (~0.3 s of CPU to import)

        body: dict[str, object] = {"ProtectionEnabled": enabled}
        if enabled:
            body["ExpiresInMinutes"] = self._expires_minutes
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
            )
        try:
            async with self._session.put(self._url, json=body) as response:
                reply = await response.json(content_type=None)
                # The agent answers 200 with a `failure` object when ECS refused the change.
                if response.status != 200 or "failure" in (reply or {}):
                    raise RuntimeError(f"HTTP {response.status}: {reply}")
        except (aiohttp.ClientError, TimeoutError, ValueError, RuntimeError) as exc:
            self._next_try = now + RETRY_S
            self._telemetry.event(
                "protection_failed", level="warning", enabled=enabled, error=str(exc)
            )
            return
        self.enabled = enabled
        # Renew at half the lease, so a slow or failed renewal still lands before expiry.
        self._renew_at = now + self._expires_minutes * 30.0
        self._telemetry.event(
            "protection", enabled=enabled, expires_minutes=body.get("ExpiresInMinutes")
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
