"""A scan's hidden OCR layer that reads worse than our own OCR would.

A scan that went through an OCR program keeps the page image and lays the recognised text
over it, drawn invisible (render mode 3). Where that program did well, its text is as good as
ours and costs nothing; where it did badly (an old digitised book, a handwriting recogniser),
its words are no words, and its fonts and sizes, which it guessed, make headings of noise.

One rule, two users: the text-layer converter OCRs such a page instead of trusting its layer
(``runner/converters/text_layer/hidden_ocr.py``), and the splitter prices it as the OCR page it
will be (:mod:`pagefleet.costs`). The test is cheap and looks at the page alone (rule 5): an
image covering most of the page, text all drawn invisible, and words most of which no script
writes.
"""

from __future__ import annotations

import re
from typing import Any

import pypdfium2.raw as pdfium_c

# An image this share of the page's area is the page itself: a scan.
PAGE_IMAGE = 0.5
# Below this share of plausible words the layer is worse than our OCR. The hidden layers of
# the corpora are good: pypdf's Vicksburg scan (prose) scores 0.997-1.0 a page, grobid's ZFN
# article 0.70 and 0.82, its formulas read as junk (as ours would read them too).
_PLAUSIBLE = 0.6
# Fewer words than this say too little either way.
_MIN_WORDS = 20
# Stripped from a word's ends: quotes, brackets, stops, and a hyphen at a line's end.
_EDGE_PUNCTUATION = "\"'([{<«‹“‘„)]}>»›”’.,;:!?*†‡-"
# Dashes join words without spaces ("sounded—every").
_DASHES = re.compile(r"[—–]")
# A word of one script's letters, with an apostrophe or a hyphen between letters; a number.
_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")
_NUMBER = re.compile(r"[-+±$€£]?\d[\d.,/:%-]*(?:st|nd|rd|th|ST|ND|RD|TH)?")
_CASES = re.compile(r"[^\W\d_][^\W\d_A-Z]*|[^\W\d_a-z]+")
_VOWELS = frozenset("aeiouyàáâãäåæèéêëìíîïòóôõöøœùúûüýÿ")
# Latin words this long without a vowel are not words (a vowelless run is how recognisers
# misread ornaments, rules and smudges: "Hrtmn", "lllll").
_VOWELLESS_AT = 4


def mostly_not_words(text: str) -> bool:
    """Whether ``text`` has enough words to judge and most of them are no script's words."""
    counted = plausible = 0
    for word in _DASHES.sub(" ", text).split():
        core = word.strip(_EDGE_PUNCTUATION)
        if not any(c.isalnum() for c in core):
            continue  # a sign of a formula, a bullet: neither word nor junk
        counted += 1
        plausible += _plausible(core)
    return counted >= _MIN_WORDS and plausible < _PLAUSIBLE * counted


def _plausible(core: str) -> bool:
    if _NUMBER.fullmatch(core):
        return True
    if not _WORD.fullmatch(core):
        return False  # letters mixed with digits or symbols: "T1ie", "^(O", "f0x"
    if not all(_CASES.fullmatch(part) for part in re.split(r"['’\-]", core)):
        return False  # "tHe", "qUick": no script capitalises inside a word
    lower = core.lower()
    return len(lower) < _VOWELLESS_AT or not lower.isascii() or bool(_VOWELS & set(lower))


def all_invisible(page: Any) -> bool:
    """Whether the page (pdfium's FPDF_PAGE) draws text and all of it in render mode 3 (form
    objects aside: an OCR program writes its layer on the page itself)."""
    seen = False
    for i in range(pdfium_c.FPDFPage_CountObjects(page)):
        obj = pdfium_c.FPDFPage_GetObject(page, i)
        if pdfium_c.FPDFPageObj_GetType(obj) != pdfium_c.FPDF_PAGEOBJ_TEXT:
            continue
        if pdfium_c.FPDFTextObj_GetTextRenderMode(obj) != pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE:
            return False
        seen = True
    return seen
