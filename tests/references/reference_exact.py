"""An exact transcription of method.md section 1, in rational arithmetic.

``reference.py`` follows the spec in float64, which is the yardstick on
ordinary data. For extreme inputs (weights near the limits of the doubles,
weights that differ by thirty orders of magnitude) float64 itself is what is
being tested, so the yardstick here computes every sum, mean, variance and
cumulative difference exactly with :class:`fractions.Fraction` (every double
is a rational number) and rounds only at the end: sigma is the square root
of an exact rational, taken with mpmath at 60 digits.

The bins are chosen as the library and ``reference.midpoint`` choose them:
the boundaries are doubles, compared with the scores as doubles. Everything
else is exact. Slow (a loop over rows for every bin), so for small data.

It imports neither Polars nor anything from ``polars_cumdev``.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from reference import midpoint, resolve_variance

__all__ = ["subpop_vs_full_exact"]


def _sqrt(value: Fraction) -> float:
    with mpmath.workdps(60):
        root = mpmath.sqrt(mpmath.mpf(value.numerator) / mpmath.mpf(value.denominator))
        return float(root)


def subpop_vs_full_exact(s_full, r_full, w_full, in_sub, variance="auto") -> dict:
    """Kuiper, Kolmogorov-Smirnov, C_n and sigma of one subpopulation, exactly.

    Parameters are plain sequences of floats (``w_full`` may be None) and a
    sequence of booleans. Returns a dict of floats: ``kuiper``, ``ks``,
    ``delta`` (C_n), ``sigma``, ``weight`` (the subpopulation's total weight,
    rounded) and ``n`` (merged points).
    """
    s_full = [float(x) for x in s_full]
    r_full = [float(x) for x in r_full]
    m = len(s_full)
    w_full = [1.0] * m if w_full is None else [float(x) for x in w_full]
    variance = resolve_variance(variance, r_full)
    rows = [i for i in range(m) if in_sub[i]]
    if not rows:
        raise ValueError("the subpopulation is empty")

    # 1.1 ties, exactly.
    scores = sorted({s_full[i] for i in rows})
    weights, responses, factors = [], [], []
    for value in scores:
        tie = [i for i in rows if s_full[i] == value]
        sw = sum(Fraction(w_full[i]) for i in tie)
        swr = sum(Fraction(w_full[i]) * Fraction(r_full[i]) for i in tie)
        sww = sum(Fraction(w_full[i]) ** 2 for i in tie)
        weights.append(sw)
        responses.append(swr / sw)
        factors.append(Fraction(1) if len(tie) == 1 else sww / (sw * sw))
    n = len(scores)

    # 1.2 boundaries as doubles, 1.3 bin moments exactly.
    upper = [midpoint(scores[k], scores[k + 1]) for k in range(n - 1)] + [float("inf")]
    lower = [float("-inf"), *upper[:-1]]
    rt, v = [], []
    for k in range(n):
        members = [i for i in range(m) if lower[k] < s_full[i] <= upper[k]]
        sw = sum(Fraction(w_full[i]) for i in members)
        swr = sum(Fraction(w_full[i]) * Fraction(r_full[i]) for i in members)
        swrr = sum(Fraction(w_full[i]) * Fraction(r_full[i]) ** 2 for i in members)
        sww = sum(Fraction(w_full[i]) ** 2 for i in members)
        mean = swr / sw
        denominator = sw * sw - sww
        u = Fraction(0) if len(members) == 1 or denominator == 0 else sw * sw / denominator
        rt.append(mean)
        v.append(u * (swrr / sw - mean * mean))

    # 1.4-1.6
    total = sum(weights)
    a = [w / total for w in weights]
    c = [Fraction(0)]
    for k in range(n):
        c.append(c[-1] + a[k] * (responses[k] - rt[k]))
    if variance == "bernoulli":
        terms = [a[k] ** 2 * rt[k] * (1 - rt[k]) * factors[k] for k in range(n)]
    else:
        terms = [a[k] ** 2 * v[k] * factors[k] for k in range(n)]
    return {
        "kuiper": float(max(c) - min(c)),
        "ks": float(max(abs(x) for x in c[1:])),
        "delta": float(c[-1]),
        "sigma": _sqrt(sum(terms, Fraction(0))),
        "weight": float(total),
        "n": n,
    }
