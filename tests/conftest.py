"""Fixtures: one real moto server per test session, settings for a fresh stack (own bucket and
queues) per test, and the whole local pipeline on top of one per module."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from embedded import MotoServer
from embedded.pipeline import LocalPipeline
from pagefleet.models import JobRecord
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
_names = itertools.count()

# The files that take longest, longest first (wall seconds per file in a fresh clone's
# `make test` on 2 cores, 2026-12-02: test_worker 131 over many tests; the moto apply 125, much
# of it waiting on the provider; test_cli 82; the image's pip replay 79, mostly waiting on
# PyPI; test_terraform 76; test_pipeline 73; the corpus 67; test_supervisor 44; test_cli_operate
# 39). `make test` hands files to its processes in this order, so none is left running one of
# these alone at the end; the moto apply goes first, its waits filled by the others.
LONGEST_FIRST = (
    "test_terraform_apply.py",
    "test_worker.py",
    "test_cli.py",
    "test_runner_image.py",
    "test_terraform.py",
    "test_pipeline.py",
    "test_corpus.py",
    "test_rule5_working_set.py",
    "test_supervisor.py",
    "test_cli_operate.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable within a file


def corpus_dir(kind: str) -> Path:
    folder = CORPUS / kind
    if not folder.is_dir():
        pytest.skip(f"the shared test corpus is absent ({folder} not found)")
    return folder


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    server = MotoServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def settings(moto_server: MotoServer) -> Settings:
    """Settings for a stack no other test touches (moto keeps one state per process)."""
    return fresh_settings(moto_server)


def fresh_settings(moto_server: MotoServer) -> Settings:
    # Every name is as long as every other: a reply's Content-Length, which names the bucket,
    # is then the same from one stack to the next (test_moto_server compares replies whole).
    name = f"t{next(_names):04d}-{int(time.time() * 1000) % 100000:05d}"
    return Settings(
        endpoint_url=moto_server.url,
        bucket=name,
        queue_prefix=name,
        chunk_pages=4,
        # Plans by page count, as the tests count chunks: no minimum chunk cost, one lane.
        chunk_min_cost_s=0.0,
        fleet_lanes=1,
        visibility_timeout_s=30,
        poll_wait_s=1,
        heartbeat_s=2,
    )


@pytest.fixture(scope="module")
def pipeline(moto_server: MotoServer) -> Iterator[LocalPipeline]:
    """One whole stack per test module, for the tests that upload and read back under keys of
    their own: its processes cost some 5 CPU s to start and stop. A test that needs a stack set
    up otherwise starts its own from ``settings``."""
    with LocalPipeline(fresh_settings(moto_server), workers=2, server=moto_server) as local:
        yield local


@pytest.fixture
def bucket(pipeline: LocalPipeline) -> Bucket:
    assert pipeline.stack is not None
    return Bucket(pipeline.stack.s3, pipeline.settings.bucket)


def wait_for_record(bucket: Bucket, rel: str, timeout_s: float = 120) -> JobRecord:
    """The job record of ``rel`` once the pipeline has written it."""
    return await_records(bucket, [rel], timeout_s=timeout_s)[rel]


def outlived(processes: list[psutil.Process], timeout_s: float) -> list[str]:
    """What of ``processes`` still runs after ``timeout_s`` (the first words of each command
    line). A zombie has ended: the init it was handed to when its parent died reaps it when it
    gets to it, or in a container whose init does not reap, never."""

    def running(process: psutil.Process) -> bool:
        with contextlib.suppress(psutil.Error):  # gone meanwhile
            return process.status() != psutil.STATUS_ZOMBIE
        return False

    deadline = time.monotonic() + timeout_s
    while (left := [p for p in processes if running(p)]) and time.monotonic() < deadline:
        psutil.wait_procs(left, timeout=0.2)  # back at once when they end, not when reaped
    described = []
    for process in left:
        with contextlib.suppress(psutil.Error):
            described.append(" ".join(process.cmdline()[1:3]))
    return described
