"""Pictures: a page's images and drawings, each written as an asset and linked where it stands.

- An image (a pdfium image object) 32 pixels a side at least is written at its own resolution,
  its masks and placement applied (pdfium renders the object alone; a one-bit stencil is
  written from its own pixels, as a one-bit PNG). Left out: the scan under a
  page's text (an image covering a quarter of the page with half its text on it: the text is
  the page's OCR layer, or the page's own text over a background), and the page OCR reads.
- A drawing (a chart, a diagram) is a cluster of painted vector paths that draws more than
  rules and frames (curves or slanted lines, or filled areas with no text on them: bars), with
  no text inside but short labels. It is rendered as a crop of the page, its labels (the short
  lines inside it or along its edges) with it; a caption stays text. The labels are kept as
  text too, after the picture (see :func:`labels_to_pictures`): a reader searching the
  Markdown, or a model reading it, finds a diagram's words. pymupdf4llm does the same by
  default (0.3.4, ``helpers/pymupdf_rag.py``: ``to_markdown(..., force_text=True)`` at line
  336, and ``output_images`` writes the text inside a picture's box right after its link,
  lines 834-845). A grid of rules and frames with text in it is a table or a form, never a
  drawing, and a page border or a lone rule draws nothing on its own.

Everything is read from the page alone (rule 5): the same page gives the same pictures, names
and bytes in a chunk as in the whole document.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from pagefleet.layout.lines import CAPTION, line_size, line_text, union
from pagefleet.layout.rows import merge_rows
from pagefleet.layout.schema import Bbox, Block, ImageBlock, Line, TableBlock
from runner.converters.text_layer.chars import layout_boxes, page_rotation, page_size
from runner.converters.text_layer.objects import PageObjects, Placed, curved
from runner.converters.text_layer.tables import centred_in

# An image smaller than this many pixels on a side is an icon, a rule or a texture.
_MIN_PIXELS = 32
# A drawing has this many painted paths at least, and is this many points a side.
_MIN_PATHS = 8
_MIN_SIDE = 32.0
# ...and this many paths that draw curves or slanted lines, or this many filled areas (bars);
# its labels cover so much of its box at most (see _draws).
_MIN_DRAWN = 2
_DRAWN_SHARE = 0.2
_MIN_BARS = 3
_MAX_COVER = 0.3
_LOW_COVER = 0.12
# A path thinner than this (points) is a rule.
_THIN = 2.0
# Paths closer than this (points) are one cluster.
_CELL = 4.0
# A path covering this share of the page is its background or its border.
_BACKGROUND = 0.5
# An image this share of the page with half its text over it is the page's scan.
_SCAN_AREA = 0.25
# A label: a line this short (characters) at a size no larger than this share of the page's
# usual one; labels along a drawing's edges are this many line heights from it at most, taken
# in so many steps (an axis's ticks, then its title).
_LABEL_CHARS = 40
_LABEL_SIZE = 1.15
_LABEL_REACH = 1.5
_LABEL_STEPS = 2
# Lines this many line heights from a drawing are the page's text, not its labels.
_FAR = 4.0
# A drawing is rendered at this scale (144 dpi) with this margin (points) around it.
_SCALE = 2.0
_MARGIN = 2.0
_WHITE = 250
# A picture's key: so many bytes of a digest of what it shows.
_KEY_BYTES = 8


@dataclass
class Picture:
    """A picture of the page: its box in layout coordinates, its asset's name and what it shows
    (``key``: the same on every page that shows it); ``image`` is the pdfium image object to
    write, None for a drawing (rendered from the page), whose ``labels`` are read after it."""

    box: Bbox
    name: str
    key: str
    image: Any = None
    labels: list[list[Line]] = field(default_factory=list)

    def block(self) -> ImageBlock:
        block: ImageBlock = {
            "bbox": [round(v, 1) for v in self.box],
            "image": self.name,
            "key": self.key,
        }
        if self.labels:
            block["labels"] = self.labels
        return block


def find_pictures(
    objects: PageObjects,
    lines: list[Line],
    tables: list[TableBlock],
    bbox: list[float],
    rotation: int,
    number: int,
) -> list[Picture]:
    """The pictures of page ``number``: its drawings, then its images outside them."""
    width, height = _size(bbox, rotation)
    drawings = _drawings(objects, lines, tables, bbox, rotation, width, height)
    pictures = [
        Picture(box, f"page-{number:05d}-figure-{k}.png", key)
        for k, (box, key) in enumerate(drawings, 1)
    ]
    k = 0
    for box, obj in _placed(objects.images, bbox, rotation, width, height):
        w, h = ctypes.c_uint(), ctypes.c_uint()
        if not pdfium_c.FPDFImageObj_GetImagePixelSize(obj, w, h):
            continue
        if min(w.value, h.value) < _MIN_PIXELS or any(centred_in(box, d) for d, _ in drawings):
            continue
        if _is_scan(box, lines, width * height):
            continue
        k += 1
        pictures.append(Picture(box, f"page-{number:05d}-image-{k}.png", _image_key(obj), obj))
    return pictures


def _image_key(obj: Any) -> str:
    """What an image shows, digested from its data as the PDF stores it."""
    size = pdfium_c.FPDFImageObj_GetImageDataRaw(obj, None, 0)
    data = (ctypes.c_ubyte * size)()
    pdfium_c.FPDFImageObj_GetImageDataRaw(obj, data, size)
    return _digest(bytes(data))


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=_KEY_BYTES).hexdigest()


def labels_to_pictures(lines: list[Line], pictures: list[Picture]) -> list[Line]:
    """The lines that are not a drawing's labels (captions stay; an image's lines stay); each
    drawing's labels go to its picture, in reading order (:func:`_read_labels`), to be
    written after it. They stay out of the page's blocks: never a heading, never a paragraph
    the picture would cut in two (the writer holds a picture and its labels back until the
    paragraph it interrupts ends)."""
    drawings = [p for p in pictures if p.image is None]
    if not drawings:
        return lines
    kept: list[Line] = []
    taken: list[list[Line]] = [[] for _ in drawings]
    for line in lines:
        at = None
        if not CAPTION.match(line_text(line)):
            at = next((k for k, p in enumerate(drawings) if centred_in(line["bbox"], p.box)), None)
        if at is None:
            kept.append(line)
        else:
            taken[at].append(line)
    for picture, labels in zip(drawings, taken, strict=True):
        picture.labels = _read_labels(labels)
    return kept


# Lines of a label stand this share of the smaller one's height apart at most, one under the
# other (a box's name set on two lines), at sizes this ratio apart at most.
_LEADING = 0.5
_SIZES = 1.2


def _read_labels(lines: list[Line]) -> list[list[Line]]:
    """A drawing's labels in reading order, each as its lines. Lines stacked close (each under
    the one before, overlapping it across by half the narrower's width) make one label;
    labels are read in rows, top to bottom, each row left to right (a label whose middle is
    within the row so far, or that holds the row's middle, is on it), which reads a
    pipeline's boxes in turn, where pdfium's order is the order they were drawn in. Left
    out: a line without a letter (an axis's ticks, a callout's number), which says nothing
    without the picture. Lines cut from one run of text (see
    :class:`pagefleet.layout.schema.Line`) stay apart: a slide's boxes in a row may be one
    run, cut where it crosses from one box to the next."""
    stacked: list[Line] = []
    for line in merge_rows(lines):
        if any(c.isalpha() for c in line_text(line)):
            plain = line.copy()
            plain.pop("cut", None)
            stacked.append(plain)
    # Each label: the box of its last line, and its lines; those a line further down may
    # still join (lines come top first: one too far above a line is too far for the rest).
    labels: list[tuple[Bbox, list[Line]]] = []
    near: list[int] = []
    for line in sorted(stacked, key=lambda ln: ln["bbox"][1]):
        box, size = line["bbox"], line_size(line)
        near = [k for k in near if box[1] - labels[k][0][3] <= _LEADING * _height(labels[k][0])]
        at, closest = None, math.inf
        for k in near:
            above, label = labels[k]
            gap = box[1] - above[3]
            across = min(box[2], above[2]) - max(box[0], above[0])
            sizes = sorted((size, line_size(label[-1])))
            if (
                abs(gap) <= _LEADING * min(_height(box), _height(above))
                and across >= 0.5 * min(box[2] - box[0], above[2] - above[0])
                and sizes[1] <= _SIZES * sizes[0]
                and abs(gap) < closest
            ):
                at, closest = k, abs(gap)
        if at is None:
            near.append(len(labels))
            labels.append((box, [line]))
        else:
            labels[at] = (box, [*labels[at][1], line])
    rows: list[tuple[Bbox, list[tuple[Bbox, list[Line]]]]] = []
    for box, label in sorted(
        ((union([ln["bbox"] for ln in label]), label) for _, label in labels),
        key=lambda b: b[0][1],
    ):
        if rows and _level(box, rows[-1][0]):
            rows[-1] = (union([rows[-1][0], box]), [*rows[-1][1], (box, label)])
        else:
            rows.append((box, [(box, label)]))
    return [label for _, row in rows for _, label in sorted(row, key=lambda m: m[0][0])]


def _height(box: Bbox) -> float:
    return box[3] - box[1]


def _level(box: Bbox, band: Bbox) -> bool:
    """Whether ``box`` reads on the row ``band``: its middle within the band, or the band's
    within it."""
    middle, centre = (box[1] + box[3]) / 2, (band[1] + band[3]) / 2
    return band[1] <= middle <= band[3] or box[1] <= centre <= box[3]


def write_pictures(page: pdfium.PdfPage, pictures: list[Picture], folder: Path) -> None:
    """Each picture as a PNG file in ``folder``, under its name."""
    if not pictures:
        return
    width, height = _size(page.get_bbox(), page_rotation(page))
    for picture in pictures:
        if picture.image is None:
            x0, y0, x1, y1 = picture.box
            # Render crop is cut off the page's edges, in points, after its rotation.
            bitmap = page.render(
                scale=_SCALE, crop=(x0, height - y1, width - x1, y0), draw_annots=False
            )
            _fewest_channels(bitmap).save(folder / picture.name, format="PNG")
            continue
        image = pdfium.PdfImage(picture.image, page=page)
        picture_png = _stencil(image) or _fewest_channels(image.get_bitmap(render=True))
        picture_png.save(folder / picture.name, format="PNG")


def _stencil(image: pdfium.PdfImage) -> Image.Image | None:
    """An image mask (a one-bit stencil painted in the fill colour, as scanned forms and
    screenshots are stored: CCITT or JBIG2) as a one-bit PNG of its own pixels, index 0 letting
    the page show through and 1 painting; None for any other image, or a stencil placed turned
    or skewed.

    pdfium renders a stencil as a smoothed colour-and-alpha bitmap, whose encoding costs 30
    times the one-bit PNG's (the IRS manual's 114 stencils: 6.5 CPU s against 0.2 s). Its
    undecorated bitmap is the stencil's pixels after its /Decode (255 paints): only its
    placement is left to apply (tests/test_figures.py replays both against pdfium's rendering)."""
    metadata = image.get_metadata()
    if metadata.bits_per_pixel != 1 or metadata.colorspace != pdfium_c.FPDF_COLORSPACE_UNKNOWN:
        return None
    a, b, c, d, _, _ = image.get_matrix().get()
    r, g, blue, alpha = (ctypes.c_uint() for _ in range(4))
    if (
        b
        or c
        or not a
        or not d
        or not pdfium_c.FPDFPageObj_GetFillColor(image.raw, r, g, blue, alpha)
    ):
        return None
    paints = image.get_bitmap(render=False).to_numpy() == 255
    # The image's first row is drawn at the top of its unit square: a negative scale flips it.
    pixels = np.ascontiguousarray(paints[:: 1 if d > 0 else -1, :: 1 if a > 0 else -1])
    stencil = Image.frombytes("P", (pixels.shape[1], pixels.shape[0]), pixels.astype(np.uint8))
    stencil.putpalette([0, 0, 0, r.value, g.value, blue.value])
    stencil.info["transparency"] = bytes([0, alpha.value])
    return stencil


def _fewest_channels(bitmap: pdfium.PdfBitmap) -> Image.Image:
    """The bitmap's pixels in as few channels as hold them: an opaque image loses its alpha, a
    grey one its colour. Each channel dropped is bytes and encoding time saved, losslessly: an
    image drawn as a stencil (one colour, its shape all in the alpha) is common, and grey and
    alpha take half the time of RGBA (0.07 s instead of 0.14 s for a 1,700 x 1,100 one)."""
    if bitmap.n_channels == 1:
        return bitmap.to_pil()
    pixels = bitmap.to_numpy()  # a view of pdfium's buffer, in its own channel order
    colour = pixels[..., 2::-1] if bitmap.mode.startswith("BGR") else pixels[..., :3]
    kept = [colour[..., :1]] if _grey(colour) else [colour]
    if bitmap.mode.endswith("A") and pixels[..., 3].min() < 255:
        kept.append(pixels[..., 3:])
    channels = np.concatenate(kept, axis=2)
    return Image.fromarray(channels[..., 0] if channels.shape[2] == 1 else channels)


def _grey(colour: np.ndarray) -> bool:
    return bool(
        (colour[..., 0] == colour[..., 1]).all() and (colour[..., 1] == colour[..., 2]).all()
    )


def _size(bbox: list[float] | tuple[float, ...], rotation: int) -> tuple[float, float]:
    """The visible page's width and height as the layout sees them (its rotation applied)."""
    width, height = page_size(bbox)
    return (height, width) if rotation in (90, 270) else (width, height)


def _placed(
    objects: list[Placed],
    bbox: list[float],
    rotation: int,
    width: float,
    height: float,
    most: float = 1.0,
    tables: Sequence[TableBlock] = (),
) -> list[tuple[Bbox, Any]]:
    """Each object's box in layout coordinates, cut to the visible page. Left out: objects off
    it, or covering more than ``most`` of it, or centred in one of ``tables``."""
    if not objects:
        return []
    pdf = np.array([o[:4] for o in objects], dtype=np.float64)
    boxes = layout_boxes(pdf[:, 0], pdf[:, 1], pdf[:, 2], pdf[:, 3], bbox, rotation)
    boxes[:, 0::2] = np.clip(boxes[:, 0::2], 0, width)
    boxes[:, 1::2] = np.clip(boxes[:, 1::2], 0, height)
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = ((w > 0) | (h > 0)) & (w * h <= most * width * height)
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    for table in tables:
        x0, y0, x1, y1 = table["bbox"]
        keep &= ~((cx >= x0) & (cx <= x1) & (cy >= y0) & (cy <= y1))
    return [(boxes[i].tolist(), objects[i][4]) for i in np.flatnonzero(keep).tolist()]


def _is_scan(box: Bbox, lines: list[Line], page_area: float) -> bool:
    if _area(box) < _SCAN_AREA * page_area:
        return False
    total = over = 0
    for line in lines:
        count = len(line_text(line))
        total += count
        if centred_in(line["bbox"], box):
            over += count
    return total > 0 and 2 * over >= total


def _drawings(
    objects: PageObjects,
    lines: list[Line],
    tables: list[TableBlock],
    bbox: list[float],
    rotation: int,
    width: float,
    height: float,
) -> list[tuple[Bbox, str]]:
    """The boxes of the page's drawings, their labels included, top to bottom, each with a key
    digested from its paths' places in it."""
    if len(objects.paths) < _MIN_PATHS:
        return []
    placed = _placed(objects.paths, bbox, rotation, width, height, _BACKGROUND, tables)
    if len(placed) < _MIN_PATHS:
        return []
    paths = [(box, obj) for box, obj in placed if _painted(obj)]
    if len(paths) < _MIN_PATHS:
        return []
    shapes = _Shapes(paths)
    # A page of rules and frames only (most tables and forms) has nothing to cluster.
    if not shapes.enough(range(len(paths)), _MIN_DRAWN, lambda _: True):
        return []
    usual = float(np.median([line_size(line) for line in lines])) if lines else 0.0
    # Labels are told on whole rows: a formula's pieces (cut at each sub- or superscript) are
    # each short.
    rows = merge_rows(lines)
    found: list[tuple[Bbox, str]] = []
    for cluster in _clusters([box for box, _ in paths], width, height):
        if len(cluster) < _MIN_PATHS:
            continue
        box = union([paths[i][0] for i in cluster])
        if box[2] - box[0] < _MIN_SIDE or box[3] - box[1] < _MIN_SIDE:
            continue
        inside = [row for row in rows if centred_in(row["bbox"], box)]
        if not all(_is_label(line, usual) for line in inside):
            continue
        labels = [line for line in inside if not _is_caption(line)]
        if not _draws(shapes, cluster, box, labels):
            continue
        shape = sorted(
            tuple(round(v - box[k % 2]) for k, v in enumerate(paths[i][0])) for i in cluster
        )
        found.append((_with_labels(box, rows, usual), _digest(repr(shape).encode())))
    return _merged(found, width, height)


class _Shapes:
    """What each path draws, asked of pdfium once and only as needed: a curve or a slanted
    line, a filled area, or neither (a rule, a frame)."""

    def __init__(self, paths: list[tuple[Bbox, Any]]) -> None:
        self.paths = paths
        self.known: dict[int, str] = {}

    def __getitem__(self, i: int) -> str:
        found = self.known.get(i)
        if found is None:
            box, obj = self.paths[i]
            if min(box[2] - box[0], box[3] - box[1]) < _THIN:
                found = ""  # a rule: level or upright, never an area
            elif curved(obj):
                found = "curve"
            else:
                found = "area" if _filled_area(obj) else ""
            self.known[i] = found
        return found

    def enough(self, indexes: Sequence[int], need: int, bare: Callable[[int], bool] | None) -> bool:
        """Whether ``need`` curves are among ``indexes``, or, where ``bare`` tells which paths
        have no text on them, ``_MIN_BARS`` bare areas."""
        curves = bars = 0
        for seen, i in enumerate(indexes, 1):
            shape = self[i]
            if shape == "curve":
                curves += 1
                if curves >= need:
                    return True
            elif bare is not None and shape == "area" and bare(i):
                bars += 1
                if bars >= _MIN_BARS:
                    return True
            elif bare is None and curves + len(indexes) - seen < need:
                return False  # too few paths left to draw enough
        return False


def _draws(shapes: _Shapes, cluster: list[int], box: Bbox, labels: list[Line]) -> bool:
    """Whether a cluster of paths draws a picture, not a grid of cells with text in them (a
    table, a form).

    A picture leaves most of its box free of text: its labels cover at most ``_MAX_COVER`` of
    it. With more than ``_LOW_COVER`` it draws curves or slanted lines (arrows, plots), a fifth
    of its paths; with less, two such, or three filled areas that no text lies on (bars; a
    table's shading holds its cells' text, and one whose empty cells are shaded leaves less of
    its box free).
    """
    cover = sum(_area(line["bbox"]) for line in labels) / max(_area(box), 1.0)
    if cover > _MAX_COVER:
        return False
    if cover > _LOW_COVER:
        return shapes.enough(cluster, max(_MIN_DRAWN, math.ceil(_DRAWN_SHARE * len(cluster))), None)

    def bare(i: int) -> bool:
        area = shapes.paths[i][0]
        return not any(centred_in(line["bbox"], area) for line in labels)

    return shapes.enough(cluster, _MIN_DRAWN, bare)


def _painted(obj: Any) -> bool:
    """Whether a path leaves a mark: stroked, or filled in a colour other than white (a white
    box behind a chart draws nothing on a white page)."""
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    if not pdfium_c.FPDFPath_GetDrawMode(obj, fill, stroke):
        return False
    if stroke.value:
        return True
    return bool(fill.value) and not _white(obj)


def _white(obj: Any) -> bool:
    r, g, b, a = (ctypes.c_uint() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetFillColor(obj, r, g, b, a):
        return False
    return min(r.value, g.value, b.value) >= _WHITE or a.value == 0


def _clusters(boxes: list[Bbox], width: float, height: float) -> list[list[int]]:
    """Indexes of the boxes that touch, or nearly (a grid of ``_CELL`` points: boxes sharing
    a cell, or grown into one, are one cluster)."""
    nx, ny = int(width / _CELL) + 2, int(height / _CELL) + 2
    owner = np.full((ny, nx), -1, dtype=np.int64)
    parent = list(range(len(boxes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (x0, y0, x1, y1) in enumerate(boxes):
        cells = owner[
            max(0, int((y0 - _CELL) / _CELL)) : int((y1 + _CELL) / _CELL) + 1,
            max(0, int((x0 - _CELL) / _CELL)) : int((x1 + _CELL) / _CELL) + 1,
        ]
        for j in np.unique(cells[cells >= 0]).tolist():
            parent[find(j)] = find(i)
        cells[...] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(boxes)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def _filled_area(obj: Any) -> bool:
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDFPath_GetDrawMode(obj, fill, stroke)
    return bool(fill.value) and not _white(obj)


def _is_caption(line: Line) -> bool:
    return bool(CAPTION.match(line_text(line)))


def _is_label(line: Line, usual: float) -> bool:
    return _is_caption(line) or (
        len(line_text(line)) <= _LABEL_CHARS and line_size(line) <= _LABEL_SIZE * usual
    )


def _with_labels(box: Bbox, lines: list[Line], usual: float) -> Bbox:
    """The drawing's box grown by the labels along its edges (an axis's ticks, then its title;
    a legend): short lines, no larger than the page's usual size, near it, in two steps at
    most. Not a label: a caption, nor a line of the page's text (a long one, one that starts
    where text far from the drawing starts, the text's margin) or one next to such a line,
    above, below or on its row."""
    labels = [line for line in lines if _is_label(line, usual) and not _is_caption(line)]
    # The labels inside, whole: a label may reach past the drawing's paths.
    box = union([box, *(ln["bbox"] for ln in labels if centred_in(ln["bbox"], box))])
    far = [
        line["bbox"][0]
        for line in lines
        if not _near(line["bbox"], box, _FAR * (line["bbox"][3] - line["bbox"][1]))
    ]

    def at_margin(line: Line) -> bool:
        return sum(1 for x in far if abs(x - line["bbox"][0]) <= 1.0) >= 2

    text = [line for line in lines if not _is_label(line, usual) or at_margin(line)]
    candidates = [
        line
        for line in labels
        if not centred_in(line["bbox"], box)
        and not at_margin(line)
        and not any(_adjoins(line, other) for other in text)
    ]
    for _ in range(_LABEL_STEPS):
        grown = box
        for line in candidates:
            edge = line["bbox"]
            if not _near(edge, box, _LABEL_REACH * (edge[3] - edge[1])):
                continue
            bigger = union([grown, edge])
            if not any(centred_in(other["bbox"], bigger) for other in text):
                grown = bigger
        if grown == box:
            break
        box = grown
    return box


def _near(a: Bbox, b: Bbox, reach: float) -> bool:
    return (
        a[0] <= b[2] + reach
        and b[0] <= a[2] + reach
        and a[1] <= b[3] + reach
        and b[1] <= a[3] + reach
    )


def _adjoins(line: Line, other: Line) -> bool:
    """Whether ``other`` sits right above or below ``line`` (lines of a paragraph, the tall
    boxes of a formula's overlapping), or beside it on its row."""
    a, b = line["bbox"], other["bbox"]
    height = a[3] - a[1]
    if a[0] < b[2] and b[0] < a[2]:
        return -0.5 * height <= b[1] - a[3] <= 0.6 * height or (
            -0.5 * height <= a[1] - b[3] <= 0.6 * height
        )
    level = min(a[3], b[3]) - max(a[1], b[1]) >= 0.5 * min(height, b[3] - b[1])
    return level and min(abs(b[0] - a[2]), abs(a[0] - b[2])) <= 2 * height


def _merged(
    drawings: list[tuple[Bbox, str]], width: float, height: float
) -> list[tuple[Bbox, str]]:
    """The drawings with a margin, cut to the page, those that overlap made one (their keys
    digested together), top to bottom."""
    out: list[tuple[Bbox, str]] = []
    for box, key in drawings:
        box = [
            max(0.0, box[0] - _MARGIN),
            max(0.0, box[1] - _MARGIN),
            min(width, box[2] + _MARGIN),
            min(height, box[3] + _MARGIN),
        ]
        for other in [o for o in out if _overlap(o[0], box)]:
            out.remove(other)
            box = union([box, other[0]])
            key = _digest("".join(sorted((key, other[1]))).encode())
        out.append((box, key))
    return sorted(out, key=lambda d: (d[0][1], d[0][0]))


def _overlap(a: Bbox, b: Bbox) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _area(box: Bbox) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def place_pictures(blocks: list[Block], pictures: Sequence[ImageBlock]) -> list[Block]:
    """Each picture goes before the first block that starts below it and shares its columns
    (tables take their place in the reading order in
    :func:`pagefleet.layout.segment.page_blocks`)."""
    out: list[Block] = list(blocks)
    for picture in sorted(pictures, key=lambda p: p["bbox"][1]):
        top, x0, x1 = picture["bbox"][1], picture["bbox"][0], picture["bbox"][2]
        at = next(
            (
                i
                for i, b in enumerate(out)
                if "lines" in b and b["bbox"][1] >= top and b["bbox"][0] < x1 and b["bbox"][2] > x0
            ),
            len(out),
        )
        out.insert(at, picture)
    return out
