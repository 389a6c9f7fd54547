"""Small hostile PDFs written by hand, for what the shared corpus lacks."""

from __future__ import annotations

import random
import zlib

from tests.layout_pdfs import pdf_of


def page_tree_loop(good_pages: int) -> bytes:
    """``good_pages`` pages, then the /Pages node listed among its own /Kids: PDFium opens it
    and counts good_pages + 1 pages, but cannot copy the last one."""
    content = b"BT /F1 12 Tf 20 100 Td (page) Tj ET"
    stream = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    pages = [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 3 0 R >>"]
    kids = " ".join(f"{4 + i} 0 R" for i in range(good_pages)) + " 2 0 R"
    tree = f"<< /Type /Pages /Kids [{kids}] /Count {good_pages + 1} >>".encode()
    return pdf_of([b"<< /Type /Catalog /Pages 2 0 R >>", tree, stream, *pages * good_pages])


def outline_bomb(bookmarks: int, title_bytes: int) -> bytes:
    """One page and ``bookmarks`` bookmarks that all name one title object of ``title_bytes``:
    the file holds the title once, a reader that copies each bookmark's title holds it
    ``bookmarks`` times (issue 30, finding 6: 1,000 x 50 KB made a 50 MB manifest)."""
    first, last = 6, 5 + bookmarks
    items = [
        b"<< /Title 4 0 R /Parent 5 0 R /Dest [3 0 R /XYZ 0 150 0]"
        + (b" /Prev %d 0 R" % (number - 1) if number > first else b"")
        + (b" /Next %d 0 R" % (number + 1) if number < last else b"")
        + b" >>"
        for number in range(first, last + 1)
    ]
    return pdf_of(
        [
            b"<< /Type /Catalog /Pages 2 0 R /Outlines 5 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
            b"(" + b"bomb " * (title_bytes // 5) + b")",
            b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>"
            % (first, last, bookmarks),
            *items,
        ]
    )


def shared_image_pages(pages: int, image_bytes: int, seed: int = 1) -> bytes:
    """``pages`` text pages that all draw one image of ``image_bytes`` (random, so nothing
    compresses it): the file holds it once, a PDF of each page holds it again."""
    side = int(image_bytes**0.5)
    pixels = random.Random(seed).randbytes(side * side)
    image = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Length %d >>\nstream\n"
        % (side, side, len(pixels))
        + pixels
        + b"\nendstream"
    )
    content = (
        b"q 50 0 0 50 20 120 cm /Im0 Do Q BT /F1 12 Tf 20 60 Td (a page sharing an image) Tj ET"
    )
    stream = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    resources = b"/Resources << /Font << /F1 5 0 R >> /XObject << /Im0 4 0 R >> >>"
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 3 0 R %s >>" % resources
    kids = " ".join(f"{6 + i} 0 R" for i in range(pages))
    tree = f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode()
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    catalog = b"<< /Type /Catalog /Pages 2 0 R >>"
    return pdf_of([catalog, tree, stream, image, font, *[page] * pages])


def dense_text_page(chars: int) -> bytes:
    """One page holding ``chars`` characters of tiny text (its content stream compressed, so
    the file stays small): converting it takes the text layer some 400 bytes a character."""
    rows = [
        b"BT /F1 2 Tf 5 %d Td (abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi "
        b"abcdefghi abcdefghi abcdefghi abcdefghi abcdefghi) Tj ET" % (5 + row % 390 * 2)
        for row in range(chars // 100)
    ]
    content = zlib.compress(b"\n".join(rows))
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content
    return pdf_of(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            stream + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> >> >>",
        ]
    )
