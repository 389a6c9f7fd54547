"""The pipeline through a network that fails: 5xx answers, lost replies (the request took effect,
the caller never heard) and delays between the handlers and runner and S3/SQS, at a seeded rate.
The same documents, converted once with the faults off and once with them on, come out byte for
byte the same, each job once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from embedded import MotoServer
from embedded.demo import report_pdf
from embedded.pipeline import LocalPipeline
from pagefleet import keys
from pagefleet.settings import Settings
from pagefleet.storage import Bucket
from pagefleet.submission import await_records, upload
from tests.fault_proxy import FaultProxy, FaultRates, fault_proxy

FAULTS = FaultRates(error=0.10, lost=0.05, delay=0.10, delay_s=(0.02, 0.2))


@pytest.fixture
def proxy(moto_server: MotoServer) -> Iterator[FaultProxy]:
    """A fault proxy in front of the session's moto server, faults off until a test sets them."""
    with fault_proxy(moto_server.url, FaultRates(), seed=7) as running:
        yield running


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("faulty")
    return {
        "long": report_pdf(folder / "long.pdf", sections=24, seed=21).read_bytes(),
        "short": report_pdf(folder / "short.pdf", sections=3, seed=22).read_bytes(),
        "nested/mid": report_pdf(folder / "mid.pdf", sections=9, seed=23).read_bytes(),
    }


def test_the_proxy_injects_each_fault_and_spares_the_stack(
    proxy: FaultProxy, settings: Settings
) -> None:
    from pagefleet import aws

    proxy.set_rates(FaultRates(error=0.3, lost=0.3, delay=0.3, delay_s=(0.0, 0.01)))
    s3 = aws.client("s3", settings.model_copy(update={"endpoint_url": proxy.url}))
    outcomes = []
    for _ in range(40):
        try:
            s3.list_buckets()
            outcomes.append("ok")
        except Exception as exc:
            outcomes.append(aws.error_code(exc) or type(exc).__name__)
    assert {"ok", "InternalError", "ConnectionClosedError"} <= set(outcomes), outcomes
    assert proxy.counts["error"] and proxy.counts["lost"] and proxy.counts["delayed"]
    # The embedded stack's own clients pass untouched (they stand in for AWS's services).
    from embedded.provision import stack_client

    stack_s3 = stack_client("s3", settings.model_copy(update={"endpoint_url": proxy.url}))
    spared = proxy.counts["spared"]
    for _ in range(20):
        stack_s3.list_buckets()
    assert proxy.counts["spared"] == spared + 20


def test_documents_convert_through_faults_byte_for_byte(
    moto_server: MotoServer, settings: Settings, proxy: FaultProxy, documents: dict[str, bytes]
) -> None:
    # A short lease: a lost ReceiveMessage reply hides its chunk until the lease ends.
    settings = settings.model_copy(update={"visibility_timeout_s": 5, "heartbeat_s": 1})
    with LocalPipeline(
        settings, workers=2, server=moto_server, functions_endpoint_url=proxy.url
    ) as local:
        assert local.stack is not None
        bucket = Bucket(local.stack.s3, settings.bucket)
        local.wait_ready()
        runs = {}
        for run, rates in (("clean", FaultRates()), ("faulty", FAULTS)):
            proxy.set_rates(rates)
            before = proxy.faults
            for rel, data in documents.items():
                upload(bucket, f"{run}/{rel}", data)
            runs[run] = await_records(bucket, [f"{run}/{rel}" for rel in documents], timeout_s=90)
            if run == "clean":
                assert proxy.faults == before
        assert proxy.counts["error"] >= 3 and proxy.counts["lost"] >= 2, proxy.counts
        assert proxy.counts["delayed"] >= 3, proxy.counts
    for rel in documents:
        clean, faulty = runs["clean"][f"clean/{rel}"], runs["faulty"][f"faulty/{rel}"]
        assert faulty.status == clean.status == "done", (rel, faulty.error)
        assert [(c.first_page, c.last_page) for c in faulty.chunks] == [
            (c.first_page, c.last_page) for c in clean.chunks
        ]
        assert bucket.get(keys.outbox_markdown(f"faulty/{rel}")) == bucket.get(
            keys.outbox_markdown(f"clean/{rel}")
        )
    # One upload, one job, each outbox object written once, however often a write was retried.
    jobs = {k.split("/")[1] for k in bucket.list_keys(keys.JOBS)}
    assert len(jobs) == 2 * len(documents)
    for rel in documents:
        for key in (keys.outbox_markdown(f"faulty/{rel}"), keys.outbox_record(f"faulty/{rel}")):
            versions = bucket.s3.list_object_versions(Bucket=bucket.name, Prefix=key)
            assert len([v for v in versions["Versions"] if v["Key"] == key]) == 1, key
