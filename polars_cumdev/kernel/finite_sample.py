"""Monte Carlo p-values of the Kuiper and Kolmogorov-Smirnov ranges under the exact null.

For 0/1 responses each group's null law is known row by row: the response of
row i is Bernoulli(p_i), independently, with p_i the score (calibration) or the
full population's response mean at the row's score (a subpopulation held
against a fixed full population). The statistics are the tie-merged curve's
range D = max(C, 0) - min(C, 0) and maximum G = max |C|, C the running sum of
w_i (R_i - p_i) sampled where a tie of scores closes (method.md 1.1 and 2).
The scale sigma depends on the scores and weights only, the same in every
redraw, so z* >= z exactly when D* >= D: no sigma is needed here.

:func:`simulated_pvalues` handles many groups in one compiled call (groups in
parallel). Group g owns rows ``starts[g]:starts[g + 1]``, sorted by score,
then weight, then response (the caller's order; rows equal in score and
weight are exchangeable under the null, so the draws give the same sums
whatever the input order). Each group's stream of uniforms is SplitMix64
seeded by a hash of its scores' and weights' bits and its size: the same
group gets the same draws in any engine, any row order, any call, and its
seed does not depend on its responses. The p-value of each statistic is
Besag and Clifford's sequential one (1991): redraw until ``h`` redraws reach
the observed value (then p = h / L after L redraws) or ``draws[g]`` redraws
are done (then p = (1 + #{T* >= T}) / (draws + 1)); both are valid p-values,
P(p <= t) <= t for every t. A redraw within a relative 1e-12 of the observed
value counts as reaching it (rounding can only make p larger).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from polars_cumdev.kernel.prefix import F64, I64, JIT

__all__ = ["SEED", "event_sums", "exact_pvalues", "flipped_pvalues", "simulated_pvalues"]

#: The fixed constant every group's seed starts from.
SEED = 0x5EED_C0DE_CA1B_0001

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_UNIT = 2.0**-53
_TOLERANCE = 1e-12


@njit(**JIT)
def _mix(z: np.uint64) -> np.uint64:
    """SplitMix64's finalizer (a bijection of 64-bit words)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(**JIT)
def _seed(s_bits: np.ndarray, a: int, b: int) -> np.uint64:
    """The group's seed: the constant, then each row's score bits, then its size.

    Not the weights: scaling them must not change the draws (the p-value is
    invariant to the weights' scale, as the statistics are)."""
    h = np.uint64(SEED)
    for i in range(a, b):
        h = _mix(h ^ s_bits[i])
    return _mix(h + np.uint64(b - a))


@njit(**JIT)
def _ranges(s: F64, w: F64, p: F64, r: F64, a: int, b: int) -> tuple[float, float]:
    """(D, G) of the responses ``r`` of rows a..b-1 (the observed ones)."""
    c, high, low = 0.0, 0.0, 0.0
    for i in range(a, b):
        c += w[i] * (r[i] - p[i])
        if i == b - 1 or s[i + 1] != s[i]:
            high = max(high, c)
            low = min(low, c)
    return high - low, max(high, -low)


@njit(**JIT)
def _tally(hit: int, stop: int, exceeds: bool, h: int, t: int) -> tuple[int, int]:
    """Besag and Clifford's count of one statistic after redraw ``t``: its exceedances so far
    and the redraw of the ``h``-th (0 until then; nothing more is counted after it)."""
    if stop == 0 and exceeds:
        hit += 1
        if hit == h:
            stop = t
    return hit, stop


@njit(**JIT)
def _besag_clifford(hit: int, stop: int, h: int, t: int) -> float:
    """The p-value of :func:`_tally`'s count after ``t`` redraws: ``h`` over the redraw of the
    ``h``-th exceedance when it came, else (exceedances + 1) / (redraws + 1)."""
    return h / stop if stop > 0 else (hit + 1.0) / (t + 1.0)


@njit(**JIT, parallel=True)
def simulated_pvalues(
    starts: I64,
    s: F64,
    w: F64,
    p: F64,
    r: F64,
    draws: I64,
    h: int,
) -> tuple[F64, F64, I64]:
    """Per group: the Monte Carlo p-values of D and of G, and the redraws made.

    Parameters
    ----------
    starts
        Group g owns rows ``starts[g]:starts[g + 1]`` (groups + 1 entries).
    s, w, p, r
        Per row: score (sorted within a group; it only marks ties), weight,
        null probability of a 1, observed 0/1 response.
    draws
        Per group, the most redraws.
    h
        Besag and Clifford's number of exceedances at which a statistic stops.
    """
    groups = starts.shape[0] - 1
    p_d = np.empty(groups)
    p_g = np.empty(groups)
    used = np.zeros(groups, dtype=np.int64)
    s_bits = s.view(np.uint64)
    for g in prange(groups):
        a, b = starts[g], starts[g + 1]
        d0, g0 = _ranges(s, w, p, r, a, b)
        total = 0.0
        for i in range(a, b):
            total += abs(w[i])
        slack = _TOLERANCE * total
        state = _seed(s_bits, a, b)
        hit_d, hit_g, stop_d, stop_g = 0, 0, 0, 0
        t = 0
        while t < draws[g] and (stop_d == 0 or stop_g == 0):
            t += 1
            c, high, low = 0.0, 0.0, 0.0
            for i in range(a, b):
                state += _GOLDEN
                u = np.float64(_mix(state) >> _S11) * _UNIT
                c += w[i] * ((1.0 if u < p[i] else 0.0) - p[i])
                if i == b - 1 or s[i + 1] != s[i]:
                    high = max(high, c)
                    low = min(low, c)
            hit_d, stop_d = _tally(hit_d, stop_d, high - low >= d0 - slack, h, t)
            hit_g, stop_g = _tally(hit_g, stop_g, max(high, -low) >= g0 - slack, h, t)
        p_d[g] = _besag_clifford(hit_d, stop_d, h, t)
        p_g[g] = _besag_clifford(hit_g, stop_g, h, t)
        used[g] = t
    return p_d, p_g, used


@njit(**JIT)
def event_sums(ids: I64, p: F64, w: F64, size: int) -> F64:
    """Per group number (``size`` of them): the sums of w^2 v, w^3 v |1 - 2p| and
    w^4 v max(1 - 6v, 0), v = p (1 - p), over the rows ``ids`` numbers; one pass."""
    out = np.zeros((size, 3))
    for i in range(ids.shape[0]):
        g = ids[i]
        v = p[i] * (1.0 - p[i])
        w2v = w[i] * w[i] * v
        out[g, 0] += w2v
        out[g, 1] += w2v * w[i] * abs(1.0 - 2.0 * p[i])
        out[g, 2] += w2v * w[i] * w[i] * max(1.0 - 6.0 * v, 0.0)
    return out


@njit(**JIT, parallel=True)
def flipped_pvalues(
    starts: I64, s: F64, w: F64, e: F64, key: F64, draws: I64, h: int
) -> tuple[F64, F64, I64]:
    """Per group: sign-flip p-values of D and of G, and the redraws made.

    The null of a predicted mean whose errors are symmetric: each row's
    residual ``e`` (response minus prediction) keeps its size and gets a random
    sign, independently (method.md, "Valid at every size"). The layout, the
    seed and Besag and Clifford's stopping are those of
    :func:`simulated_pvalues`; ``p`` is not needed (the running sum is of
    w_i e_i, with the i-th sign flipped when the top bit of its word is 1).
    The seed is :func:`_seed`'s (``s``, the ranks of the predictions, and the
    size), then each row's ``key`` (its rank of |e| in its group) hashed in: it
    varies between groups,
    and, depending on the residuals only through |e|, it is independent of
    their signs, which is all the sign-flip null redraws.
    """
    groups = starts.shape[0] - 1
    p_d = np.empty(groups)
    p_g = np.empty(groups)
    used = np.zeros(groups, dtype=np.int64)
    s_bits = s.view(np.uint64)
    key_bits = key.view(np.uint64)
    for g in prange(groups):
        a, b = starts[g], starts[g + 1]
        c, high, low, total = 0.0, 0.0, 0.0, 0.0
        for i in range(a, b):
            c += w[i] * e[i]
            total += abs(w[i] * e[i])
            if i == b - 1 or s[i + 1] != s[i]:
                high = max(high, c)
                low = min(low, c)
        d0, g0 = high - low, max(high, -low)
        slack = _TOLERANCE * total
        state = _seed(s_bits, a, b)
        for i in range(a, b):
            state = _mix(state ^ key_bits[i])
        hit_d, hit_g, stop_d, stop_g = 0, 0, 0, 0
        t = 0
        while t < draws[g] and (stop_d == 0 or stop_g == 0):
            t += 1
            c, high, low = 0.0, 0.0, 0.0
            for i in range(a, b):
                state += _GOLDEN
                term = w[i] * e[i]
                c += term if (_mix(state) >> np.uint64(63)) == 0 else -term
                if i == b - 1 or s[i + 1] != s[i]:
                    high = max(high, c)
                    low = min(low, c)
            hit_d, stop_d = _tally(hit_d, stop_d, high - low >= d0 - slack, h, t)
            hit_g, stop_g = _tally(hit_g, stop_g, max(high, -low) >= g0 - slack, h, t)
        p_d[g] = _besag_clifford(hit_d, stop_d, h, t)
        p_g[g] = _besag_clifford(hit_g, stop_g, h, t)
        used[g] = t
    return p_d, p_g, used


@njit(**JIT, parallel=True)
def exact_pvalues(starts: I64, s: F64, w: F64, p: F64, r: F64, flip: bool) -> tuple[F64, F64]:
    """Per group of a few rows: the exact null p-values of D and of G, every outcome listed.

    ``flip`` false: the responses ``r`` are 0/1 and row i's is 1 with probability
    ``p[i]`` (a quantile's hits, p = alpha); the running sum is of w_i (R_i - p_i).
    ``flip`` true: ``r`` holds residuals e_i and each takes either sign with
    probability 1/2; the running sum is of +-w_i e_i. P(T* >= T) is summed over
    all 2^rows outcomes (no draws, so no Monte Carlo error and no seed); an
    outcome within a relative 1e-12 of the observed value counts as reaching it.
    """
    groups = starts.shape[0] - 1
    p_d = np.empty(groups)
    p_g = np.empty(groups)
    for g in prange(groups):
        a, b = starts[g], starts[g + 1]
        m = b - a
        c, high, low, total = 0.0, 0.0, 0.0, 0.0
        for i in range(a, b):
            term = w[i] * r[i] if flip else w[i] * (r[i] - p[i])
            c += term
            total += abs(w[i] * r[i]) if flip else abs(w[i])
            if i == b - 1 or s[i + 1] != s[i]:
                high = max(high, c)
                low = min(low, c)
        d0, g0 = high - low, max(high, -low)
        slack = _TOLERANCE * total
        sum_d, sum_g = 0.0, 0.0
        for mask in range(1 << m):
            c, high, low, chance = 0.0, 0.0, 0.0, 1.0
            for i in range(a, b):
                on = (mask >> (i - a)) & 1
                if flip:
                    c += w[i] * r[i] if on == 0 else -(w[i] * r[i])
                else:
                    c += w[i] * ((1.0 if on else 0.0) - p[i])
                    chance *= p[i] if on else 1.0 - p[i]
                if i == b - 1 or s[i + 1] != s[i]:
                    high = max(high, c)
                    low = min(low, c)
            if flip:
                chance = 0.5**m
            if high - low >= d0 - slack:
                sum_d += chance
            if max(high, -low) >= g0 - slack:
                sum_g += chance
        p_d[g] = min(sum_d, 1.0)
        p_g[g] = min(sum_g, 1.0)
    return p_d, p_g
