"""Fixtures: one real moto server per test session, a fresh stack (own bucket and queues) per
test, and the whole local pipeline on top of it."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagefleet.local import MotoServer
from pagefleet.local.pipeline import LocalPipeline
from pagefleet.models import JobRecord
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
_names = itertools.count()

# The files that take longest, longest first (quiet 2-core machine: the moto apply ~110 s, most
# of it waiting on the provider; the image's pip replay ~45 s; terraform test ~40 s; the corpus
# ~45 s). `make test` hands files to its processes in this order, so none is left running one
# of these alone at the end.
LONGEST_FIRST = (
    "test_terraform_apply.py",
    "test_runner_image.py",
    "test_corpus.py",
    "test_terraform.py",
    "test_pipeline.py",
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
    return fresh_settings(moto_server)


def fresh_settings(moto_server: MotoServer) -> Settings:
    """Settings for a stack no other test touches (moto keeps one state per process)."""
    name = f"t{next(_names)}-{int(time.time() * 1000) % 100000}"
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


@pytest.fixture
def pipeline(moto_server: MotoServer, settings: Settings) -> Iterator[LocalPipeline]:
    local = LocalPipeline(settings, workers=2, server=moto_server)
    local.start()
    yield local
    local.stop()


@pytest.fixture
def bucket(pipeline: LocalPipeline) -> Bucket:
    assert pipeline.stack is not None
    return Bucket(pipeline.stack.s3, pipeline.settings.bucket)


def wait_for_record(bucket: Bucket, rel: str, timeout_s: float = 120) -> JobRecord:
    """The job record of ``rel`` once the pipeline has written it."""
    return await_records(bucket, [rel], timeout_s=timeout_s)[rel]
