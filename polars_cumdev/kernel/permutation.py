"""Permutation p-values of the two-subpopulation comparison (``compare(ties="dither")``).

Under the null hypothesis of the comparison, at any one score the responses of
the two subpopulations are exchangeable. Shuffling the responses among the
rows that share a score (a *stratum*), the subpopulations, weights and scores
staying where they are, therefore leaves the joint law of the data unchanged:
the statistic recomputed on each shuffle is a draw from its exact null law,
conditional on everything but the order of the responses within each stratum
(a stratified permutation test). The blocks, their weights v_k and, for the
Bernoulli sigma, sigma itself depend only on what stays fixed; the centred
differences, the curve and the empirical sigma are recomputed per draw
(two-subpopulations.md steps 3-6), and the statistic is the studentized
range z = D / sigma (and G / sigma).

Layout (one or many comparisons in one call, in parallel): comparison g owns
rows ``row_starts[g]:row_starts[g + 1]``, sorted by score (the caller's
canonical order, so the draws do not depend on the input's row order), and
blocks ``block_starts[g]:block_starts[g + 1]`` in score order. Per row:
its block (a global index), weight and response, and whether it opens a new
stratum. Per block: its total weight, its sign (+1 for the first
subpopulation, -1 for the second) and its normalized weight v (0 on the
first and the last block of a comparison, which are not interior). The
stream of uniforms of each comparison is SplitMix64 from ``seeds[g]``. The
p-value is Besag and Clifford's sequential one (stop at ``h`` draws reaching
the observed value, else (1 + hits) / (1 + draws)); a draw within a relative
1e-12 of the observed value counts as reaching it.
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
    _tally,
)
from polars_cumdev.kernel.prefix import F64, I64, JIT

__all__ = ["permutation_pvalues"]


@njit(**JIT)
def _z(
    rr: F64, block: I64, w: F64, bw: F64, sign: F64, v: F64, sigma: float, sums: F64
) -> tuple[float, float]:
    """(D / sigma, G / sigma) of one comparison's responses ``rr`` (its own slices).

    ``sigma`` > 0 is fixed (the Bernoulli form); otherwise the empirical sigma
    of step 6 is computed from the differences. A zero sigma gives +inf where
    the statistic is positive and 0 where it is 0.
    """
    m = bw.shape[0]
    sums[:] = 0.0
    for i in range(rr.shape[0]):
        sums[block[i]] += w[i] * rr[i]
    cum, high, low, s2, d_prev, v_prev = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for k in range(1, m - 1):
        r_b = sums[k] / bw[k]
        d = sign[k] * (r_b - (sums[k - 1] / bw[k - 1] + sums[k + 1] / bw[k + 1]) / 2.0)
        cum += v[k] * d
        high = max(high, cum)
        low = min(low, cum)
        if k > 1:
            diff = d - d_prev
            u = v_prev + v[k]
            s2 += diff * diff * u * u / 4.0
        d_prev, v_prev = d, v[k]
    scale = sigma if sigma > 0.0 else 2.0 * np.sqrt(s2)
    kuiper, ks = high - low, max(high, -low)
    if scale > 0.0:
        return kuiper / scale, ks / scale
    return (np.inf if kuiper > 0.0 else 0.0), (np.inf if ks > 0.0 else 0.0)


@njit(**JIT, parallel=True)
def permutation_pvalues(
    row_starts: I64,
    block: I64,
    w: F64,
    r: F64,
    opens: np.ndarray,
    block_starts: I64,
    bw: F64,
    sign: F64,
    v: F64,
    sigma: F64,
    seeds: np.ndarray,
    draws: I64,
    h: int,
) -> tuple[F64, F64, F64, F64, I64]:
    """Per comparison: observed (z_D, z_G), their permutation p-values, and the draws made.

    ``block[i]`` numbers row i's block within its comparison (from 0);
    ``opens[i]`` is true where row i starts a new stratum (a new score);
    ``sigma[g]`` > 0 fixes comparison g's sigma, otherwise it is the empirical one.
    """
    groups = row_starts.shape[0] - 1
    z_d = np.empty(groups)
    z_g = np.empty(groups)
    p_d = np.empty(groups)
    p_g = np.empty(groups)
    used = np.zeros(groups, dtype=np.int64)
    for g in prange(groups):
        a, b = row_starts[g], row_starts[g + 1]
        c, e = block_starts[g], block_starts[g + 1]
        rr = r[a:b].copy()
        bl, ww, op = block[a:b], w[a:b], opens[a:b]
        bw_g, sign_g, v_g = bw[c:e], sign[c:e], v[c:e]
        sums = np.empty(e - c)
        d0, g0 = _z(rr, bl, ww, bw_g, sign_g, v_g, sigma[g], sums)
        z_d[g], z_g[g] = d0, g0
        slack_d, slack_g = _TOLERANCE * abs(d0), _TOLERANCE * abs(g0)
        state = np.uint64(seeds[g])
        n = b - a
        hit_d, hit_g, stop_d, stop_g = 0, 0, 0, 0
        t = 0
        while t < draws[g] and (stop_d == 0 or stop_g == 0):
            t += 1
            # Fisher-Yates within each stratum, from its last row down.
            end = n
            for i in range(n - 1, -1, -1):
                if op[i] or i == 0:
                    for j in range(end - 1, i, -1):
                        state += _GOLDEN
                        u = np.float64(_mix(state) >> _S11) * _UNIT
                        k = i + int(u * (j - i + 1))
                        rr[j], rr[k] = rr[k], rr[j]
                    end = i
            zd, zg = _z(rr, bl, ww, bw_g, sign_g, v_g, sigma[g], sums)
            hit_d, stop_d = _tally(hit_d, stop_d, zd >= d0 - slack_d, h, t)
            hit_g, stop_g = _tally(hit_g, stop_g, zg >= g0 - slack_g, h, t)
        p_d[g] = _besag_clifford(hit_d, stop_d, h, t)
        p_g[g] = _besag_clifford(hit_g, stop_g, h, t)
        used[g] = t
    return z_d, z_g, p_d, p_g, used
