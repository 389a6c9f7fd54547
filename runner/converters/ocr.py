"""OCR of one page on the CPU (or a GPU where onnxruntime has CUDA) with RapidOCR.

rapidocr-onnxruntime ships its PP-OCRv4 detection and recognition models inside the wheel, so
the engine loads with no network. The page is rendered to a bitmap whose size is capped, so
a page of absurd dimensions (the hostile corpus has one 2^31 pt tall) costs no more than a
normal one. The result is layout lines like those of the text layer, in page coordinates.
"""

from __future__ import annotations

import ctypes
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


@cache
def _engine(threads: int) -> Any:
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
    return RapidOCR(
        det_use_cuda=cuda,
        cls_use_cuda=cuda,
        rec_use_cuda=cuda,
        rec_batch_num=2 if cuda else 1,
        **pool,
    )


@cache
def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _trim() -> None:
    """Hand the heap the OCR models used back to the system (glibc keeps it otherwise, and a
    worker's resident memory creeps up page after page)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def _read(engine: Any, image: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """(corner points, text) of each text line RapidOCR reads in ``image``.

    RapidOCR's own pipeline, with detection run on a copy at most ``_DET_SIDE_PX`` on its
    longer side: the detector's memory grows with the pixels it sees (about 200 MB per
    megapixel, 600 MB for a letter page at 200 dpi), while finding lines needs far fewer
    pixels than reading them. Recognition reads the crops of the full-size image.
    """
    import cv2

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
    texts, _ = engine.text_rec(crops)
    return [
        (box, str(read[0]))
        for box, read in zip(boxes, texts, strict=True)
        if float(read[1]) >= engine.text_score
    ]


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
        found = _read(_engine(threads), image)
    finally:
        del image
        _trim()
    lines: list[Line] = []
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
    for box, text in boxes:
        height = box[3] - box[1]
        if abs(height - usual) <= _SAME_SIZE * usual:
            height = usual
        size = max(round(height * _BOX_TO_SIZE * 2) / 2, 1.0)
        lines.append({"bbox": [round(v, 1) for v in box], "spans": [{"t": text, "s": size}]})
    return lines
