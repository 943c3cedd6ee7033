"""Resampled p-values of the screen for real-valued responses (and soft labels).

The null of a subpopulation held against a fixed full population, when the
responses are not all 0 or 1: within each bin of the subpopulation's own
scores (method.md 1.2: between the midpoints to its neighbouring distinct
scores), the subpopulation's responses are drawn from the same law as the
full population's. The redraw gives each row of the group, independently, the
response of a row of its bin in the full population, picked with probability
proportional to that row's weight (a weighted bootstrap within the bin). The
draw's mean is then exactly the bin mean Rt_k of (26) of M. Tygert,
"Cumulative deviation of a subpopulation from the full population", which
centres the statistic, and the population, hence Rt_k, V_k of (33) and sigma
of (31) or (32), is held as observed: sigma is the same in every redraw, so
z* >= z exactly when D* >= D.

Layout: the full population sorted by score, then response, then weight
(``pop_r`` its responses, ``cw`` its running weights with ``cw[0] = 0``);
per row of the groups (sorted as :mod:`.finite_sample` takes them), ``lo`` and
``hi`` bound its bin's rows (``lo <= j < hi``). A uniform u picks the row j
with ``cw[j] <= cw[lo] + u (cw[hi] - cw[lo]) < cw[j + 1]``. The uniforms are
:mod:`.finite_sample`'s stream, seeded the same way (a fixed constant, the
group's scores' bits, its size) and read one per row per redraw; Besag and
Clifford's rule is the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from polars_cumdev.kernel.finite_sample import (  # the redraws' generator, shared
    _GOLDEN,
    _S11,
    _TOLERANCE,
    _UNIT,
    _besag_clifford,
    _mix,
    _ranges,
    _seed,
    _tally,
)
from polars_cumdev.kernel.prefix import F64, I64, JIT

__all__ = ["BLOCK", "BLOCK_ROWS", "bin_moments", "resampled_pvalues"]


@njit(**JIT, parallel=True)
def bin_moments(lo: I64, hi: I64, pop_r: F64, pop_w: F64) -> F64:
    """Per bin (rows ``lo[k]:hi[k]`` of the sorted population): the weighted mean of the
    responses and their central moments of order 2, 3 and 4 (4 x bins), two passes each.

    These are the mean and moments of one redraw (a row picked with probability
    proportional to its weight); an empty bin gets zeros."""
    bins = lo.shape[0]
    out = np.zeros((4, bins))
    for k in prange(bins):
        total, first = 0.0, 0.0
        for j in range(lo[k], hi[k]):
            total += pop_w[j]
            first += pop_w[j] * pop_r[j]
        if total <= 0.0:
            continue
        mean = first / total
        m2, m3, m4 = 0.0, 0.0, 0.0
        for j in range(lo[k], hi[k]):
            d = pop_r[j] - mean
            d2 = d * d
            m2 += pop_w[j] * d2
            m3 += pop_w[j] * d2 * d
            m4 += pop_w[j] * d2 * d2
        out[0, k] = mean
        out[1, k] = m2 / total
        out[2, k] = m3 / total
        out[3, k] = m4 / total
    return out


@njit(**JIT)
def _pick(cw: F64, lo: int, hi: int, u: float, unit: bool) -> int:
    """The row j in lo..hi-1 with cw[j] <= cw[lo] + u (cw[hi] - cw[lo]) < cw[j + 1].

    ``unit``: every weight is 1, so cw[j] = j exactly and j is the target's floor
    (the same row as the search finds, in one step)."""
    target = cw[lo] + u * (cw[hi] - cw[lo])
    if unit:
        return min(int(target), hi - 1)
    base, n = lo, hi - lo  # cw[base] <= target; the row is in base..base+n-1
    while n > 1:  # halving without a branch on the data (a conditional move)
        half = n >> 1
        base = base + half if cw[base + half] <= target else base
        n -= half
    return base


#: Redraws computed per block (times the group's rows at most BLOCK_ROWS): each row's
#: bin is read for a whole block of redraws while it is in cache.
BLOCK = 256
BLOCK_ROWS = 1 << 20


@njit(**JIT, parallel=True)
def resampled_pvalues(
    starts: I64,
    s: F64,
    w: F64,
    rt: F64,
    r: F64,
    lo: I64,
    hi: I64,
    cw: F64,
    pop_r: F64,
    draws: I64,
    h: int,
    unit: bool = False,
) -> tuple[F64, F64, I64]:
    """Per group: the resampled p-values of D and of G, and the redraws made.

    Parameters
    ----------
    starts
        Group g owns rows ``starts[g]:starts[g + 1]`` (groups + 1 entries).
    s, w, rt, r
        Per row: score (sorted within a group; it marks the ties and seeds the
        draws), weight, its bin's mean Rt (:func:`bin_moments`), observed response.
    lo, hi
        Per row: its bin's rows in the sorted population (``lo < hi``).
    cw, pop_r
        The sorted population's running weights (one more entry than rows,
        ``cw[0] = 0``) and its responses.
    draws
        Per group, the most redraws.
    h
        Besag and Clifford's number of exceedances at which a statistic stops.
    unit
        Every population weight is 1 (the picks are then found in one step).

    The k-th uniform of a group's stream (k = 1, 2, ...; row i of redraw t takes
    k = (t - 1) n + i + 1 for a group of n rows) is SplitMix64's output at
    ``seed + k * golden``, so a block of redraws is computed row by row (each
    bin read once per block) and gives the numbers of the redraw-by-redraw order.
    """
    groups = starts.shape[0] - 1
    p_d = np.empty(groups)
    p_g = np.empty(groups)
    used = np.zeros(groups, dtype=np.int64)
    s_bits = s.view(np.uint64)
    for g in prange(groups):
        a, b = starts[g], starts[g + 1]
        n = b - a
        d0, g0 = _ranges(s, w, rt, r, a, b)
        total = 0.0
        for i in range(a, b):
            total += abs(w[i]) * (abs(r[i]) + abs(rt[i]))
        slack = _TOLERANCE * total
        seed = _seed(s_bits, a, b)
        block = max(1, min(BLOCK, BLOCK_ROWS // max(n, 1)))
        terms = np.empty((block, n))
        hit_d, hit_g, stop_d, stop_g = 0, 0, 0, 0
        t = 0
        while t < draws[g] and (stop_d == 0 or stop_g == 0):
            size = min(block, draws[g] - t)
            for i in range(n):  # the block's draws for row a + i: its bin stays in cache
                j = a + i
                for d in range(size):
                    k = np.uint64((t + d) * n + i + 1)
                    u = np.float64(_mix(seed + k * _GOLDEN) >> _S11) * _UNIT
                    terms[d, i] = w[j] * (pop_r[_pick(cw, lo[j], hi[j], u, unit)] - rt[j])
            for d in range(size):
                if stop_d != 0 and stop_g != 0:
                    break
                t += 1
                c, high, low = 0.0, 0.0, 0.0
                for i in range(n):
                    c += terms[d, i]
                    if i == n - 1 or s[a + i + 1] != s[a + i]:
                        high = max(high, c)
                        low = min(low, c)
                hit_d, stop_d = _tally(hit_d, stop_d, high - low >= d0 - slack, h, t)
                hit_g, stop_g = _tally(hit_g, stop_g, max(high, -low) >= g0 - slack, h, t)
        p_d[g] = _besag_clifford(hit_d, stop_d, h, t)
        p_g[g] = _besag_clifford(hit_g, stop_g, h, t)
        used[g] = t
    return p_d, p_g, used
