"""Opening, validating and cutting PDFs with pypdfium2 (rule 4: bad input gets a clear code)."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator

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


def cut_chunk(doc: pdfium.PdfDocument, chunk: ChunkSpec, *, doc_first_page: int = 1) -> bytes:
    """The chunk's pages as a PDF of their own; ``doc`` starts at page ``doc_first_page`` of
    the document (a chunk's own PDF, cut into halves). A page tree that opens but cannot be
    copied (a /Pages node among its own /Kids) raises :class:`PagefleetError` ``malformed``,
    never the library's own error."""
    part = pdfium.PdfDocument.new()
    start = chunk.first_page - doc_first_page
    try:
        part.import_pages(doc, list(range(start, start + chunk.pages)))
        buffer = io.BytesIO()
        part.save(buffer)
    except Exception as exc:
        raise PagefleetError(
            ErrorCode.MALFORMED,
            f"pages {chunk.first_page}-{chunk.last_page} cannot be read ({exc})",
        ) from exc
    finally:
        part.close()
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
