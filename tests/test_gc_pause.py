"""The collector pause completion runs under: off inside, back as it was after, however
blocks overlap."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from pagefleet.gc_pause import paused_gc


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_an_error_in_the_block_still_restores_the_collector() -> None:
    gc.enable()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


def test_overlapping_blocks_in_threads_restore_it_once_the_last_ends() -> None:
    gc.enable()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with paused_gc():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with paused_gc():
            second_in.set()
            first_out.wait(5)
            seen["after the first left"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after the first left": False}
    assert gc.isenabled()
