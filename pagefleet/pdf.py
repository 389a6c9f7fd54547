"""Opening, validating and cutting PDFs with pypdfium2 (rule 4: bad input gets a clear code)."""

from __future__ import annotations

import ctypes
import io
import math
import re
from collections.abc import Callable, Container, Iterator
from decimal import Decimal

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pagefleet.errors import ErrorCode, PagefleetError
from pagefleet.models import ChunkSpec

# PDF readers accept the header anywhere in the first KiB (ISO 32000-2, 7.5.2 note).
_HEADER_WINDOW = 1024
# PDFium refuses a document whose page tree is empty with a generic format error; a page tree
# node declaring /Count 0 tells that case apart from real damage.
_EMPTY_PAGE_TREE = re.compile(
    rb"/Type\s*/Pages\b[^>]*?/Count\s+0\b|/Count\s+0\b[^>]*?/Type\s*/Pages\b"
)


# (bottom, height) of an upright page's visible box, in PDF user space.
Frame = tuple[float, float]


def page_frame(page: pdfium_c.FPDF_PAGE) -> Frame | None:
    """(bottom, height) of the visible box (media box within crop box) of a loaded page, as the
    converter measures it; None for a rotated page, or one pdfium cannot measure."""
    if pdfium_c.FPDFPage_GetRotation(page) != 0:
        return None
    rect = pdfium_c.FS_RECTF()
    if not pdfium_c.FPDF_GetPageBoundingBox(page, rect):
        return None
    return rect.bottom, float(math.ceil(abs(rect.top - rect.bottom)))


def check_size(size: int, max_bytes: int) -> None:
    if size == 0:
        raise PagefleetError(ErrorCode.EMPTY, "the file is empty (0 bytes)")
    if size > max_bytes:
        raise PagefleetError(
            ErrorCode.TOO_LARGE, f"the file has {size:,} bytes; the limit is {max_bytes:,}"
        )


def open_pdf(data: bytes, *, max_bytes: int, max_pages: int) -> pdfium.PdfDocument:
    """Open ``data`` as a PDF, or raise :class:`PagefleetError` saying why it is not usable."""
    check_size(len(data), max_bytes)
    if b"%PDF-" not in data[:_HEADER_WINDOW]:
        raise PagefleetError(ErrorCode.NOT_PDF, "the file does not start with a PDF header")
    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if _EMPTY_PAGE_TREE.search(data):
            raise PagefleetError(ErrorCode.NO_PAGES, "the document has no pages") from exc
        raise _load_error(exc) from exc
    except Exception as exc:  # whatever else the library raises on hostile input
        raise PagefleetError(ErrorCode.MALFORMED, f"the PDF cannot be read ({exc})") from exc
    pages = len(doc)
    if pages == 0:
        doc.close()
        raise PagefleetError(ErrorCode.NO_PAGES, "the document has no pages")
    if pages > max_pages:
        doc.close()
        raise PagefleetError(
            ErrorCode.TOO_MANY_PAGES,
            f"the document has {pages:,} pages; the limit is {max_pages:,}",
        )
    return doc


def _load_error(exc: pdfium.PdfiumError) -> PagefleetError:
    code = getattr(exc, "err_code", None)
    if code == pdfium_c.FPDF_ERR_PASSWORD:
        return PagefleetError(ErrorCode.ENCRYPTED, "the document is encrypted with a password")
    if code == pdfium_c.FPDF_ERR_SECURITY:
        return PagefleetError(ErrorCode.ENCRYPTED, "the document uses an unsupported encryption")
    return PagefleetError(ErrorCode.MALFORMED, f"the PDF structure is damaged ({exc})")


def cut_chunks(
    doc: pdfium.PdfDocument, chunks: list[ChunkSpec]
) -> Iterator[tuple[ChunkSpec, bytes]]:
    """Each chunk as a PDF of its own pages, one at a time so memory stays flat."""
    for chunk in chunks:
        yield chunk, cut_chunk(doc, chunk)


def cut_chunk(
    doc: pdfium.PdfDocument,
    chunk: ChunkSpec,
    *,
    doc_first_page: int = 1,
    unlinked: Container[int] = (),
) -> bytes:
    """The chunk's pages as a PDF of their own; ``doc`` starts at page ``doc_first_page`` of
    the document (a chunk's own PDF, cut into halves). A page tree that opens but cannot be
    copied (a /Pages node among its own /Kids) raises :class:`PagefleetError` ``malformed``,
    never the library's own error.

    A link whose destination is a page of the chunk leads to the chunk's copy of that page
    (:func:`with_named_dests`); one whose page is in another chunk leads nowhere.
    ``unlinked``: pages of ``doc`` (0-based) known to hold no link with a destination array
    (:func:`has_explicit_links`, asked where the page was loaded anyway): the import drops
    nothing of theirs that :func:`_relink_explicit` could give back, so it loads neither them
    nor their copies."""
    part = pdfium.PdfDocument.new()
    start = chunk.first_page - doc_first_page
    pages = range(start, start + chunk.pages)
    try:
        part.import_pages(doc, list(pages))
        data = _saved(part)
        # Reading annotations loads (parses) each page: only where the chunk has a link.
        relink = [at for at, page in enumerate(pages) if page not in unlinked]
        dests = _relink_explicit(doc, part, pages, relink) if b"/Subtype/Link" in data else []
        if dests:
            data = _saved(part)
    except Exception as exc:
        raise PagefleetError(
            ErrorCode.MALFORMED,
            f"pages {chunk.first_page}-{chunk.last_page} cannot be read ({exc})",
        ) from exc
    finally:
        part.close()
    return with_named_dests(data, dests + _named_dests(doc, linked_names(data), pages))


def _saved(doc: pdfium.PdfDocument) -> bytes:
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def cut_halves(
    data: bytes, chunk: ChunkSpec, halves: tuple[ChunkSpec, ChunkSpec]
) -> tuple[bytes, bytes]:
    """The PDFs of ``halves`` of ``chunk``, cut from ``data``, the chunk's own PDF."""
    try:
        doc = pdfium.PdfDocument(data)
    except Exception as exc:
        message = f"the chunk's PDF cannot be read ({exc})"
        raise PagefleetError(ErrorCode.MALFORMED, message) from exc
    try:
        first, second = (cut_chunk(doc, h, doc_first_page=chunk.first_page) for h in halves)
        return first, second
    finally:
        doc.close()


# Named destinations: pdfium's import_pages (FPDF_ImportPages) copies pages, not the catalog,
# so a chunk PDF has neither the /Dests dictionary nor the /Names -> /Dests tree, and a link
# that names its destination (hyperref's /A << /S /GoTo /D (cite.x) >>, /Dest (name)) resolves
# to nothing in the chunk: pdftext drops it or leaves it without a URL
# (pdftext/pdf/links.py:100-136), so marker renders no link and no anchor for it. A chunk gets
# back, as a name tree pointing at its own copy of the page, each destination its links name
# whose page it holds. One whose page is in another chunk is left out: its links then resolve
# to no page, as a link with an explicit destination in another chunk does after the import
# (pdfium's CPDF_PageOrganizer::UpdateReference drops any array that references a page it
# does not copy), and marker renders their text without a link, as it does for those.

# The names a chunk's links use, read off the chunk PDF pdfium wrote: the value of a /D (an
# action's) or /Dest (a link's) key that is a string or a name. pdfium writes every object
# plainly and escapes ( ) and \ in a literal string (PDF_EncodeString), so a literal is
# parentheses around escapes and other bytes. Asking pdfium for each name
# (FPDF_GetNamedDestByName) is a search down the tree; reading every name of a document
# (FPDF_GetNamedDest by index) walks the tree from its root for each one, 0.75 s of CPU for
# the 5,697 of a 285-page hyperref manual, and grows with the square of their number.
_DEST_VALUE = re.compile(
    rb"/D(?:est)?\s*(?:\(((?:\\.|[^\\)])*)\)|<([0-9A-Fa-f\s]*)>|/([^\s/<>\[\]()%{}]+))",
    re.DOTALL,
)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
_VIEWS = {
    pdfium_c.PDFDEST_VIEW_FIT: "Fit",
    pdfium_c.PDFDEST_VIEW_FITH: "FitH",
    pdfium_c.PDFDEST_VIEW_FITV: "FitV",
    pdfium_c.PDFDEST_VIEW_FITR: "FitR",
    pdfium_c.PDFDEST_VIEW_FITB: "FitB",
    pdfium_c.PDFDEST_VIEW_FITBH: "FitBH",
    pdfium_c.PDFDEST_VIEW_FITBV: "FitBV",
}


def linked_names(data: bytes) -> set[bytes]:
    """The destination names (raw bytes) that the links in ``data``, a PDF pdfium wrote, use.
    Bytes of a compressed stream that happen to read as one are harmless: a name is kept only
    where the document has a destination of that name."""
    names = set()
    for literal, hexa, name in _DEST_VALUE.findall(data):
        if name:
            names.add(re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes.fromhex(m[1].decode()), name))
        elif hexa or not literal:
            digits = re.sub(rb"\s", b"", hexa)
            names.add(bytes.fromhex((digits + b"0" * (len(digits) % 2)).decode()))
        else:
            names.add(_unescape(literal))
    return names


def _unescape(literal: bytes) -> bytes:
    """A literal string's bytes (ISO 32000-2, 7.3.4.2)."""

    def one(match: re.Match[bytes]) -> bytes:
        code = match[1]
        if code[:1].isdigit():
            return bytes([int(code, 8) & 0xFF])
        if code in (b"\r\n", b"\n", b"\r"):
            return b""  # a line continued
        return _ESCAPES.get(code, code)

    return re.sub(rb"\\([0-7]{1,3}|\r\n|.)", one, literal, flags=re.DOTALL)


def _named_dests(
    doc: pdfium.PdfDocument, names: set[bytes], pages: range
) -> list[tuple[bytes, int, str]]:
    """(name, page of the chunk, view) of each of ``names`` that ``doc`` resolves to one of
    ``pages``, as pdfium looks a link's name up (CPDF_NameTree::LookupNamedDest: the tree,
    then the old /Dests dictionary)."""
    dests = []
    for name in sorted(names):
        if b"\0" in name:
            continue  # pdfium takes the name as a C string (UTF-16 names are left out)
        dest = pdfium_c.FPDF_GetNamedDestByName(doc.raw, name)
        if dest and (page := pdfium_c.FPDFDest_GetDestPageIndex(doc.raw, dest)) in pages:
            dests.append((name, page - pages.start, _view(dest)))
    return dests


def _relink_explicit(
    doc: pdfium.PdfDocument, part: pdfium.PdfDocument, pages: range, looked: list[int]
) -> list[tuple[bytes, int, str]]:
    """Give back, by a name of the chunk's own, each link destination array of ``pages`` that
    the import dropped though its page is in the chunk: (name, page of ``part``, view) each.
    Only the pages ``looked`` (of ``part``, 0-based) are looked at: the others hold no such
    link (see :func:`cut_chunk`).

    pdfium copies a page's objects in page order and drops an array that references a page it
    has not copied yet (CPDF_PageOrganizer::GetNewObjId returns 0 for a /Type /Page object,
    and UpdateReference then removes the key): a link to its own or an earlier page of the
    chunk keeps its /Dest, one to a later page loses it. Such a link's annotation gets /Dest
    (a name) again, the only kind of value pdfium's annotation calls write."""
    dests: list[tuple[bytes, int, str]] = []
    for at in looked:
        source = pages[at]
        # Loading a page parses its content (~0.4 ms): the source page is loaded only where
        # its copy has a link without /Dest, the only kind _dropped_dest can answer for. pdfium's
        # own calls, as pypdfium2's page objects add a third to each load and close (costs.py).
        dst = pdfium_c.FPDF_LoadPage(part.raw, at)
        if not dst:
            continue
        src = None
        try:
            count = pdfium_c.FPDFPage_GetAnnotCount(dst)
            lost = [index for index in range(count) if _lost_dest(dst, index)]
            if not lost:
                continue
            src = pdfium_c.FPDF_LoadPage(doc.raw, source)
            if not src or count != pdfium_c.FPDFPage_GetAnnotCount(src):
                continue  # the copy's annotations are not the source's, one for one
            for index in lost:
                target = _dropped_dest(doc, src, index)
                if target is not None and target[0] in pages:
                    name = f"pagefleet.page{at + 1}.link{index}"
                    dests.append((name.encode(), target[0] - pages.start, target[1]))
                    annot = pdfium_c.FPDFPage_GetAnnot(dst, index)
                    value = ctypes.create_string_buffer((name + "\0").encode("utf-16-le"))
                    pointer = ctypes.cast(value, pdfium_c.FPDF_WIDESTRING)
                    pdfium_c.FPDFAnnot_SetStringValue(annot, b"Dest", pointer)
                    pdfium_c.FPDFPage_CloseAnnot(annot)
        finally:
            if src:
                pdfium_c.FPDF_ClosePage(src)
            pdfium_c.FPDF_ClosePage(dst)
    return dests


def _lost_dest(page: pdfium_c.FPDF_PAGE, index: int) -> bool:
    """Whether annotation ``index`` of ``page`` is a link without /Dest: one whose array the
    import may have dropped."""
    return _annot_is(
        page,
        index,
        lambda annot: (
            pdfium_c.FPDFAnnot_GetSubtype(annot) == pdfium_c.FPDF_ANNOT_LINK
            and not pdfium_c.FPDFAnnot_HasKey(annot, b"Dest")
        ),
    )


def has_explicit_links(page: pdfium_c.FPDF_PAGE) -> bool:
    """Whether a loaded page has a link annotation whose /Dest is an array: the only kind of
    link whose destination the import can drop and :func:`_dropped_dest` gives back."""
    return any(
        _annot_is(page, index, _explicit_link)
        for index in range(pdfium_c.FPDFPage_GetAnnotCount(page))
    )


def _annot_is(
    page: pdfium_c.FPDF_PAGE, index: int, test: Callable[[pdfium_c.FPDF_ANNOTATION], object]
) -> bool:
    """Whether annotation ``index`` of ``page`` opens and passes ``test``."""
    annot = pdfium_c.FPDFPage_GetAnnot(page, index)
    if not annot:
        return False
    try:
        return bool(test(annot))
    finally:
        pdfium_c.FPDFPage_CloseAnnot(annot)


def _explicit_link(annot: pdfium_c.FPDF_ANNOTATION) -> bool:
    return bool(
        pdfium_c.FPDFAnnot_GetSubtype(annot) == pdfium_c.FPDF_ANNOT_LINK
        and pdfium_c.FPDFAnnot_GetValueType(annot, b"Dest") == pdfium_c.FPDF_OBJECT_ARRAY
    )


def _dropped_dest(
    doc: pdfium.PdfDocument, src: pdfium_c.FPDF_PAGE, index: int
) -> tuple[int, str] | None:
    """(page index in ``doc``, view) of link annotation ``index`` of ``src`` if its /Dest is
    an array (its copy lost its /Dest: see :func:`_lost_dest`); else None."""
    annot = pdfium_c.FPDFPage_GetAnnot(src, index)
    if not annot:
        return None
    try:
        if not _explicit_link(annot):
            return None
        dest = pdfium_c.FPDFLink_GetDest(doc.raw, pdfium_c.FPDFAnnot_GetLink(annot))
        if not dest:
            return None
        return pdfium_c.FPDFDest_GetDestPageIndex(doc.raw, dest), _view(dest)
    finally:
        pdfium_c.FPDFPage_CloseAnnot(annot)


def _view(dest: pdfium_c.FPDF_DEST) -> str:
    """The part of a destination array after its page. /XYZ keeps which of its numbers are
    null, as pdftext reads a link's position only where both x and y are given
    (pdftext/pdf/links.py:12-26); the other kinds' numbers are all given in a valid array."""
    has = [ctypes.c_int() for _ in range(3)]
    at = [ctypes.c_float() for _ in range(3)]
    if pdfium_c.FPDFDest_GetLocationInPage(dest, *has, *at):
        return "/XYZ " + " ".join(
            _number(v.value) if h.value else "null" for h, v in zip(has, at, strict=True)
        )
    count = ctypes.c_ulong(0)
    params = (pdfium_c.FS_FLOAT * 4)()
    kind = _VIEWS.get(pdfium_c.FPDFDest_GetView(dest, count, params), "Fit")
    numbers = [_number(params[i]) for i in range(min(count.value, 4))] if kind != "Fit" else []
    return " ".join([f"/{kind}", *numbers])


def _number(value: float) -> str:
    """A PDF real that reads back as the same float (no exponent: PDF has none)."""
    text = format(Decimal(value), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _pdf_string(raw: bytes) -> bytes:
    """``raw`` as a PDF string of the same bytes, so that pdfium decodes it (PDF_DecodeText) to
    what it decodes the link's name to: a literal where it is printable ASCII, else hex."""
    if all(32 <= byte <= 126 for byte in raw):
        return b"(" + re.sub(rb"([()\\])", rb"\\\1", raw) + b")"
    return b"<" + raw.hex().upper().encode("ascii") + b">"


def _text(raw: bytes) -> str:
    """The text pdfium compares a name tree's keys by (PDF_DecodeText): UTF-16 or UTF-8 after a
    byte order mark, else PDFDocEncoding, taken as Latin-1 here (the two differ only in
    control and typographic characters, which order keys no differently in practice)."""
    for bom, codec in (
        (b"\xfe\xff", "utf-16-be"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xef\xbb\xbf", "utf-8"),
    ):
        if raw.startswith(bom):
            return raw[len(bom) :].decode(codec, "replace")
    return raw.decode("latin-1")


_TRAILER = re.compile(rb"trailer\s*<<(.*?)>>\s*startxref\s+(\d+)\s*%%EOF\s*$", re.DOTALL)
_REF = rb"(\d+)\s+(\d+)\s+R"


def with_named_dests(data: bytes, dests: list[tuple[bytes, int, str]]) -> bytes:
    """``data``, a PDF that pdfium saved, with ``dests`` (name, 0-based page, view) as its
    catalog's /Names -> /Dests tree: an incremental update (ISO 32000-2, 7.5.6), one new leaf
    node and the catalog rewritten, as pypdfium2 has no call that writes a catalog entry.

    The tree is one leaf, its keys in the order pdfium's lookup needs: it reads a leaf's names
    in order and stops at the first greater one (cpdf_nametree.cpp,
    SearchNameNodeByNameInternal), comparing decoded text."""
    if not dests:
        return data
    trailer = _TRAILER.search(data)
    if trailer is None:
        raise ValueError("pdfium saved a PDF without a classic trailer; cannot add destinations")
    fields, prev = trailer.group(1), int(trailer.group(2))
    root = _match(rb"/Root\s*" + _REF, fields)
    size = int(_match(rb"/Size\s+(\d+)", fields).group(1))
    catalog = _object(data, int(root.group(1)), int(root.group(2)))
    pages_ref = _match(rb"/Pages\s*" + _REF, catalog)
    pages = _object(data, int(pages_ref.group(1)), int(pages_ref.group(2)))
    kids = re.findall(_REF, _match(rb"/Kids\s*\[(.*?)\]", pages).group(1))
    names = b" ".join(
        _pdf_string(name) + b" [%s %s R %s]" % (*kids[page], view.encode("ascii"))
        for name, page, view in sorted(dests, key=lambda dest: _text(dest[0]))
    )
    tree = size
    objects = [
        (root.group(1), root.group(2), catalog[:-2] + b"/Names<</Dests %d 0 R>>>>" % tree),
        (b"%d" % tree, b"0", b"<</Names[" + names + b"]>>"),
    ]
    update = bytearray(b"\n" if not data.endswith(b"\n") else b"")
    xref = []
    for number, generation, body in objects:
        offset = len(data) + len(update)
        update += number + b" " + generation + b" obj\n" + body + b"\nendobj\n"
        xref.append(b"%s 1\n%010d %05d n\r\n" % (number, offset, int(generation)))
    start = len(data) + len(update)
    kept = b"".join(
        m.group(0)
        for key in (rb"/Info\s*" + _REF, rb"/ID\s*\[[^\]]*\]")
        if (m := re.search(key, fields))
    )
    update += b"xref\n" + b"".join(xref)
    update += b"trailer\n<</Size %d/Root %s %s R%s/Prev %d>>\n" % (
        size + 1,
        root.group(1),
        root.group(2),
        kept,
        prev,
    )
    update += b"startxref\n%d\n%%%%EOF\n" % start
    return data + bytes(update)


def _match(pattern: bytes, data: bytes) -> re.Match[bytes]:
    match = re.search(pattern, data, re.DOTALL)
    if match is None:
        raise ValueError(f"pdfium's saved PDF has no {pattern!r} where expected")
    return match


def _object(data: bytes, number: int, generation: int) -> bytes:
    """The dictionary of indirect object ``number`` in a PDF pdfium saved (one body, no
    streams among the objects read here: the catalog and the page tree's root)."""
    return _match(
        rb"(?:^|[\r\n])%d %d obj\s*(<<.*?>>)\s*endobj" % (number, generation), data
    ).group(1)
