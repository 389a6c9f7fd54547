"""OCR of one page on the CPU (or a GPU where onnxruntime has CUDA) with RapidOCR.

rapidocr-onnxruntime ships its PP-OCRv4 detection and recognition models inside the wheel, so
the engine loads with no network. The page is rendered to a bitmap whose size is capped, so
a page of absurd dimensions (the hostile corpus has one 2^31 pt tall) costs no more than a
normal one. The result is layout lines like those of the text layer, in page coordinates.

Its recogniser is one model for Chinese and English: its dictionary (6,623 characters, the
model's metadata) is mostly Han, and RapidOCR decodes a line by taking the likeliest character
of the whole dictionary at each step (``CTCLabelDecode.__call__`` in
``rapidocr_onnxruntime/ch_ppocr_rec/utils.py``, 1.4.4), so a page of Latin script can come out
with Han characters in it, and its word gaps, which the model scores low as spaces, are lost.
Here each line's per-step probabilities are kept and the page is decoded once its script is
known, from the page alone (rule 5): see :func:`_decode_page`.
"""

from __future__ import annotations

import ctypes
import math
import os
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from pagefleet.layout.schema import Line

if TYPE_CHECKING:
    import pypdfium2 as pdfium

# Scans are read best near 200 dpi; the longer side is capped to bound time and memory.
_SCALE = 200 / 72
_MAX_SIDE_PX = 2400
_MIN_SIDE_PX = 16
# Text lines are found on a copy of the page this size at most (see _read).
_DET_SIDE_PX = 1024
# An OCR line box is taller than the font size by the detector's padding.
_BOX_TO_SIZE = 0.75
_SAME_SIZE = 0.3
# Code points from the CJK radicals on: Han, kana, Hangul, CJK punctuation, full-width forms.
_CJK_FROM = 0x2E80
# A page whose letters are less than this share Han, kana or Hangul is a page of another
# script, and the CJK characters read on it are the dictionary's guesses, not the page's.
_CJK_PAGE_SHARE = 0.1
# On such a page, the steps between two characters (the second a letter or digit) are a word
# gap where the space scores this much at one of them, or the lower score over this many
# steps: on the working set's scans the model gives the gaps it sets no space in 0.03-0.48,
# over 2-6 steps, and the steps inside a word under 0.01 but for narrow ones ("Assemb|ly"
# of pdfminer's service bulletin: 0.05 over 2 steps).
_GAP_SPACE = 0.1
_WIDE_GAP_SPACE = 0.02
_WIDE_GAP_STEPS = 3
# How far (in line heights) above and below a line's edge the lines are looked at that cross
# it or leave it clear (see _gutter).
_GUTTER_ROWS = 4
# Ink and paper differ by this much at least (of 255) where a box's ink edges are looked for.
_INK_CONTRAST = 64
# A word whose letters are capitals but one or more lowercase "l" (read for "1" or "I":
# "AA-l" for "AA-1"), of at least this many capitals.
_CAPITALS = 2
_LOOKALIKES = ("1", "I")
# The heap a page's OCR leaves is kept for the next page while the process holds no more than
# this: handing it back after every page made the next one fault it all in again, 8-10% more
# CPU a scanned page (bench/results/2026-12-05-issue28-session19/). Past it (a dense page's
# 1.3-1.5 GB), it is handed back; the 4 GB conversion budget is far above either.
_KEEP_HEAP_MB = 1024
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


@cache
def _engine(threads: int) -> tuple[Any, _Dictionary]:
    import onnxruntime
    from rapidocr_onnxruntime import RapidOCR

    cuda = "CUDAExecutionProvider" in onnxruntime.get_available_providers()
    # onnxruntime's pool takes every core by default (-1): W workers would oversubscribe.
    pool = {"intra_op_num_threads": threads, "inter_op_num_threads": 1} if threads else {}
    # On the CPU lines are recognised one at a time: a batch is padded to its widest line, so
    # each line more in a batch costs the width it lacks (a scanned page: 6.0-7.0 CPU s one by
    # one, 8.4-8.7 two by two, 13 six by six), and the recogniser's memory grows with batch
    # times width (six wide lines took 170 MB more than two). A GPU keeps batches of two,
    # unmeasured there.
    engine = RapidOCR(
        det_use_cuda=cuda,
        cls_use_cuda=cuda,
        rec_use_cuda=cuda,
        rec_batch_num=2 if cuda else 1,
        **pool,
    )
    return engine, _Dictionary(engine.text_rec.postprocess_op.character)


class _Dictionary:
    """The recogniser's characters (RapidOCR's list: "blank" first, the space last), and which
    are CJK."""

    def __init__(self, characters: list[str]) -> None:
        self.characters = characters
        self.space = len(characters) - 1
        self.cjk = np.array([len(c) == 1 and ord(c) >= _CJK_FROM for c in characters])
        self.not_cjk = ~self.cjk
        self.alnum = [c.isalnum() and len(c) == 1 for c in characters]
        self.lowercase_l = characters.index("l")
        self.lookalikes = [characters.index(c) for c in _LOOKALIKES]


class _Steps:
    """Stands in for RapidOCR's CTC decoder (``TextRecognizer.postprocess_op``, called with a
    batch's probabilities, each step over the dictionary) and hands each line's probabilities
    back as its "text", so that the page decodes them itself (:func:`_decode_page`)."""

    def __call__(self, preds: np.ndarray, *args: Any, **kwargs: Any) -> list[tuple[Any, float]]:
        return [(steps, 1.0) for steps in preds]


@cache
def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _trim(keep_mb: int = _KEEP_HEAP_MB) -> None:
    """Hand the heap the OCR models used back to the system once the process holds more than
    ``keep_mb`` (glibc keeps it otherwise, and a dense page takes a process past 1.3 GB)."""
    libc = _libc()
    if libc is not None and _resident_mb() > keep_mb:
        libc.malloc_trim(0)


def _resident_mb() -> float:
    """This process's resident memory in MB, as /proc tells it; without /proc, infinite: the
    heap then goes back after every page."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_BYTES / 2**20
    except OSError:
        return math.inf


def _read(model: tuple[Any, _Dictionary], image: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """(corner points, text) of each text line RapidOCR reads in ``image``.

    RapidOCR's own pipeline, with detection run on a copy at most ``_DET_SIDE_PX`` on its
    longer side: the detector's memory grows with the pixels it sees (about 200 MB per
    megapixel, 600 MB for a letter page at 200 dpi), while finding lines needs far fewer
    pixels than reading them. Recognition reads the crops of the full-size image.
    """
    import cv2

    engine, dictionary = model
    height, width = image.shape[:2]
    scale = min(1.0, _DET_SIDE_PX / max(height, width))
    small = image
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    found, _ = engine.text_det(small)
    if found is None or len(found) == 0:
        return []
    boxes = [np.asarray(box, dtype=np.float32) / scale for box in engine.sorted_boxes(found)]
    crops = engine.get_crop_img_list(image, boxes)
    if engine.use_cls:
        crops, _, _ = engine.text_cls(crops)
    decoder = engine.text_rec.postprocess_op
    engine.text_rec.postprocess_op = _Steps()
    try:
        steps, _ = engine.text_rec(crops)
    finally:
        engine.text_rec.postprocess_op = decoder
    texts = _decode_page([read[0] for read in steps], dictionary)
    return [
        (box, text)
        for box, (text, score) in zip(boxes, texts, strict=True)
        if score >= engine.text_score
    ]


def _decode_page(lines: list[np.ndarray], dictionary: _Dictionary) -> list[tuple[str, float]]:
    """(text, score) of each line from its steps' probabilities, decoded as RapidOCR decodes
    them (the likeliest character at each step, repeats and blanks dropped, the score the mean
    probability of the characters kept), and then, where the page is not CJK, once more with
    no CJK characters, a space at each word gap and capitals for an "l" among capitals."""
    texts = [_decode(steps, dictionary, latin=False) for steps in lines]
    cjk = letters = 0
    for text, _ in texts:
        for char in text:
            if char.isalpha():
                letters += 1
                cjk += ord(char) >= _CJK_FROM
    if not letters or cjk >= _CJK_PAGE_SHARE * letters:
        return texts
    return [_decode(steps, dictionary, latin=True) for steps in lines]


def _decode(steps: np.ndarray, dictionary: _Dictionary, *, latin: bool) -> tuple[str, float]:
    if latin:
        steps = np.where(dictionary.not_cjk, steps, 0.0)
    best = steps.argmax(axis=1)
    kept = best != 0
    kept[1:] &= best[1:] != best[:-1]
    at = np.flatnonzero(kept)
    if not len(at):
        return "", 0.0
    score = float(steps[at, best[at]].mean())
    if not latin:
        return "".join(dictionary.characters[i] for i in best[at]), score
    # (character, step) of the line; -1: a space put in a word gap.
    chars: list[tuple[int, int]] = []
    for step in at.tolist():
        char = int(best[step])
        if chars and dictionary.alnum[char] and chars[-1][0] != dictionary.space:
            gap = steps[chars[-1][1] + 1 : step, dictionary.space]
            likely = gap.max() if len(gap) else 0.0
            if likely >= _GAP_SPACE or (likely >= _WIDE_GAP_SPACE and len(gap) >= _WIDE_GAP_STEPS):
                chars.append((dictionary.space, -1))
        chars.append((char, step))
    text = [dictionary.characters[char] for char, _ in chars]
    _capitals(text, chars, steps, dictionary)
    return "".join(text), score


def _capitals(
    text: list[str], chars: list[tuple[int, int]], steps: np.ndarray, d: _Dictionary
) -> None:
    """In a word of capitals, a lowercase "l" is the look-alike ("1" or "I") the model scores
    higher at its step: no word of Latin script sets one lowercase letter among capitals."""
    start = 0
    for end in [*(i for i, t in enumerate(text) if t == " "), len(text)]:
        word = range(start, end)
        start = end + 1
        ells = [i for i in word if chars[i][0] == d.lowercase_l]
        if not ells:
            continue
        others = [text[i] for i in word if text[i].isalpha() and chars[i][0] != d.lowercase_l]
        if len(others) < _CAPITALS or not all(c.isupper() for c in others):
            continue
        for i in ells:
            row = steps[chars[i][1]]
            text[i] = d.characters[max(d.lookalikes, key=lambda c: row[c])]


def _inked(
    image: np.ndarray, bbox: list[float], boxes: list[list[float]], scale: float
) -> list[float]:
    """``bbox`` (points) with its left and right edges moved in to the ink inside it.

    The detector pads its boxes (``DBPostProcess.unclip`` in ``ch_ppocr_det/utils.py``, 1.4.4,
    grows each by area * 1.6 / perimeter, ``unclip_ratio`` in ``config.yaml``), the more so for
    small type read on the reduced copy (see :func:`_read`): two columns' lines a narrow gutter
    apart come out with boxes a third of the gutter closer. The ink of the box's rows, darker
    than halfway from the darkest to the lightest pixel, gives the line's own edges, but for
    the ink of the next piece of its row (another of ``boxes`` reaching into it from one side);
    a box with no such contrast keeps its own.
    """
    x0, y0, x1, y1 = bbox
    lo, hi = x0, x1
    for bx0, by0, bx1, by1 in boxes:
        if min(y1, by1) - max(y0, by0) < 0.5 * min(y1 - y0, by1 - by0) or bx0 >= x1 or bx1 <= x0:
            continue
        if x0 < bx0 and x1 < bx1:  # a piece reaching in from the right
            hi = min(hi, bx0)
        elif bx0 < x0 and bx1 < x1:  # from the left
            lo = max(lo, bx1)
    left, right = max(int(lo * scale), 0), min(int(np.ceil(hi * scale)), image.shape[1])
    top, bottom = max(int(y0 * scale), 0), min(int(np.ceil(y1 * scale)), image.shape[0])
    if right - left < 2 or bottom <= top:
        return bbox
    crop = image[top:bottom, left:right].min(axis=2)
    dark, light = int(crop.min()), int(crop.max())
    if light - dark < _INK_CONTRAST:
        return bbox
    inked = np.flatnonzero((crop < (dark + light) / 2).any(axis=0))
    ink = (float(left + inked[0]) / scale, float(left + inked[-1] + 1) / scale)
    return [round(max(x0, ink[0]), 1), y0, round(min(x1, ink[1]), 1), y1]


def _gutter(inked: list[list[float]], box: list[float], x: float, side: int) -> bool:
    """Whether a gutter runs at ``x``, beside ``box`` on ``side`` (1: right, -1: left): most
    lines (their ink) within ``_GUTTER_ROWS`` line heights above and below leave ``x`` clear,
    and lines of another column stand across it, their edges within two line heights of it.
    There a box's edge is its ink's; elsewhere the detector's padding stays, as the layout
    joins a row's pieces by it (the detector cuts a justified line at a wide word space)."""
    height, centre = box[3] - box[1], (box[1] + box[3]) / 2
    near = [
        other
        for other in inked
        if abs((other[1] + other[3]) / 2 - centre) <= _GUTTER_ROWS * height
        and other[1:4:2] != box[1:4:2]
    ]
    across = sum(0 < (other[0] - x if side > 0 else x - other[2]) <= 2 * height for other in near)
    crossing = sum(other[0] < x < other[2] for other in near)
    return across >= 2 and 2 * crossing <= len(near)


def render_scale(width: float, height: float) -> float:
    """Points to pixels for a page of ``width`` x ``height`` points, bitmap size capped."""
    longest = max(width, height, 1.0)
    return min(_SCALE, _MAX_SIDE_PX / longest)


def ocr_lines(page: pdfium.PdfPage, width: float, height: float, threads: int = 0) -> list[Line]:
    """Text lines read from the page's rendering, top to bottom, coordinates in points;
    ``threads`` caps the CPU threads (0: all cores)."""
    scale = render_scale(width, height)
    if min(width, height) * scale < _MIN_SIDE_PX:
        return []
    bitmap = page.render(scale=scale, may_draw_forms=False)
    try:
        image = np.ascontiguousarray(bitmap.to_numpy()[:, :, :3])
    finally:
        bitmap.close()
    try:
        lines = _lines(_read(_engine(threads), image), scale)
        padded = [line["bbox"] for line in lines]
        inked = [_inked(image, box, padded, scale) for box in padded]
        for line, box, ink in zip(lines, padded, inked, strict=True):
            line["bbox"] = [
                ink[0] if _gutter(inked, box, (box[0] + ink[0]) / 2, -1) else box[0],
                box[1],
                ink[2] if _gutter(inked, box, (box[2] + ink[2]) / 2, 1) else box[2],
                box[3],
            ]
        return lines
    finally:
        del image
        _trim()


def _lines(found: list[tuple[np.ndarray, str]], scale: float) -> list[Line]:
    """The detected lines in points, sized, their boxes the detector's."""
    boxes = []
    for corners, text in found:
        text = " ".join(str(text).split())
        if not text:
            continue
        # Plain floats: the layout travels as JSON, and numpy's float32 is no JSON number.
        xs = [float(point[0]) / scale for point in corners]
        ys = [float(point[1]) / scale for point in corners]
        boxes.append(([min(xs), min(ys), max(xs), max(ys)], text))
    if not boxes:
        return []
    # Detector boxes vary in height from line to line of one font; sizes near the page's
    # usual one are snapped to it so they read as body text, not as headings.
    usual = float(np.median([box[3] - box[1] for box, _ in boxes]))
    lines: list[Line] = []
    for box, text in boxes:
        height = box[3] - box[1]
        if abs(height - usual) <= _SAME_SIZE * usual:
            height = usual
        size = max(round(height * _BOX_TO_SIZE * 2) / 2, 1.0)
        lines.append({"bbox": [round(v, 1) for v in box], "spans": [{"t": text, "s": size}]})
    return lines
