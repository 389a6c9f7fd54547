"""The conversion child's resident memory, as the worker's watchdog reads it, is psutil's."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import psutil
import pytest

from runner.conversion import _psutil_resident, resident_memory

# Holds 64 MB, says so, and waits for its stdin to close.
HOLDING = "import sys\nheld = bytearray(64 * 2**20)\nprint('held', flush=True)\nsys.stdin.read()"


@pytest.fixture
def holding() -> Iterator[subprocess.Popen[str]]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDING], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    yield child
    child.kill()
    child.wait()


def _ended(child: subprocess.Popen[str]) -> None:
    assert child.stdin is not None
    child.stdin.close()
    child.wait()  # reaped


def test_statm_reads_what_psutil_reads(holding: subprocess.Popen[str]) -> None:
    with resident_memory(holding.pid) as resident:
        before = psutil.Process(holding.pid).memory_info().rss
        read = resident()
        after = psutil.Process(holding.pid).memory_info().rss
        assert min(before, after) <= read <= max(before, after)
        assert read >= 64 * 2**20
        _ended(holding)
        with pytest.raises(ProcessLookupError):
            resident()


def test_without_proc_psutil_reads_it(holding: subprocess.Popen[str]) -> None:
    resident = _psutil_resident(holding.pid)
    assert resident() >= 64 * 2**20
    _ended(holding)
    with pytest.raises(ProcessLookupError):
        resident()


def test_a_process_gone_before_the_chunk() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    with pytest.raises(ProcessLookupError), resident_memory(child.pid):
        pass
