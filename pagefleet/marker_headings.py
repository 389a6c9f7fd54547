"""marker's section-header levels, ranked over a whole document without marker or numpy.

marker 2.0.0 ranks the line heights of every section header of the document
(marker/processors/sectionheader.py:42-82): four clusters by scikit-learn's ``KMeans(n_clusters=4,
random_state=0, n_init="auto")`` (sectionheader.py:88-91), turned into height ranges
(sectionheader.py:92-124), the tallest range level 1. The completion Lambda has neither numpy
nor scikit-learn, so this module reproduces them step for step: numpy's legacy ``RandomState(0)``
(Mersenne Twister, whose doubles are CPython's ``random.random()``), scikit-learn 1.9.1's
k-means++ seeding (sklearn/cluster/_kmeans.py:225-278) and Lloyd iterations
(_kmeans.py:686-755, _k_means_lloyd.pyx), on one feature. tests/test_marker_chunking.py checks
the result against scikit-learn's on random heights.

Where scikit-learn's own result hangs on floating-point ties (a height exactly between two
centres), or on which of several equally far points numpy's partition picks to refill an empty
cluster, its choice is numpy's selection algorithm's (SIMD on some CPUs); this module takes the
choice numpy 2.4.6 makes on small arrays (the last of equal points first).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

# marker/processors/sectionheader.py:25-40: SectionHeaderProcessor's defaults.
LEVEL_COUNT = 4
MERGE_THRESHOLD = 0.25
DEFAULT_LEVEL = 2
HEIGHT_TOLERANCE = 0.99
# scikit-learn's KMeans defaults: max_iter, tol (sklearn/cluster/_kmeans.py, KMeans.__init__).
MAX_ITER = 300
TOL = 1e-4


def heading_levels(heights: Sequence[float]) -> list[int]:
    """The level marker gives each section header of a document, from every header's line height
    in document order (0 for a header without lines), as SectionHeaderProcessor.__call__ does
    (sectionheader.py:64-82)."""
    ranges = bucket_headings(heights)
    levels = []
    for height in heights:
        level = None
        if height > 0:
            for index, (low, _high) in enumerate(ranges):
                if height >= low * HEIGHT_TOLERANCE:
                    level = index + 1
                    break
        levels.append(level or DEFAULT_LEVEL)
    return levels


def bucket_headings(heights: Sequence[float]) -> list[tuple[float, float]]:
    """SectionHeaderProcessor.bucket_headings (sectionheader.py:84-124), tallest range first."""
    if len(heights) <= LEVEL_COUNT:
        return []
    labels = kmeans_labels([float(h) for h in heights], LEVEL_COUNT)
    # marker sorts the [height, label] rows with np.sort(axis=0), which sorts each column on
    # its own (sectionheader.py:92-93): the i-th smallest height goes with the i-th smallest
    # label, and the clusters' means are taken over those rows.
    rows = list(zip(sorted(heights), sorted(labels), strict=True))
    means = {
        label: _numpy_sum([h for h, lab in rows if lab == label])
        / sum(1 for _, lab in rows if lab == label)
        for label in set(labels)
    }
    ranges: list[tuple[float, float]] = []
    low = high = None
    previous = None
    for value, label in rows:
        # A new cluster starts a new range unless its mean is past four times the last's.
        if (
            previous is not None
            and label != previous
            and means[label] * MERGE_THRESHOLD < means[previous]
        ):
            ranges.append((low, high))  # type: ignore[arg-type]
            low = high = None
        low = value if low is None else min(low, value)
        high = value if high is None else max(high, value)
        previous = label
    if low is not None:
        ranges.append((low, high))  # type: ignore[arg-type]
    return sorted(ranges, reverse=True)


def kmeans_labels(values: Sequence[float], clusters: int) -> list[int]:
    """``KMeans(n_clusters=clusters, random_state=0, n_init="auto").fit_predict`` on one
    feature (sklearn/cluster/_kmeans.py:1432-1560): centred data, k-means++ seeding, Lloyd."""
    mean = _numpy_sum(values) / len(values)
    # The tolerance is taken on the data as given, before it is centred (KMeans.fit).
    tol = _numpy_sum([(v - mean) * (v - mean) for v in values]) / len(values) * TOL
    x = [v - mean for v in values]
    rng = _legacy_random_state(0)
    centers = _kmeans_plusplus(x, clusters, rng)
    labels = [-1] * len(x)
    strict = False
    for _ in range(MAX_ITER):
        previous = labels
        labels, new_centers = _lloyd_step(x, centers)
        shift = _numpy_sum(
            [math.sqrt((a - b) * (a - b)) ** 2 for a, b in zip(new_centers, centers, strict=True)]
        )
        centers = new_centers
        if labels == previous:
            strict = True
            break
        if shift <= tol:
            break
    if not strict:
        labels = _assign(x, centers)
    return labels


def _legacy_random_state(seed: int) -> random.Random:
    """numpy's ``RandomState(seed)``: init_genrand (numpy/random/src/mt19937/mt19937.c,
    mt19937_seed), whose 53-bit doubles are CPython's ``random()`` from the same state."""
    key = [seed & 0xFFFFFFFF]
    for position in range(1, 624):
        previous = key[-1]
        key.append((1812433253 * (previous ^ (previous >> 30)) + position) & 0xFFFFFFFF)
    rng = random.Random()
    rng.setstate((3, (*key, 624), None))
    return rng


def _squared_distances(center: float, x: Sequence[float]) -> list[float]:
    """sklearn's _euclidean_distances(squared=True): -2 c.x + |c|^2 + |x|^2, clipped at 0."""
    return [max(-2 * (center * v) + center * center + v * v, 0.0) for v in x]


def _kmeans_plusplus(x: Sequence[float], clusters: int, rng: random.Random) -> list[float]:
    """sklearn/cluster/_kmeans.py:_kmeans_plusplus with unit sample weights."""
    n = len(x)
    trials = 2 + int(math.log(clusters))
    # RandomState.choice(n, p=1/n each): the cumulated p, scaled to end at 1, searched right.
    cdf = _cumsum([1.0 / n] * n)
    cdf = [c / cdf[-1] for c in cdf]
    first = bisect_right(cdf, rng.random())
    centers = [x[first]]
    closest = _squared_distances(x[first], x)
    potential = _blas_dot(closest)
    for _ in range(1, clusters):
        targets = [rng.random() * potential for _ in range(trials)]
        cumulated = _cumsum(closest)
        candidates = [min(bisect_left(cumulated, t), n - 1) for t in targets]
        best_potential = best_closest = best = None
        for candidate in candidates:
            distances = [
                min(a, b) for a, b in zip(closest, _squared_distances(x[candidate], x), strict=True)
            ]
            candidate_potential = _blas_dot(distances)
            if best_potential is None or candidate_potential < best_potential:
                best_potential, best_closest, best = candidate_potential, distances, candidate
        assert best is not None and best_closest is not None and best_potential is not None
        potential, closest = best_potential, best_closest
        centers.append(x[best])
    return centers


def _assign(x: Sequence[float], centers: Sequence[float]) -> list[int]:
    """Each point's nearest centre, the first on a tie (_k_means_lloyd.pyx, _update_chunk_dense:
    |c|^2 - 2 x.c, compared with <)."""
    labels = []
    for v in x:
        best, best_distance = 0, math.inf
        for index, c in enumerate(centers):
            distance = c * c + -2.0 * (v * c)
            if distance < best_distance:
                best, best_distance = index, distance
        labels.append(best)
    return labels


def _lloyd_step(x: Sequence[float], centers: Sequence[float]) -> tuple[list[int], list[float]]:
    """One Lloyd iteration (sklearn/cluster/_k_means_lloyd.pyx, lloyd_iter_chunked_dense):
    assign, refill empty clusters with the points farthest from their centres, average
    (sklearn/cluster/_k_means_common.pyx: _relocate_empty_clusters_dense, _average_centers)."""
    labels = _assign(x, centers)
    sums = [0.0] * len(centers)
    weights = [0.0] * len(centers)
    for v, label in zip(x, labels, strict=True):
        sums[label] += v
        weights[label] += 1.0
    empty = [index for index, w in enumerate(weights) if w == 0]
    distances = [(v - centers[label]) ** 2 for v, label in zip(x, labels, strict=True)]
    # No refill where every point sits on its centre (more clusters than distinct points).
    if empty and max(distances) > 0:
        # np.argpartition(distances, -n)[:-n-1:-1]: among equal distances numpy 2.4 returns
        # the last points first (on arrays of up to 129; its SIMD select decides past that).
        farthest = sorted(range(len(x)), key=lambda i: (-distances[i], -i))[: len(empty)]
        for cluster, point in zip(empty, farthest, strict=True):
            old = labels[point]
            sums[old] -= x[point]
            sums[cluster] = x[point]
            weights[cluster] = 1.0
            weights[old] -= 1.0  # the point's label stays: only the next step moves it
    # _average_centers: a mean by the reciprocal; a cluster still empty sits on the biggest.
    biggest = weights.index(max(weights))
    new_centers = [s * (1.0 / w) if w > 0 else 0.0 for s, w in zip(sums, weights, strict=True)]
    new_centers = [
        c if w > 0 else new_centers[biggest] for c, w in zip(new_centers, weights, strict=True)
    ]
    return labels, new_centers


def _blas_dot(values: Sequence[float]) -> float:
    """A sum of squared distances as scikit-learn takes it, a matrix product with unit weights
    (_kmeans.py:243, 263): OpenBLAS's kernel on an x86-64 CPU with AVX-512 keeps four partial
    sums, element i in sum i % 4, and adds them pairwise. Summed otherwise, two candidate
    centres at exactly the same potential (heights symmetric about a centre) can swap."""
    lanes = [0.0, 0.0, 0.0, 0.0]
    for index, value in enumerate(values):
        lanes[index % 4] += value
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


def _cumsum(values: Sequence[float]) -> list[float]:
    total, out = 0.0, []
    for v in values:
        total += v
        out.append(total)
    return out


def _numpy_sum(values: Sequence[float]) -> float:
    """numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum): the
    same rounding as ``np.sum`` and ``np.mean`` on a float64 array."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v
        return total
    if n <= 128:
        r = list(values[:8])
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += values[i + j]
            i += 8
        total = (r[0] + r[1]) + (r[2] + r[3]) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in values[i:]:
            total += v
        return total
    half = n // 2
    half -= half % 8
    return _numpy_sum(values[:half]) + _numpy_sum(values[half:])
