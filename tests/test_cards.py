"""Grids of cards (pagefleet.layout.cards) in a page's blocks: read card by card, and only where
the same labels open lines level with one another in columns side by side; a table whose
records carry labels in their cells stays a table."""

from __future__ import annotations

from pagefleet.layout import render_document
from pagefleet.layout.lines import line_text
from pagefleet.layout.schema import Block, Line, Page
from pagefleet.layout.segment import page_blocks


def _line(x0: float, y: float, text: str) -> Line:
    return {"bbox": [x0, y, x0 + 5.5 * len(text), y + 10], "spans": [{"t": text, "s": 10.0}]}


def _texts(blocks: list[Block]) -> list[str]:
    return [" ".join(line_text(ln) for ln in b["lines"]) for b in blocks if "lines" in b]


def test_cards_whose_values_wrap_read_card_by_card() -> None:
    """Two cards a row, two rows; the first card's address wraps onto a second line, so its
    later lines stand lower than its neighbour's."""
    cards = [
        ["Holder: Alder Hayes", "Address: 4 Weir Lane,", "Millbank", "Vessel: Heron"],
        ["Holder: Bea Morrow", "Address: 9 Quay Row", "Vessel: Kingfisher"],
        ["Holder: Cyril Vance", "Address: 2 Mill Steps", "Vessel: Dabchick"],
        ["Holder: Dora Quill", "Address: 7 Weir Basin", "Vessel: Moorhen"],
    ]
    lines = [_line(60, 40, "Mooring Permits")]
    for k, card in enumerate(cards):
        x, y = 60 + 250 * (k % 2), 80 + 90 * (k // 2)
        lines += [_line(x, y + 14 * j, text) for j, text in enumerate(card)]
    blocks = page_blocks(lines)
    assert _texts(blocks) == ["Mooring Permits", *(" ".join(c) for c in cards)]
    # Each card a paragraph of its own: the writer runs a paragraph on into a block that starts
    # higher (the next column's top) where its last line ends no sentence, as each card does.
    page: Page = {"number": 1, "ocr": False, "width": 612.0, "height": 792.0, "blocks": blocks}
    paragraphs = render_document([page]).strip().split("\n\n")
    assert paragraphs[1:] == [" ".join(c) for c in cards]


def test_records_with_labelled_cells_stay_a_table() -> None:
    """Rows of records, one labelled value a cell ("Name: Ann | Age: 31 | City: Rome"): each
    label opens one column only, so no cards side by side."""
    records = [("Ann", 31, "Rome"), ("Bo", 45, "Oslo"), ("Cy", 27, "Lima"), ("Di", 52, "Nice")]
    lines = [
        _line(x, 80 + 14 * r, text)
        for r, (name, age, city) in enumerate(records)
        for x, text in ((60, f"Name: {name}"), (200, f"Age: {age}"), (340, f"City: {city}"))
    ]
    blocks = page_blocks(lines)
    rows = [[f"Name: {name}", f"Age: {age}", f"City: {city}"] for name, age, city in records]
    assert [b["rows"] for b in blocks if "rows" in b] == [rows]


def test_one_row_of_cards_ends_at_the_gap_under_it() -> None:
    """Three cards side by side, no second row to mark where a card ends: each ends at the
    space under it, and the note below is no card's (every label of theirs makes a lattice
    of its own; those found after the grid took its lines find nothing left)."""
    cards = [
        ["Holder: Alder Hayes", "Vessel: Heron", "Expires: May"],
        ["Holder: Bea Morrow", "Vessel: Kingfisher", "Expires: June"],
        ["Holder: Cyril Vance", "Vessel: Dabchick", "Expires: July"],
    ]
    lines = [
        _line(60 + 170 * k, 80 + 14 * j, text)
        for k, c in enumerate(cards)
        for j, text in enumerate(c)
    ]
    lines.append(_line(60, 160, "Permits lapse at noon on their last day."))
    assert _texts(page_blocks(lines)) == [
        *(" ".join(c) for c in cards),
        "Permits lapse at noon on their last day.",
    ]
