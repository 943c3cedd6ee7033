"""Max-statistic parametric bootstrap of the segments' z under perfect calibration.

For 0/1 responses, calibration means R ~ Bernoulli(S) independently given the
scores. Each resample redraws every row's response at once from its score,
then :func:`polars_cumdev.kernel.segments.segment_ranges` walks the rows
(already sorted, coded by segment) once for all segments and a block of
:data:`BLOCK` resamples; sigma depends on the
scores and weights only, so it is reused. The largest z* over the family in
each resample gives the single-step adjusted p-value of every segment,
p_g = (1 + #{b : max z*_b >= z_g}) / (B + 1), which controls the family-wise
error at any level (Westfall and Young's single-step max-T, with a parametric
null) and, unlike the asymptotic tail, is exact for the tie-merged statistic
of segments with few distinct scores, up to Monte Carlo error.

The step-down version (``method="stepdown"``; Westfall and Young's step-down
max-T) compares the segment of rank i (by z, largest first) with the largest
z* over the segments ranked i and below only, then makes the p-values
monotone: never larger than the single-step ones. The redraws are under the
complete null (every row calibrated); the step-down's strong control of the
family-wise error then rests on subset pivotality, as for any step-down
max-T. The test suite checks its level under the complete null.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from polars_cumdev.multicalibration.family import Coded, layout

__all__ = ["BLOCK", "adjusted", "critical", "maxima", "stepdown", "stepdown_counts"]

#: Resamples walked together (their sums side by side: one walk of the rows per block).
BLOCK = 16


def maxima(
    coded: Sequence[Coded],
    subsets: Sequence[tuple[int, ...]],
    numbers: Sequence[np.ndarray],
    roots: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    weighted: bool,
    scale: float,
    resamples: int,
    seed: int,
    response: np.ndarray | None = None,
    observed: np.ndarray | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The largest z* over the tested segments in each of ``resamples`` resamples.

    ``numbers[k]`` are the tested segment numbers of subset k, in the order of
    ``roots`` (sqrt of the unnormalized sigma^2 sum, W_g sigma_g, per tested
    segment). With ``response`` given, one pass on those responses instead
    (returns every tested segment's z: used to check the walk). With
    ``observed`` (the tested segments' z), also the step-down counts of
    :func:`stepdown_counts`, accumulated block by block: returns
    ``(maxima, counts)``.
    """
    from polars_cumdev.kernel.segments import segment_ranges

    codes, features, radices, bases, total = layout(coded, subsets)
    where = np.concatenate(
        [bases[k] + np.asarray(n, dtype=np.int64) for k, n in enumerate(numbers)]
        or [np.zeros(0, dtype=np.int64)]
    )
    s = np.ascontiguousarray(s, dtype=np.float64)

    def zs(bits: np.ndarray) -> np.ndarray:
        out = segment_ranges(codes, features, radices, bases, s, bits, w, weighted, scale, total)
        return out[where] / roots[:, None]

    if response is not None:
        return zs(np.ascontiguousarray(response, dtype=np.float64)[:, None])[:, 0]
    rng = np.random.default_rng(seed)
    found = np.empty(resamples)
    counts = None if observed is None else np.zeros(observed.shape[0], dtype=np.int64)
    bits = np.empty((s.shape[0], min(BLOCK, resamples)), dtype=np.uint8)
    for start in range(0, resamples, BLOCK):
        block = min(BLOCK, resamples - start)
        for b in range(block):  # the same draws, in the same order, whatever the block
            np.less(rng.random(s.shape[0]), s, out=bits[:, b].view(np.bool_))
        z = zs(bits[:, :block] if block == bits.shape[1] else np.ascontiguousarray(bits[:, :block]))
        found[start : start + block] = np.max(z, axis=0, initial=0.0)
        if counts is not None:
            counts += stepdown_counts(observed, z)
    return found if counts is None else (found, counts)


def stepdown_counts(z: np.ndarray, resampled: np.ndarray) -> np.ndarray:
    """Per segment g: #{b : max over {k : z_k <= z_g} of z*_bk >= z_g}.

    ``resampled`` is segments x resamples (z*). The set {k : z_k <= z_g}
    holds every segment not more significant than g (ties included), the
    segments still in play at g's step of Westfall and Young's step-down
    max-T procedure.
    """
    if z.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(-z, kind="stable")
    ranked = z[order]
    # successive maxima from the least significant up: row i = max over ranks >= i
    tails = np.maximum.accumulate(resampled[order][::-1], axis=0)[::-1]
    first = np.searchsorted(-ranked, -ranked, side="left")  # first rank of each tie
    counts = np.empty(z.shape[0], dtype=np.int64)
    counts[order] = np.count_nonzero(tails[first] >= ranked[:, None], axis=1)
    return counts


def stepdown(z: np.ndarray, counts: np.ndarray, resamples: int) -> np.ndarray:
    """Step-down adjusted p-values from :func:`stepdown_counts` summed over the resamples.

    p_g = max over {j : z_j >= z_g} of (1 + counts_j) / (B + 1): never below
    the p of a more significant segment (NaN z stays NaN).
    """
    raw = (1.0 + counts) / (resamples + 1.0)
    order = np.argsort(-z, kind="stable")
    out = np.empty_like(raw)
    ranked = z[order]
    first = np.searchsorted(-ranked, -ranked, side="right") - 1  # last rank of each tie
    out[order] = np.maximum.accumulate(raw[order])[first]
    return np.where(np.isnan(z), np.nan, out)


def adjusted(z: np.ndarray, found: np.ndarray) -> np.ndarray:
    """(1 + #{b : max z*_b >= z_g}) / (B + 1) for each z_g (NaN stays NaN)."""
    ordered = np.sort(found)
    above = ordered.shape[0] - np.searchsorted(ordered, z, side="left")
    out = (1.0 + above) / (ordered.shape[0] + 1.0)
    return np.where(np.isnan(z), np.nan, out)


def critical(found: np.ndarray, level: float) -> float:
    """The smallest z* maximum that a z must exceed for an adjusted p <= ``level``.

    +inf when B is too small for the level ((1 + 0) / (B + 1) > level).
    """
    allowed = math.floor(level * (found.shape[0] + 1.0) - 1.0 + 1e-12)
    if allowed < 0:
        return math.inf
    if allowed >= found.shape[0]:
        return 0.0
    return float(np.sort(found)[::-1][allowed])
