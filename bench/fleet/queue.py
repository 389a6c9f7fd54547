"""An SQS standard queue in simulated time: visibility, receive counts, redrive to a DLQ.

Only what the fleet's behaviour depends on: a received message is invisible until it is
deleted, released (visibility 0) or its lease ends; a message received more than
``max_receive_count`` times moves to the DLQ on its next receive (as SQS, and moto, do
inside ReceiveMessage). A receive with nothing visible waits (a long poll renewed at once).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import simpy


class Gauge:
    """A level over time: its time-weighted mean and maximum per period."""

    def __init__(self, env: simpy.Environment, value: float = 0.0) -> None:
        self.env = env
        self.value = value
        self._since = env.now
        self._area = 0.0
        self._max = value
        self._period_start = env.now

    def set(self, value: float) -> None:
        now = self.env.now
        self._area += self.value * (now - self._since)
        self._since = now
        self.value = value
        self._max = max(self._max, value)

    def add(self, delta: float) -> None:
        self.set(self.value + delta)

    def close_period(self) -> tuple[float, float]:
        """(mean, max) since the last call; the next period starts now."""
        now = self.env.now
        self._area += self.value * (now - self._since)
        span = now - self._period_start
        mean = self._area / span if span > 0 else self.value
        peak = self._max
        self._since, self._period_start, self._area, self._max = now, now, 0.0, self.value
        return mean, peak


@dataclass(eq=False)
class Message:
    body: Any
    receive_count: int = 0
    receipt: int = 0  # a new one per receive: an old holder's delete or release is ignored
    in_flight: bool = False
    first_sent_s: float = 0.0
    history: list[float] = field(default_factory=list)  # receive times


class Queue:
    def __init__(
        self,
        env: simpy.Environment,
        max_receive_count: int,
        on_dead_letter: Callable[[Message], None],
    ) -> None:
        self.env = env
        self.max_receive_count = max_receive_count
        self.on_dead_letter = on_dead_letter
        self._visible: deque[Message] = deque()
        self._waiters: deque[simpy.Event] = deque()
        self.visible = Gauge(env)
        self.in_flight = Gauge(env)
        self.dead_letters: list[Message] = []
        self.live: set[int] = set()  # id() of every message body still in the queue
        self.receives = 0
        self.redeliveries = 0

    # --- producers --------------------------------------------------------------------------

    def send(self, body: Any) -> Message:
        message = Message(body=body, first_sent_s=self.env.now)
        self.live.add(id(body))
        self._make_visible(message)
        return message

    # --- consumers --------------------------------------------------------------------------

    def receive(self) -> simpy.Event:
        """An event whose value is the received message, once one is visible."""
        event = self.env.event()
        self._waiters.append(event)
        self._dispatch()
        return event

    def cancel(self, event: simpy.Event) -> Message | None:
        """Stop waiting; a message already handed to this receive is returned (held)."""
        if event in self._waiters:
            self._waiters.remove(event)
            return None
        return event.value if event.triggered else None

    def delete(self, message: Message, receipt: int) -> bool:
        if message.receipt != receipt or not message.in_flight:
            return False
        message.in_flight = False
        self.in_flight.add(-1)
        self.live.discard(id(message.body))
        return True

    def release(self, message: Message, receipt: int) -> None:
        """ChangeMessageVisibility 0: visible again at once."""
        if self.delete(message, receipt):
            self.live.add(id(message.body))
            self._make_visible(message)

    def resend(self, message: Message, receipt: int) -> None:
        """The runner's release (a drain, a Spot interruption): the chunk sent again as a new
        message, the held one deleted, so the release uses up none of its receives
        (pagefleet/queues.py AsyncQueue.release)."""
        if self.delete(message, receipt):
            self.send(message.body)

    def oldest_age_s(self) -> float | None:
        """ApproximateAgeOfOldestMessage now: None with no message visible."""
        if not self._visible:
            return None
        return self.env.now - min(m.first_sent_s for m in self._visible)

    def lease_ends(self, message: Message, receipt: int, at_s: float) -> None:
        """The holder died: the message becomes visible when its last lease ends."""

        def expire() -> Any:
            yield self.env.timeout(max(0.0, at_s - self.env.now))
            self.release(message, receipt)

        self.env.process(expire())

    # --- inside -----------------------------------------------------------------------------

    def _make_visible(self, message: Message) -> None:
        self._visible.append(message)
        self.visible.add(1)
        self._dispatch()

    def _dispatch(self) -> None:
        while self._waiters and self._visible:
            message = self._visible.popleft()
            self.visible.add(-1)
            if message.receive_count >= self.max_receive_count:
                self.dead_letters.append(message)
                self.live.discard(id(message.body))
                self.on_dead_letter(message)
                continue
            message.receive_count += 1
            message.receipt += 1
            message.in_flight = True
            message.history.append(self.env.now)
            self.in_flight.add(1)
            self.receives += 1
            if message.receive_count > 1:
                self.redeliveries += 1
            self._waiters.popleft().succeed(message)
