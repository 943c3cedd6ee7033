"""Naive transcription of the finite-sample p-values (docs/method.md, "Valid at every size").

Plain Python integers for SplitMix64 (masked to 64 bits), one row and one
redraw at a time, Besag and Clifford's sequential rule written out. Used by
``tests/analyses/test_finite_sample_pvalues.py`` as the oracle of
:func:`polars_cumdev.kernel.finite_sample.simulated_pvalues`.
"""

from __future__ import annotations

import math
import struct

MASK = (1 << 64) - 1
SEED = 0x5EED_C0DE_CA1B_0001
GOLDEN = 0x9E3779B97F4A7C15


def mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def seed(s: list[float], w: list[float]) -> int:
    """From the scores alone (the weights' scale must not change the draws)."""
    del w
    h = SEED
    for a in s:
        h = mix(h ^ bits(a))
    return mix((h + len(s)) & MASK)


def ranges(s, w, p, r) -> tuple[float, float]:
    """Kuiper range and KS maximum of the tie-merged curve sum w (r - p)."""
    c, high, low = 0.0, 0.0, 0.0
    for i in range(len(s)):
        c += w[i] * (r[i] - p[i])
        if i == len(s) - 1 or s[i + 1] != s[i]:
            high, low = max(high, c), min(low, c)
    return high - low, max(high, -low)


def pvalues(s, w, p, r, draws: int, stop: int) -> tuple[float, float, int]:
    """(Kuiper p, KS p, redraws) of one group whose rows are sorted by score, weight, response."""
    d0, g0 = ranges(s, w, p, r)
    slack = 1e-12 * sum(abs(x) for x in w)
    state = seed(s, w)
    hits, stops = [0, 0], [0, 0]
    t = 0
    while t < draws and (stops[0] == 0 or stops[1] == 0):
        t += 1
        redrawn = []
        for i in range(len(s)):
            state = (state + GOLDEN) & MASK
            u = (mix(state) >> 11) * 2.0**-53
            redrawn.append(1.0 if u < p[i] else 0.0)
        found = ranges(s, w, p, redrawn)
        for j, observed in enumerate((d0, g0)):
            if stops[j] == 0 and found[j] >= observed - slack:
                hits[j] += 1
                if hits[j] == stop:
                    stops[j] = t
    out = [stop / stops[j] if stops[j] else (hits[j] + 1.0) / (t + 1.0) for j in range(2)]
    return out[0], out[1], t


def flipped(s, w, e, draws: int, stop: int) -> tuple[float, float, int]:
    """(Kuiper p, KS p, redraws) of a predicted mean's residuals ``e`` under sign flips:
    the i-th residual of a redraw is negated when the top bit of its SplitMix64 word is 1;
    the seed: the scores' and size's, then each row's rank of |e| (ties by place) hashed in."""
    zero = [0.0] * len(s)
    d0, g0 = ranges(s, w, zero, e)
    slack = 1e-12 * sum(abs(a * b) for a, b in zip(w, e, strict=True))
    by_size = sorted(range(len(e)), key=lambda i: (abs(e[i]), i))
    rank = [0.0] * len(e)
    for place, i in enumerate(by_size):
        rank[i] = float(place)
    state = seed(s, w)  # the scores' bits and the size, then each row's rank of |e|
    for a in rank:
        state = mix(state ^ bits(a))
    hits, stops = [0, 0], [0, 0]
    t = 0
    while t < draws and (stops[0] == 0 or stops[1] == 0):
        t += 1
        redrawn = []
        for i in range(len(s)):
            state = (state + GOLDEN) & MASK
            redrawn.append(e[i] if mix(state) >> 63 == 0 else -e[i])
        found = ranges(s, w, zero, redrawn)
        for j, observed in enumerate((d0, g0)):
            if stops[j] == 0 and found[j] >= observed - slack:
                hits[j] += 1
                if hits[j] == stop:
                    stops[j] = t
    out = [stop / stops[j] if stops[j] else (hits[j] + 1.0) / (t + 1.0) for j in range(2)]
    return out[0], out[1], t


def exact(s, w, p, r, flip: bool) -> tuple[float, float]:
    """(Kuiper p, KS p) summed over all 2^rows outcomes: each row's 0/1 response
    Bernoulli(p_i) (running sum of w (R - p)), or, with ``flip``, each residual r_i
    with either sign (running sum of +-w r)."""
    import itertools

    zero = [0.0] * len(s)
    d0, g0 = ranges(s, w, zero, r) if flip else ranges(s, w, p, r)
    total = sum(abs(a * b) for a, b in zip(w, r, strict=True)) if flip else sum(map(abs, w))
    slack = 1e-12 * total
    out = [0.0, 0.0]
    for outcome in itertools.product((0, 1), repeat=len(s)):
        if flip:
            redrawn = [-x if on else x for x, on in zip(r, outcome, strict=True)]
            found = ranges(s, w, zero, redrawn)
            chance = 0.5 ** len(s)
        else:
            found = ranges(s, w, p, [float(on) for on in outcome])
            chance = math.prod(q if on else 1.0 - q for q, on in zip(p, outcome, strict=True))
        for j, observed in enumerate((d0, g0)):
            if found[j] >= observed - slack:
                out[j] += chance
    return min(out[0], 1.0), min(out[1], 1.0)


def calibration_pvalues(
    s, y, w, target: str, alpha: float | None, z: tuple[float, float], tests: int, level=0.05
) -> tuple[float, float, str]:
    """(ECCE-R p, ECCE-MAD p, p_method) of one group of ``calibration(target=...)``.

    ``z`` are the group's normalized statistics (from the reference); ``tests``
    the number of groups with a sigma. Written from docs/method.md: a group
    whose asymptotic p-values are both above max(0.1, level) keeps them; a
    quantile is simulated when min(E, n_eff) < 200 (its hits redrawn as
    Bernoulli(alpha)), a mean when n_eff < 200 (its residuals' signs redrawn,
    the p-value the larger of that and the asymptotic one); every outcome is
    listed instead of drawn for a group of at most 12 rows.
    """

    from reference import ks_pvalue_naive, kuiper_pvalue_naive

    asymptotic = (kuiper_pvalue_naive(z[0]), ks_pvalue_naive(z[1]))
    if min(asymptotic) > max(0.1, level):
        return (*asymptotic, "asymptotic")
    n_eff = sum(w) ** 2 / sum(x * x for x in w)
    r = [float(a <= b) for a, b in zip(y, s, strict=True)] if target == "quantile" else list(y)
    rows = sorted(zip(s, w, r, strict=True))
    s, w, r = ([row[j] for row in rows] for j in range(3))
    e = [a - b for a, b in zip(r, s, strict=True)]  # a mean's residuals
    # the draws see each score's rank among the group's distinct scores (ties kept)
    s = [float(len({x for x in s if x < a})) for a in s]
    draws = max(min(math.ceil(2.0 * max(tests, 1) / level), 20_000_000 // len(s)), 999)
    if target == "mean":
        if n_eff >= 200:
            return (*asymptotic, "asymptotic")
        found = exact(s, w, None, e, True) if len(s) <= 12 else flipped(s, w, e, draws, 10)
        return max(found[0], asymptotic[0]), max(found[1], asymptotic[1]), "simulated"
    v = alpha * (1 - alpha)
    second = sum(x * x * v for x in w)
    third = sum(x**3 * v * abs(1 - 2 * alpha) for x in w)
    fourth = sum(x**4 * v * max(1 - 6 * v, 0.0) for x in w)
    e3 = second**3 / third**2 if third > 0 else math.inf
    e4 = second**2 / fourth if fourth > 0 else math.inf
    if min(e3, e4, n_eff) >= 200:
        return (*asymptotic, "asymptotic")
    p = [alpha] * len(s)
    found = exact(s, w, p, r, False) if len(s) <= 12 else pvalues(s, w, p, r, draws, 10)
    return found[0], found[1], "simulated"
