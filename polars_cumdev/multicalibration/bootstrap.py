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
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from polars_cumdev.multicalibration.family import Coded, layout

__all__ = ["BLOCK", "adjusted", "critical", "maxima"]

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
) -> np.ndarray:
    """The largest z* over the tested segments in each of ``resamples`` resamples.

    ``numbers[k]`` are the tested segment numbers of subset k, in the order of
    ``roots`` (sqrt of the unnormalized sigma^2 sum, W_g sigma_g, per tested
    segment). With ``response`` given, one pass on those responses instead
    (returns every tested segment's z: used to check the walk).
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
    bits = np.empty((s.shape[0], min(BLOCK, resamples)), dtype=np.uint8)
    for start in range(0, resamples, BLOCK):
        block = min(BLOCK, resamples - start)
        for b in range(block):  # the same draws, in the same order, whatever the block
            np.less(rng.random(s.shape[0]), s, out=bits[:, b].view(np.bool_))
        z = zs(bits[:, :block] if block == bits.shape[1] else np.ascontiguousarray(bits[:, :block]))
        found[start : start + block] = np.max(z, axis=0, initial=0.0)
    return found


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
