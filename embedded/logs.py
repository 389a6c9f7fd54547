"""Where the embedded stack's logs go: what CloudWatch Logs holds on AWS.

Every process of the stack (the runner's supervisor and workers, each Lambda environment) writes
its log to a pipe read here, line by line. Each line goes:

- to the log file, if one is named, whole (the runner's lines as they are, so that tools reading
  its JSON lines read the file; any other process's lines behind ``[name]``);
- to the terminal: with ``verbose``, every line; else only what someone watching must see:
  JSON lines at level warning or above (a worker that died, a chunk dead-lettered), and lines
  that are not log records at all (a traceback, a crash), shown with the record before them.

EMF metric lines are JSON without a level: they reach the file and, with ``verbose``, the
terminal, never a quiet terminal.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from pathlib import Path
from typing import IO, Any

RUNNER = "runner"
_LOUD = {"warning", "warn", "error", "critical", "fatal"}
# A plain log line from Python's logging (the runner's workers): a timestamp first.
_PLAIN_RECORD = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d")
_PLAIN_LEVEL = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")


def is_loud(line: str) -> bool:
    """Whether a quiet terminal shows ``line``."""
    text = line.strip()
    if not text:
        return False
    if text.startswith("{"):
        try:
            record = json.loads(text)
        except ValueError:
            return True
        if not isinstance(record, dict):
            return True
        return str(record.get("level", "")).lower() in _LOUD
    if _PLAIN_RECORD.match(text):
        return bool(_PLAIN_LEVEL.search(text))
    return True  # not a log record: a traceback, a crash message


def _is_record(line: str) -> bool:
    return line.startswith("{") or bool(_PLAIN_RECORD.match(line))


def readable(line: str) -> str:
    """A JSON log record as one short line for a person; anything else unchanged."""
    text = line.rstrip("\n")
    if not text.startswith("{"):
        return text
    try:
        record: dict[str, Any] = json.loads(text)
    except ValueError:
        return text
    level = str(record.pop("level", "")).lower()
    what = record.pop("event", None) or record.pop("message", "")
    skip = {"ts", "timestamp", "service", "location", "xray_trace_id", "sampling_rate"}
    skip |= {k for k in record if k.startswith(("function_", "cold_start"))}
    fields = " ".join(f"{k}={v}" for k, v in record.items() if k not in skip and k != "_aws")
    return " ".join(part for part in (level, str(what), fields) if part)


class LogRouter:
    """Reads the stack's log pipes and sends each line where it belongs."""

    def __init__(
        self,
        *,
        verbose: bool = False,
        log_file: str | Path | None = None,
        terminal: IO[str] | bool = True,
    ) -> None:
        """``terminal``: a stream, True for this process's standard error (as it is at each
        write, so that a test's capture sees it), False for none."""
        self.verbose = verbose
        self._terminal: IO[str] | bool = terminal
        self._file = open(log_file, "a", buffering=1) if log_file else None  # noqa: SIM115
        self._lock = threading.Lock()
        self._last_quiet: dict[str, str] = {}
        self._threads: list[threading.Thread] = []
        self.lines = 0
        self.shown = 0

    @property
    def log_file(self) -> str | None:
        return self._file.name if self._file else None

    def attach(self, name: str, stream: IO[bytes]) -> None:
        """Read ``stream`` to its end on a thread of its own."""
        thread = threading.Thread(
            target=self._pump, args=(name, stream), name=f"logs-{name}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def _pump(self, name: str, stream: IO[bytes]) -> None:
        with stream:
            for raw in stream:
                self.line(name, raw.decode("utf-8", "replace"))

    def line(self, name: str, text: str) -> None:
        text = text.rstrip("\n")
        with self._lock:
            self.lines += 1
            if self._file is not None:
                self._file.write((text if name == RUNNER else f"[{name}] {text}") + "\n")
            if self._terminal is False:
                return
            if self.verbose:
                self._show(name, text)
            elif is_loud(text):
                before = self._last_quiet.pop(name, None)
                if before is not None and not _is_record(text):
                    self._show(name, readable(before))  # the record a traceback belongs to
                self._show(name, readable(text))
            else:
                self._last_quiet[name] = text

    def _show(self, name: str, text: str) -> None:
        terminal = sys.stderr if self._terminal is True else self._terminal
        if terminal is False:
            return
        self.shown += 1
        try:
            terminal.write(f"[{name}] {text}\n")
            terminal.flush()
        except (OSError, ValueError):  # a terminal that went away
            self._terminal = False

    def wait(self, timeout_s: float = 5.0) -> None:
        """Let the readers reach the ends of pipes whose writers have exited."""
        for thread in self._threads:
            thread.join(timeout_s)
        self._threads = [t for t in self._threads if t.is_alive()]

    def close(self) -> None:
        self.wait()
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


class RouterHandler(logging.Handler):
    """Python logging of this process (the dispatcher, the janitor) into a :class:`LogRouter`."""

    def __init__(self, router: LogRouter, name: str = "stack") -> None:
        super().__init__()
        self.router = router
        self.source = name
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            for line in self.format(record).splitlines():
                self.router.line(self.source, line)
        except Exception:
            self.handleError(record)
