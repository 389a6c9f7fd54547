from __future__ import annotations

import pytest

from pagefleet.planning import plan_chunks


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
