"""A deliberately naive transcription of the CORP reliability diagram and Brier decomposition.

The yardstick for :mod:`polars_cumdev.corp.decomposition` and :mod:`polars_cumdev.corp.isotonic`:
ties merged by looping over the distinct scores, pool-adjacent-violators
written out as a stack of blocks in plain Python, and the decomposition
taken straight from its definitions (mean scores of the original, the
recalibrated and the constant forecasts, over rows). Nothing here uses
SciPy, Polars or the library.
"""

from __future__ import annotations

import numpy as np

__all__ = ["band", "decomposition", "merge_ties", "pav"]


def merge_ties(s, r, w):
    """Distinct scores in increasing order, with summed weight and weighted-mean response."""
    s = np.asarray(s, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    scores, weights, responses = [], [], []
    for value in sorted(set(s.tolist())):
        rows = s == value
        total = float(np.sum(w[rows]))
        scores.append(value)
        weights.append(total)
        responses.append(float(np.sum(w[rows] * r[rows])) / total)
    return np.array(scores), np.array(weights), np.array(responses)


def pav(y, w):
    """Weighted pool-adjacent-violators: the nondecreasing least-squares fit of ``y``.

    Points are pushed one by one as blocks [sum of w * y, sum of w, size];
    while the last block's mean is below the one before it, the two are
    pooled.
    """
    blocks: list[list[float]] = []
    for value, weight in zip(y, w, strict=True):
        blocks.append([float(value) * float(weight), float(weight), 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            top = blocks.pop()
            blocks[-1][0] += top[0]
            blocks[-1][1] += top[1]
            blocks[-1][2] += top[2]
    fitted = []
    for total, weight, size in blocks:
        fitted.extend([total / weight] * int(size))
    return np.array(fitted)


def decomposition(s, r, w=None) -> dict[str, float]:
    """Brier score, MCB, DSC and UNC straight from their definitions, over rows."""
    s = np.asarray(s, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    w = np.ones_like(s) if w is None else np.asarray(w, dtype=np.float64)
    scores, weights, responses = merge_ties(s, r, w)
    fitted = pav(responses, weights)
    recalibrated = np.array([fitted[scores.tolist().index(value)] for value in s.tolist()])
    total = float(np.sum(w))
    base_rate = float(np.sum(w * r)) / total
    score = float(np.sum(w * (s - r) ** 2)) / total
    score_c = float(np.sum(w * (recalibrated - r) ** 2)) / total
    score_r = float(np.sum(w * (base_rate - r) ** 2)) / total
    return {
        "brier": score,
        "mcb": score - score_c,
        "dsc": score_r - score_c,
        "unc": score_r,
        "base_rate": base_rate,
        "scores": scores,
        "fitted": fitted,
    }


def band(groups, *, resamples: int, level: float, seed: int):
    """Consistency band of every group, resample by resample with explicit loops.

    ``groups`` is a list of (s, w) per group in the library's group order.
    Rows of a group with equal (score, weight) form a class, in increasing
    order of (score, weight), groups one after the other. One
    ``numpy.random.default_rng(seed)`` is drawn resample after resample: a
    uniform for every one-row class (a success when below the score), then
    Binomial(rows, score) for every class of several rows, each in class
    order (the stream the library documents).
    Returns, per group, the lower and upper quantiles at each distinct score.
    """
    layouts = []
    for s, w in groups:
        pairs = sorted(
            zip(np.asarray(s, float).tolist(), np.asarray(w, float).tolist(), strict=True)
        )
        classes: list[list[float]] = []
        for pair in pairs:
            if classes and classes[-1][0] == pair[0] and classes[-1][1] == pair[1]:
                classes[-1][2] += 1
            else:
                classes.append([pair[0], pair[1], 1])
        layouts.append(classes)
    flat = [c for classes in layouts for c in classes]
    x = np.array([c[0] for c in flat])
    counts = np.array([c[2] for c in flat], dtype=np.int64)
    one = [i for i, c in enumerate(flat) if c[2] == 1]
    many = [i for i, c in enumerate(flat) if c[2] > 1]
    rng = np.random.default_rng(seed)
    fits: list[list[np.ndarray]] = [[] for _ in groups]
    for _ in range(resamples):
        successes = np.zeros(len(flat), dtype=np.int64)
        uniforms = rng.random(len(one))
        for position, index in enumerate(one):
            successes[index] = 1 if uniforms[position] < x[index] else 0
        draws = rng.binomial(counts[many], x[many])
        for position, index in enumerate(many):
            successes[index] = draws[position]
        position = 0
        for index, classes in enumerate(layouts):
            sums: dict[float, list[float]] = {}
            for score, weight, count in classes:
                entry = sums.setdefault(score, [0.0, 0.0])
                entry[0] += weight * float(successes[position])
                entry[1] += weight * count
                position += 1
            ordered = sorted(sums)
            y = np.array([sums[v][0] / sums[v][1] for v in ordered])
            weights = np.array([sums[v][1] for v in ordered])
            fits[index].append(pav(y, weights))
    out = []
    for per_group in fits:
        matrix = np.array(per_group)
        low = np.quantile(matrix, (1.0 - level) / 2.0, axis=0)
        high = np.quantile(matrix, (1.0 + level) / 2.0, axis=0)
        out.append((low, high))
    return out
