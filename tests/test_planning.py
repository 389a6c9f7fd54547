"""Chunk plans by estimated seconds: pages of equal cost in balanced ranges, a mixed document
cut by cost."""

from __future__ import annotations

import random

import pytest

from pagefleet.models import ChunkSpec
from pagefleet.planning import PlanPolicy, plan_by_cost


def plan_chunks(pages: int, target_pages: int) -> list[ChunkSpec]:
    """A plan of ``pages`` of equal cost aiming at ``target_pages`` a chunk, on one lane."""
    return plan_by_cost([1.0] * pages, PlanPolicy(target_s=target_pages, min_s=0.0, max_s=1e9))


@pytest.mark.parametrize("pages", [1, 2, 15, 16, 17, 33, 400, 2000])
@pytest.mark.parametrize("target", [1, 4, 16, 32])
def test_chunks_cover_every_page_once_in_order_and_are_balanced(pages: int, target: int) -> None:
    chunks = plan_chunks(pages, target)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    covered = [p for c in chunks for p in range(c.first_page, c.last_page + 1)]
    assert covered == list(range(1, pages + 1))
    sizes = [c.pages for c in chunks]
    assert max(sizes) - min(sizes) <= 1
    assert max(sizes) <= target
    assert len(chunks) == -(-pages // target)


def test_no_straggler_chunk() -> None:
    assert [c.pages for c in plan_chunks(33, 16)] == [11, 11, 11]


def test_an_empty_document_has_no_plan() -> None:
    with pytest.raises(ValueError):
        plan_chunks(0, 16)


# --- plans by estimated seconds ---------------------------------------------------------------

TEXT, SCAN = 0.014, 7.5
POLICY = PlanPolicy(target_s=16 * TEXT, min_s=0.5, max_s=60.0, lanes=2)


def _covered(chunks: list[ChunkSpec], pages: int) -> None:
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert [p for c in chunks for p in range(c.first_page, c.last_page + 1)] == list(
        range(1, pages + 1)
    )


def test_a_mixed_document_is_cut_by_cost_not_pages() -> None:
    # 40 text pages, 4 scans, 40 text pages: each scan costs 500 text pages.
    costs = [TEXT] * 40 + [SCAN] * 4 + [TEXT] * 40
    chunks = plan_by_cost(costs, POLICY)
    _covered(chunks, len(costs))
    scans = [c for c in chunks if any(41 <= p <= 44 for p in range(c.first_page, c.last_page + 1))]
    assert [(c.first_page, c.last_page) for c in scans][1:-1] == [(42, 42), (43, 43)]
    assert all(c.estimated_s <= SCAN + 40 * TEXT for c in scans)
    # The text on either side is not one chunk per page: the minimum cost groups it.
    assert len(chunks) <= 8
    assert sum(c.estimated_s for c in chunks) == pytest.approx(sum(costs), abs=1e-3)


def test_a_cheap_document_is_one_chunk_and_a_small_dear_one_is_spread_over_the_lanes() -> None:
    assert len(plan_by_cost([TEXT] * 30, POLICY)) == 1  # 0.42 s: under the minimum
    eight_scans = plan_by_cost([SCAN] * 8, POLICY)
    assert [c.pages for c in eight_scans] == [1] * 8  # each scan is dearer than a chunk's aim
    spread = PlanPolicy(target_s=100.0, min_s=0.5, max_s=1e9, lanes=4)
    assert [c.pages for c in plan_by_cost([SCAN] * 8, spread)] == [2, 2, 2, 2]


def test_the_chunk_count_follows_the_cost_and_is_a_multiple_of_the_lanes() -> None:
    chunks = plan_by_cost([TEXT] * 400, POLICY)  # 5.6 s at 0.5 s a chunk: 11.2 -> 12
    assert len(chunks) == 12
    assert max(c.pages for c in chunks) - min(c.pages for c in chunks) <= 1
    # 3.1 s: 6.2 chunks at the minimum; 8 would each be under it, so 6, three a lane, not 7.
    chunks = plan_by_cost([3.1 / 400] * 400, POLICY)
    assert len(chunks) == 6
    assert min(c.estimated_s for c in chunks) >= POLICY.min_s


@pytest.mark.parametrize("seed", range(30))
def test_no_chunk_passes_the_maximum_unless_one_page_does(seed: int) -> None:
    rng = random.Random(seed)
    pages = rng.randint(1, 300)
    costs = [rng.choice([TEXT, TEXT, TEXT, 0.05, SCAN, rng.uniform(0, 40)]) for _ in range(pages)]
    policy = PlanPolicy(
        target_s=rng.choice([0.2, 2.0, 30.0]),
        min_s=rng.choice([0.0, 0.5, 5.0]),
        max_s=rng.choice([1.0, 10.0, 60.0]),
        lanes=rng.choice([1, 2, 8]),
    )
    chunks = plan_by_cost(costs, policy)
    _covered(chunks, pages)
    for chunk in chunks:
        own = sum(costs[chunk.first_page - 1 : chunk.last_page])
        assert chunk.estimated_s == pytest.approx(own, abs=1e-3)
        assert own <= policy.max_s + 1e-9 or chunk.pages == 1


def test_a_plan_needs_pages() -> None:
    with pytest.raises(ValueError):
        plan_by_cost([], POLICY)
