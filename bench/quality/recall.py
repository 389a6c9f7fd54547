"""How much of one word sequence another holds: in-order recall (an exact LCS), order-free
recall and precision (multisets), with words cut where pdfium cuts them first (:func:`recut`)."""

from __future__ import annotations

from collections import Counter


def ordered_recall(reference: list[str], found: list[str]) -> float | None:
    """Share of ``reference`` matched in order in ``found``; None for an empty reference."""
    if not reference:
        return None
    return lcs_length(reference, found) / len(reference)


def bag_recall(reference: list[str], found: list[str]) -> float | None:
    """Share of ``reference`` found in ``found`` as a multiset (order ignored).

    A word the two sides cut at a different place still counts (see :func:`_rejoined`).
    """
    if not reference:
        return None
    ref, got = Counter(reference), Counter(found)
    common = ref & got
    return (sum(common.values()) + _rejoined(reference, found, ref - common, got - common)) / len(
        reference
    )


# At most this many adjacent words of one side make one word of the other.
_MAX_PIECES = 3


def _rejoined(
    reference: list[str], found: list[str], missing: Counter[str], extra: Counter[str]
) -> int:
    """Words of ``reference`` left unmatched only because a word boundary differs.

    pdfium cuts a line where a sub- or superscript leaves the baseline, and sometimes glues a
    subscript to the next word: ``S``, a line break, ``r`` and ``QSLret`` for the S-sub-r and
    the QSL-sub-r ``et`` a reader sees, while the same page elsewhere gives ``QSLr``. No output
    can cut these alike, so adjacent unmatched words of one side whose letters, joined, make an
    unmatched word of the other side are matched: ``s r`` against ``sr`` counts two reference
    words, ``qslret`` against ``qslr et`` one. Only words left over by the plain multiset
    comparison take part, each once, so nothing matched there is counted twice.
    """
    missing, extra = Counter(missing), Counter(extra)
    matched = 0
    # Reference words split where the output has one word, then one reference word the
    # output splits; longest runs first.
    for seq, pieces, whole, ref_side in (
        (reference, missing, extra, True),
        (found, extra, missing, False),
    ):
        for n in range(_MAX_PIECES, 1, -1):
            for i in range(len(seq) - n + 1):
                if pieces[seq[i]] <= 0:
                    continue
                run = seq[i : i + n]
                need = Counter(run)
                if any(pieces[w] < k for w, k in need.items()):
                    continue
                joined = "".join(run)
                if whole[joined] <= 0:
                    continue
                pieces.subtract(need)
                whole[joined] -= 1
                matched += n if ref_side else 1
    return matched


def precision(reference: list[str], found: list[str]) -> float | None:
    """Share of ``found`` that are words of ``reference`` (multiset); None when empty."""
    return bag_recall(found, reference)


def lcs_length(a: list[str], b: list[str]) -> int:
    """Exact length of the longest common subsequence, bit-parallel (Allison-Dix, Hyyro).

    One bit per word of ``a`` in a Python integer, so each word of ``b`` costs a few
    big-integer operations: about a second for 65k x 50k words. difflib's matcher is not an
    LCS and misaligns repetitive text (running heads, repeated phrases).
    """
    masks: dict[str, int] = {}
    for i, word in enumerate(a):
        masks[word] = masks.get(word, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for word in b:
        u = v & masks.get(word, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def recut(reference: list[str], found: list[str]) -> list[str]:
    """``found`` with its words cut where ``reference`` cuts them (see :func:`_rejoined`).

    Where adjacent unmatched reference words join into an unmatched found word (``r n`` for
    ``rn``, R to the n-th: pdfium puts a superscript on a line of its own) that found word is
    cut into them; where adjacent unmatched found words join into an unmatched reference word
    (``qslr et`` for pdfium's ``qslret``) they become that word. In-order recall then compares
    both sides cut alike, as order-free recall does.
    """
    ref, got = Counter(reference), Counter(found)
    common = ref & got
    missing, extra = ref - common, got - common
    pieces_of: dict[str, list[list[str]]] = {}
    for n in range(_MAX_PIECES, 1, -1):
        for i in range(len(reference) - n + 1):
            run = reference[i : i + n]
            if missing[run[0]] <= 0 or any(missing[w] < k for w, k in Counter(run).items()):
                continue
            joined = "".join(run)
            if extra[joined] > 0:
                missing.subtract(run)
                extra[joined] -= 1
                pieces_of.setdefault(joined, []).append(run)
    joins: dict[int, int] = {}  # start in found -> words joined there
    taken: set[int] = set()
    for n in range(_MAX_PIECES, 1, -1):
        for i in range(len(found) - n + 1):
            run = found[i : i + n]
            if extra[run[0]] <= 0 or any(extra[w] < k for w, k in Counter(run).items()):
                continue
            if taken.intersection(range(i, i + n)):
                continue
            joined = "".join(run)
            if missing[joined] > 0:
                extra.subtract(run)
                missing[joined] -= 1
                joins[i] = n
                taken.update(range(i, i + n))
    out: list[str] = []
    i = 0
    while i < len(found):
        if i in joins:
            out.append("".join(found[i : i + joins[i]]))
            i += joins[i]
            continue
        cuts = pieces_of.get(found[i])
        out.extend(cuts.pop() if cuts else [found[i]])
        i += 1
    return out
