"""A chunk PDF's internal links: a link whose destination page is in the chunk leads to the
chunk's copy of that page, at the same place, as pdftext (marker's text layer) reads it; one
whose page is in another chunk leads nowhere, whether it names its destination or gives it."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from fpdf import FPDF
from pdftext.pdf.links import get_links

from pagefleet.costs import measure_pages
from pagefleet.models import ChunkSpec
from pagefleet.pdf import cut_chunk, cut_halves, linked_names
from pagefleet.settings import Settings
from tests.conftest import corpus_dir

PAGES = 6
# The 1-based pages each page links to, forwards and back, near and far.
TARGETS = {page: ((page % PAGES) + 1, ((page + 3) % PAGES) + 1) for page in range(1, PAGES + 1)}


def linked_pdf(path: Path) -> Path:
    """Six pages, each with a heading that is a named destination ("sec<page>", the name tree
    fpdf2 writes: /Names -> /Dests) and links to two other pages' headings: by name (/Dest
    (sec<n>)), and by an explicit destination array (/Dest [<page> 0 R /XYZ ...])."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for page in range(1, PAGES + 1):
        pdf.add_page()
        pdf.set_y(30 + 10 * page)  # each page's destination at its own height
        pdf.cell(0, 10, f"Section {page}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_link(name=f"sec{page}", y=30 + 10 * page, x=5, page=page)
    for page in range(1, PAGES + 1):
        pdf.page = page
        pdf.set_y(150)
        for target in TARGETS[page]:
            explicit = pdf.add_link(y=30 + 10 * target, x=5, page=target)
            pdf.cell(0, 10, f"see section {target}", link=f"#sec{target}")
            pdf.ln()
            pdf.cell(0, 10, f"or page {target}", link=explicit)
            pdf.ln()
    pdf.output(str(path))
    return path


def link_targets(pdf: pdfium.PdfDocument, page: int, first_page: int = 1) -> list[tuple]:
    """What pdftext gives marker for each link of ``page`` (0-based in ``pdf``): its box, the
    document page it leads to (1-based; ``pdf`` starts at ``first_page``) and the place there.
    A link that leads nowhere is None, or absent where pdftext drops it."""
    found = []
    for link in get_links(page, pdf):
        dest = link["dest_page"]
        where = None if dest is None else dest + first_page
        found.append((link["bbox"], where, link["dest_pos"], link["url"]))
    return found


def chunk_of(doc: pdfium.PdfDocument, first: int, last: int) -> pdfium.PdfDocument:
    return pdfium.PdfDocument(cut_chunk(doc, ChunkSpec(index=0, first_page=first, last_page=last)))


def assert_links_kept(doc: pdfium.PdfDocument, first: int, last: int) -> int:
    """Every link of pages ``first``-``last`` reads in their chunk as in the whole document
    when it leads into the chunk, and leads nowhere when it does not; the number kept."""
    part = chunk_of(doc, first, last)
    kept = 0
    for page in range(first, last + 1):
        whole = link_targets(doc, page - 1)
        inside = [link for link in whole if link[1] is not None and first <= link[1] <= last]
        chunk = link_targets(part, page - first, first)
        assert [link for link in chunk if link[1] is not None] == inside, f"page {page}"
        kept += len(inside)
    return kept


def test_links_into_the_chunk_lead_to_its_own_pages(tmp_path) -> None:
    doc = pdfium.PdfDocument(linked_pdf(tmp_path / "linked.pdf"))
    whole = [link_targets(doc, page) for page in range(PAGES)]
    assert [[link[1] for link in links] for links in whole] == [
        [t for t in TARGETS[page] for _ in "ne"] for page in range(1, PAGES + 1)
    ]
    assert assert_links_kept(doc, 1, PAGES) == 4 * PAGES  # one chunk: every link
    # Pages 2-5: the links to 3, 4, 5 (both kinds), none of those to 1 or 6.
    assert assert_links_kept(doc, 2, 5) == 2 * sum(
        2 <= t <= 5 for page in range(2, 6) for t in TARGETS[page]
    )


def test_a_link_out_of_the_chunk_leads_nowhere_by_name_as_by_page(tmp_path) -> None:
    """pdftext drops a link annotation whose /Dest resolves to nothing
    (pdftext/pdf/links.py:100-115: no destination, no action), whether its /Dest named a
    destination the chunk does not hold or was an array pdfium's import dropped (its page not
    copied): marker then renders the link's text without a link, by name as by page."""
    doc = pdfium.PdfDocument(linked_pdf(tmp_path / "linked.pdf"))
    part = chunk_of(doc, 2, 3)
    for page in (2, 3):
        links = link_targets(part, page - 2, 2)
        assert {link[1] for link in links} == {t for t in TARGETS[page] if 2 <= t <= 3}
    names = set()
    for index in range(pdfium_c.FPDF_CountNamedDests(part.raw)):
        size = ctypes.c_long(0)
        pdfium_c.FPDF_GetNamedDest(part.raw, index, None, size)
        buffer = ctypes.create_string_buffer(size.value)
        pdfium_c.FPDF_GetNamedDest(part.raw, index, buffer, size)
        names.add(buffer.raw[: size.value - 2].decode("utf-16-le"))
    # Page 2 links to 3 and 6, page 3 to 4 and 1: the one name its links use of its own pages,
    # and its own name for the array of page 2's link to page 3, which pdfium dropped.
    assert names == {"sec3", "pagefleet.page1.link1"}


def test_halves_of_a_chunk_keep_their_links(tmp_path) -> None:
    """A chunk cut again (a worker halving one that failed) keeps the destinations it can."""
    doc = pdfium.PdfDocument(linked_pdf(tmp_path / "linked.pdf"))
    chunk = ChunkSpec(index=0, first_page=2, last_page=5)
    halves = (
        ChunkSpec(index=0, first_page=2, last_page=3),
        ChunkSpec(index=1, first_page=4, last_page=5),
    )
    for half, data in zip(halves, cut_halves(cut_chunk(doc, chunk), chunk, halves), strict=True):
        part = pdfium.PdfDocument(data)
        for page in range(half.first_page, half.last_page + 1):
            whole = link_targets(doc, page - 1)
            inside = [link for link in whole if half.first_page <= link[1] <= half.last_page]
            assert link_targets(part, page - half.first_page, half.first_page) == inside


def test_only_pages_whose_copy_lost_a_link_are_read_again(tmp_path, monkeypatch) -> None:
    """Loading a page parses its content: of the source's pages, the cut loads only those whose
    copy has a link without /Dest (one whose array the import may have dropped). Page 1 links
    forward to page 2 (dropped, given back by name), page 2 back to page 1 (kept), page 3 has
    no link."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for _ in range(3):
        pdf.add_page()
    for page, target in ((1, 2), (2, 1)):
        pdf.page = page
        pdf.cell(0, 10, f"to page {target}", link=pdf.add_link(y=10, page=target))
    pdf.output(str(tmp_path / "three.pdf"))
    doc = pdfium.PdfDocument(tmp_path / "three.pdf")
    loaded: list[int] = []
    load = pdfium_c.FPDF_LoadPage

    def counting(document, index):  # type: ignore[no-untyped-def]
        if (
            ctypes.cast(document, ctypes.c_void_p).value
            == ctypes.cast(doc.raw, ctypes.c_void_p).value
        ):
            loaded.append(index)
        return load(document, index)

    monkeypatch.setattr(pdfium_c, "FPDF_LoadPage", counting)
    part = chunk_of(doc, 1, 3)
    monkeypatch.undo()
    assert loaded == [0]
    assert [link[1] for link in link_targets(part, 0)] == [2]
    assert [link[1] for link in link_targets(part, 1)] == [1]


# What pdfium writes new at every save: a cut's bytes less these are the same for the same cut.
_PER_SAVE = re.compile(rb"/ID\s*\[\s*<[0-9A-Fa-f]*>\s*<[0-9A-Fa-f]*>\s*\]|/CreationDate\(D:\d+\)")


def test_pages_measured_without_explicit_links_are_not_loaded_to_cut(tmp_path, monkeypatch) -> None:
    """The splitter's measuring loads every page anyway, and tells which hold a link with a
    destination array (the one kind the import can drop): a cut loads none of the others, nor
    their copies, and writes the same chunk. Page 1 links to page 3 by an array (dropped by
    the import, given back), page 2 to page 1 by name, page 3 to a URL; page 4 has no link."""
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for _ in range(4):
        pdf.add_page()
    pdf.set_link(name="top", y=10, page=1)
    pdf.page = 1
    pdf.cell(0, 10, "to page 3", link=pdf.add_link(y=10, page=3))
    pdf.page = 2
    pdf.cell(0, 10, "to the top", link="#top")
    pdf.page = 3
    pdf.cell(0, 10, "away", link="https://example.org/")
    pdf.output(str(tmp_path / "four.pdf"))
    doc = pdfium.PdfDocument(tmp_path / "four.pdf")
    costs = measure_pages(doc, Settings(ocr="auto"))
    assert costs.unlinked == {1, 2, 3}
    chunk = ChunkSpec(index=0, first_page=1, last_page=4)
    loaded: list[int] = []
    load = pdfium_c.FPDF_LoadPage

    def counting(document, index):  # type: ignore[no-untyped-def]
        loaded.append(index)
        return load(document, index)

    monkeypatch.setattr(pdfium_c, "FPDF_LoadPage", counting)
    data = cut_chunk(doc, chunk, unlinked=costs.unlinked)
    assert loaded == [0, 0]  # page 1's copy, then page 1 itself: nothing else
    loaded.clear()
    assert _PER_SAVE.sub(b"", data) == _PER_SAVE.sub(b"", cut_chunk(doc, chunk))
    # Without them known: every copy, and the source of each copy with a link without /Dest
    # (page 1's, whose array was dropped, and page 3's URL).
    assert loaded == [0, 0, 1, 2, 2, 3]
    assert [link[1] for link in link_targets(pdfium.PdfDocument(data), 0)] == [3]


def test_only_the_pages_looked_at_are_known_without_links(tmp_path) -> None:
    """A page the measuring did not load (only a sample is, where scans need not be told
    apart) is not taken to hold no link."""
    doc = pdfium.PdfDocument(linked_pdf(tmp_path / "linked.pdf"))
    costs = measure_pages(doc, Settings(ocr="off"))
    assert costs.unlinked <= costs.frames.keys()
    assert not costs.unlinked  # every page of this one links by an array


def test_the_update_is_a_well_formed_incremental_update(tmp_path) -> None:
    """pdfium rebuilds a broken cross-reference table without a word, so reading the chunk back
    proves little: each offset the update's table gives is where its object starts."""
    doc = pdfium.PdfDocument(linked_pdf(tmp_path / "linked.pdf"))
    data = cut_chunk(doc, ChunkSpec(index=0, first_page=2, last_page=5))
    update = data[data.rindex(b"\nxref\n") :]
    entries = re.findall(rb"(\d+) 1\n(\d{10}) (\d{5}) n\r\n", update)
    assert len(entries) == 2
    for number, offset, generation in entries:
        start = int(offset)
        assert data[start : start + 32].startswith(b"%d %d obj" % (int(number), int(generation)))
    prev = re.search(rb"/Prev (\d+)", update)
    assert prev is not None and data[int(prev.group(1)) :].startswith(b"xref")
    assert data.endswith(b"%%EOF\n")


def test_a_document_without_named_destinations_is_cut_as_before(tmp_path) -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(0, 10, "no links")
    pdf.output(str(tmp_path / "plain.pdf"))
    data = cut_chunk(
        pdfium.PdfDocument(tmp_path / "plain.pdf"), ChunkSpec(index=0, first_page=1, last_page=1)
    )
    assert data.count(b"%%EOF") == 1


@pytest.mark.parametrize(("first", "last"), [(1, 13), (1, 5), (4, 9), (10, 13)])
def test_a_hyperref_paper_keeps_its_links_in_chunks(first: int, last: int) -> None:
    """dpr-multi-column (LaTeX, hyperref: /A << /S /GoTo /D (cite.x) >>, 118 names): on main
    not one of its 205 internal links resolved in a chunk, the whole document in one chunk
    included, so marker lost every citation and reference link and their anchors. Of the
    205, 2 lead to no page in the whole document either."""
    doc = pdfium.PdfDocument(corpus_dir("real") / "unstructured__dpr-multi-column.pdf")
    assert assert_links_kept(doc, first, last) > 0


def test_the_names_links_use_are_read_as_pdfium_wrote_them() -> None:
    """Literal strings with pdfium's escapes, hex strings and names, as the /D of an action
    and the /Dest of a link; other keys' strings are not names."""
    data = (
        rb"<</A<</D(sec\(1\)\\a\101)/S/GoTo>>>> <</Dest<7365 632>>> <</Dest/fig#2E1>>"
        rb" <</Dest[3 0 R /XYZ 0 0 null]>> <</T(not a name)/Dest (two\
lines)>>"
    )
    assert linked_names(data) == {b"sec(1)\\aA", b"sec ", b"fig.1", b"twolines"}
