"""Rule 5 inside the renderer: a document cut into chunks, written as the chunks land in any
order, renders byte for byte as the whole document at once, and the document-wide analysis
merged from per-chunk statistics is the one counted over the whole document."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import pytest

from pagefleet.layout import (
    ChunkLayout,
    find_furniture,
    render_chunks,
    render_document,
    write_chunks,
)
from pagefleet.layout.replay import _write, _written
from pagefleet.layout.schema import Block, Line, OutlineEntry, Page, Span, TextBlock

WORDS = (
    "river delta sediment basin flood plain channel gauge survey water level bank erosion "
    "silt gravel current meander estuary tide marsh"
).split()


def _line(x: float, y: float, text: str, size: float = 10.0, bold: bool = False) -> Line:
    span: Span = {"t": text, "s": size}
    if bold:
        span["b"] = True
    return {"bbox": [x, y, x + 6.0 * len(text) * size / 12, y + size], "spans": [span]}


def _block(lines: list[Line], fig: bool = False) -> TextBlock:
    block: TextBlock = {
        "bbox": [
            min(ln["bbox"][0] for ln in lines),
            min(ln["bbox"][1] for ln in lines),
            max(ln["bbox"][2] for ln in lines),
            max(ln["bbox"][3] for ln in lines),
        ],
        "lines": lines,
    }
    if fig:
        block["fig"] = True
    return block


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def generated(seed: int, pages: int = 40) -> tuple[list[Page], list[OutlineEntry]]:
    """A document that exercises every whole-document decision: running heads (always, and
    one on just about the threshold's share of pages), page numbers, heading sizes (a larger
    one only near the end), run-in bold headings, paragraphs and lists across page breaks,
    hyphenation that only a word elsewhere in the document repairs, footnotes, tables, a plot's
    labels, pictures and code listings, OCR pages and an outline pointing at headings on the
    page, before or after."""
    rng = random.Random(seed)
    out: list[Page] = []
    outline: list[OutlineEntry] = []
    rare = set(rng.sample(range(1, pages + 1), max(2, pages // 20 + rng.choice((-1, 0, 1)))))
    open_para = False
    title = ""
    for number in range(1, pages + 1):
        blocks: list[Block] = []
        y = 30.0
        blocks.append(_block([_line(72, y, f"River Survey {2026 + number % 2} page {number}")]))
        if number in rare:
            blocks.append(_block([_line(400, y, "Draft for review")]))
        y = 90.0
        if open_para and number % 3 == 0:
            # A picture between a paragraph and its continuation waits for the paragraph.
            picture: Block = {"bbox": [72, 60, 300, 85], "image": f"page-{number:05d}-image-1.png"}
            blocks.append(picture)
        if open_para:
            # The paragraph the page before left open goes on, in lower case.
            lines = [_line(72, y + 12 * i, _sentence(rng, 8)) for i in range(2)]
            lines[0]["spans"][0]["t"] = "and " + lines[0]["spans"][0]["t"]
            blocks.append(_block(lines))
            y += 40
            open_para = False
        for _ in range(rng.randint(2, 6)):
            kind = rng.random()
            if kind < 0.15:
                size = rng.choice((14.0, 18.0)) if number < pages - 2 else 24.0
                if not title or rng.random() < 0.7:
                    # Else the title the page before had: a bookmark pointing a page off
                    # finds it twice, and which one it takes depends on the pages around.
                    title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {number}"
                blocks.append(_block([_line(72, y, title, size, bold=True)]))
                if rng.random() < 0.6:
                    target = number + rng.choice((0, 0, 1, -1, -1))
                    outline.append({"title": title, "level": rng.randint(1, 3), "page": target})
                    if rng.random() < 0.3:
                        outline[-1]["top"] = y - rng.random() * 4
                y += size + 12
            elif kind < 0.25:
                blocks.append(_block([_line(72, y, f"Gauge {rng.choice(WORDS)}", bold=True)]))
                y += 22
            elif kind < 0.45:
                # A list, nested, that may run on into the next page (and chunk).
                for _ in range(rng.randint(1, 4)):
                    marker = rng.choice(("• ", "1. ", "2. ", "a) "))
                    x = rng.choice((72.0, 90.0, 108.0))
                    blocks.append(_block([_line(x, y, marker + _sentence(rng, 6))]))
                    y += 16
                if rng.random() < 0.3:
                    blocks.append(_block([_line(72, 700, f"2 See {rng.choice(WORDS)}.", 7.0)]))
            elif kind < 0.5:
                table: Block = {
                    "bbox": [72, y, 500, y + 30],
                    "rows": [[rng.choice(WORDS), "1"], [rng.choice(WORDS), "2"]],
                }
                blocks.append(table)
                y += 36
            elif kind < 0.53:
                blocks.append(_block([_line(100, y, "0 10 20 depth")], fig=True))
                y += 16
            else:
                lines = [_line(72, y + 12 * i, _sentence(rng, 9)) for i in range(rng.randint(1, 4))]
                if rng.random() < 0.4:
                    # A hyphen at the line's end that stays only because the last page has
                    # "self-made" as a word.
                    lines[-1]["spans"][0]["t"] += " self-"
                    lines.append(_line(72, y + 12 * len(lines), "made weir of the basin."))
                blocks.append(_block(lines))
                y += 12 * len(lines) + 10
        if number % 5 == 2:
            listing = [
                _line(72, 560, "for gauge in basin:", 9.0),
                _line(90, 570, "read(gauge)", 9.0),
            ]
            blocks.append({**_block(listing), "code": True})
        if rng.random() < 0.4:
            # The page ends mid-sentence: the next page's first block carries the paragraph on.
            blocks.append(_block([_line(72, 600 + 12 * i, _sentence(rng, 9)) for i in range(3)]))
            open_para = True
        if rng.random() < 0.3:
            blocks.append(_block([_line(72, 700, f"1 Note on {rng.choice(WORDS)}.", 7.0)]))
        blocks.append(_block([_line(300, 760, str(number))]))
        if number == pages:
            blocks.append(_block([_line(72, 650, "The self-made weir of every basin held.")]))
        ocr = rng.random() < 0.05
        out.append({"number": number, "ocr": ocr, "width": 612, "height": 792, "blocks": blocks})
    return out, outline


def _cut(rng: random.Random, n: int) -> list[tuple[int, int]]:
    size = rng.choice((1, 2, 3, 5, 8, 13))
    bounds = [0]
    while bounds[-1] < n:
        bounds.append(min(n, bounds[-1] + rng.randint(1, size)))
    return list(itertools.pairwise(bounds))


def _landed_in(rng: random.Random, pages: list[Page], outline: list[OutlineEntry]) -> str:
    """Chunks written as they land in a random order, then rendered once all are in."""
    chunks = [ChunkLayout.of(pages[a:b], outline) for a, b in _cut(rng, len(pages))]
    order = list(range(len(chunks)))
    rng.shuffle(order)
    for k in range(1, len(order)):
        write_chunks([chunks[i] for i in sorted(order[:k])], len(pages))
    return render_chunks(chunks)


@pytest.mark.parametrize("seed", range(8))
def test_random_chunkings_render_the_whole_document(seed: int) -> None:
    pages, outline = generated(seed)
    whole = render_document(pages, outline)
    assert (
        whole.count("\n\n") > 40 and "self-made weir of the" in whole
    )  # the document says something
    rng = random.Random(seed)
    for _ in range(4):
        assert _landed_in(rng, pages, outline) == whole


@pytest.mark.parametrize("seed", range(4))
def test_merged_statistics_are_the_whole_documents(seed: int) -> None:
    pages, outline = generated(seed, pages=60)
    whole_doc, _ = write_chunks([ChunkLayout.of(pages, outline)], len(pages))
    rng = random.Random(seed)
    chunks = [ChunkLayout.of(pages[a:b], outline) for a, b in _cut(rng, len(pages))]
    doc, written = write_chunks(chunks, len(pages))
    assert doc.body_size == whole_doc.body_size
    assert doc.levels == whole_doc.levels
    assert doc.bookmarked == whole_doc.bookmarked
    assert set().union(*doc.vocabulary.parts) == set().union(*whole_doc.vocabulary.parts)
    # The furniture the chunks decided, line by line, is the whole document's.
    furniture = find_furniture(pages)
    offset = 0
    found: set[tuple[int, int, int]] = set()
    for chunk in chunks:
        assert chunk.stats is not None
        for pi, margin in enumerate(chunk.margin):
            for key, places in margin.items():
                if key in chunk.stats.furniture:
                    found.update((offset + pi, bi, li) for bi, li in places)
        offset += len(chunk.pages)
    assert found == furniture and furniture
    assert len(written) == len(chunks)


def test_a_forecast_the_last_chunk_overturns_is_written_again() -> None:
    # The last page holds the largest heading: every level below it moves down one, so the
    # chunks written before it landed are written again at the end.
    pages, outline = generated(3)
    chunks = [ChunkLayout.of(pages[a : a + 10], outline) for a in range(0, len(pages), 10)]
    write_chunks(chunks[:-1], len(pages))
    before = [c.written for c in chunks[:-1]]
    assert render_chunks(chunks) == render_document(pages, outline)
    assert any(c.written is not b for c, b in zip(chunks, before, strict=False))


def test_the_body_size_tie_goes_to_the_size_seen_first() -> None:
    def page(number: int, size: float) -> Page:
        blocks: list[Block] = [_block([_line(72, 300, "plain words here", size)])]
        return {"number": number, "ocr": False, "width": 612, "height": 792, "blocks": blocks}

    pages = [page(1, 10.0), page(2, 11.0), page(3, 12.0)]
    chunked = [ChunkLayout.of([p], ()) for p in pages]
    write_chunks(chunked[1:], 3)  # the later pages land first
    doc, _ = write_chunks(chunked, 3)
    whole, _ = write_chunks([ChunkLayout.of(pages, ())], 3)
    assert doc.body_size == whole.body_size == 10.0
    assert render_chunks(chunked) == render_document(pages)


def test_a_writing_redone_from_a_page_twice_is_the_writing_done_afresh() -> None:
    # Bookmarks that appear on one page and then another of a chunk already written: each time
    # the chunk is written again from that page only, and must come out as if written afresh.
    pages, outline = generated(5)
    chunk = ChunkLayout.of(pages[:12], outline)
    doc, _ = write_chunks([chunk], len(pages))
    marked = dict(doc.bookmarked)
    for pi, level in ((2, 2), (7, 0), (4, 1)):
        number = pages[pi]["number"]
        for bi, block in enumerate(pages[pi]["blocks"]):
            if "lines" in block and not block.get("fig"):
                marked[number, bi] = level
        by_page: dict[int, dict[tuple[int, int], int]] = {}
        for ref, lvl in marked.items():
            by_page.setdefault(ref[0], {})[ref] = lvl
        doc = replace(doc, bookmarked=dict(marked), by_page=by_page)
        before = chunk.written
        assert before is not None
        again = _written(chunk, doc)
        assert again is not before and again.pages[0] is before.pages[0]  # not from the start
        chunk.written = again
        afresh = _write(chunk, doc, None, 0, 0)
        assert again.writer.parts == afresh.writer.parts
        assert again.counts == afresh.counts
        assert [p.parts for p in again.pages] == [p.parts for p in afresh.pages]
        assert again.states == afresh.states
