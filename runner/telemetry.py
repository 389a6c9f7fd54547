"""The runner's log: one JSON object per line, metric lines in CloudWatch Embedded Metric Format.

An EMF record is itself a JSON object, so one line serves both: ``jq`` and CloudWatch Logs
Insights read it as a log event, and CloudWatch extracts the metrics named under ``_aws``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import IO, Any, Literal

Level = Literal["info", "warning", "error"]
# CloudWatch units used here; see the EMF specification for the full list.
Unit = Literal["Count", "Count/Second", "Percent", "Megabytes", "Seconds", "None"]

NAMESPACE = "pagefleet"
SERVICE = "runner"


class Telemetry:
    """Writes JSON lines to ``stream`` (stdout by default: the container log)."""

    def __init__(self, stream: IO[str] | None = None, namespace: str = NAMESPACE) -> None:
        self._stream = stream
        self._namespace = namespace

    def event(self, event: str, level: Level = "info", **fields: Any) -> None:
        self._write(
            {"ts": time.time(), "level": level, "service": SERVICE, "event": event, **fields}
        )

    def metrics(
        self,
        event: str,
        dimensions: dict[str, str],
        values: dict[str, tuple[float, Unit]],
        **fields: Any,
    ) -> None:
        """One EMF record: ``values`` become metrics under ``Service`` plus ``dimensions``."""
        now = time.time()
        dims = {"Service": SERVICE, **dimensions}
        record: dict[str, Any] = {
            "_aws": {
                "Timestamp": int(now * 1000),
                "CloudWatchMetrics": [
                    {
                        "Namespace": self._namespace,
                        "Dimensions": [list(dims)],
                        "Metrics": [
                            {"Name": name, "Unit": unit} for name, (_, unit) in values.items()
                        ],
                    }
                ],
            },
            "ts": now,
            "level": "info",
            "service": SERVICE,
            "event": event,
            **fields,
            **dims,
            **{name: value for name, (value, _) in values.items()},
        }
        self._write(record)

    def _write(self, record: dict[str, Any]) -> None:
        stream = self._stream or sys.stdout
        try:
            stream.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            stream.flush()
        except BrokenPipeError:
            # Nobody reads the log any more (the process that started the runner died): the
            # runner still drains and stops. Later lines, and the flush at exit, go nowhere
            # rather than raising again (Python's note on SIGPIPE).
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
