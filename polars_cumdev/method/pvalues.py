"""Asymptotic p-values of the normalized Kuiper and Kolmogorov-Smirnov statistics.

The statistics are the Kuiper range D and the Kolmogorov-Smirnov maximum G of
equations (12)-(13) in M. Tygert, "Cumulative deviation of a subpopulation from
the full population". Divided by the scale sigma of random fluctuations, and
under the null hypothesis of no deviation, they are asymptotically distributed
(Remark 2 of that paper; section 4 of the method spec) as functionals of a
standard Brownian motion B on [0, 1]:

* G / sigma as ``max |B(t)|``, whose mean is sqrt(pi / 2);
* D / sigma as the range ``max B(t) - min B(t)``, whose mean is 2 sqrt(2 / pi).

Each survival function has two classical series. The theta-function series of
the distribution function converges quickly for small arguments; the series of
normal tail probabilities obtained by reflection converges quickly for large
arguments. Below a fixed crossover the p-value is one minus the first series;
at and above it the p-value is the second series evaluated directly, so the
p-value keeps full relative precision deep into the tail (until it underflows
near z = 38.5). The base-10 logarithm is available as well; in the tail it is
computed in log space, so it stays finite and accurate for arguments such as
z = 1e4, where the p-value itself is far below the smallest double.

Both public functions are vectorized with NumPy; the only Python loops run
over a fixed, small number of series terms. The normal tail comes from
:mod:`polars_cumdev.method.normal_tail` (Polars' ``erfc``, no SciPy import;
SciPy's Brent solver is imported for the critical values only).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from polars_cumdev.method.normal_tail import log_q as _log_q
from polars_cumdev.method.normal_tail import q as _q

__all__ = ["ks_critical", "ks_pvalue", "kuiper_critical", "kuiper_pvalue", "pvalue_pairs"]

_LN10 = math.log(10.0)
_PI2 = math.pi * math.pi

# Crossovers between the two series and the numbers of terms kept. At the
# crossover the first neglected term is below 1e-18 relative to the p-value for
# both series (the CDF series only gets better below the crossover, the tail
# series only better above it), and one minus the CDF loses no more than about
# one bit there because the p-value is still of order one. A few spare terms
# are kept on top; they cost nothing and only ever add exact zeros or
# negligible amounts.
_KS_CROSSOVER = 1.0
_KS_CDF_TERMS = 5  # k = 0..4; the k = 3 term is already exp(-60) at z = 1
_KS_TAIL_TERMS = 7  # k = 0..6; already the k = 4 term is Q(9) / Q(1) ~ 7e-19 at z = 1
_KUIPER_CROSSOVER = 1.5
_KUIPER_CDF_TERMS = 5  # k = 0..4; the k = 2 term is exp(-52.6) relative to k = 0 at z = 1.5
_KUIPER_TAIL_TERMS = 10  # k = 1..10; already the k = 7 term is 7 Q(10.5) / Q(1.5) ~ 5e-24

# Below this argument the CDF series is exp(-1e6) or smaller, which is 0 in
# double precision; clamping avoids 1 / z**2 overflowing to inf (and 0 * inf).
_TINY = 1e-3

_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
_RATIO_CAP = 50.0  # Q(2 x) / Q(x) < exp(-3700) beyond this

_Array = npt.NDArray[np.float64]
_FloatOrArray = float | _Array


def _ks_cdf(x: _Array) -> _Array:
    """P(max |B| <= x) from the theta series; for 0 < x < crossover."""
    u = _PI2 / (8.0 * np.maximum(x, _TINY) ** 2)
    total = np.zeros_like(x)
    for k in range(_KS_CDF_TERMS):
        m = 2 * k + 1
        total += (-1.0) ** k / m * np.exp(-(m * m) * u)
    return (4.0 / math.pi) * total


def _kuiper_cdf(x: _Array) -> _Array:
    """P(range of B <= x) from the theta series; for 0 < x < crossover."""
    v = 1.0 / np.maximum(x, _TINY) ** 2
    total = np.zeros_like(x)
    for k in range(_KUIPER_CDF_TERMS):
        h2 = (k + 0.5) ** 2 * _PI2
        total += (8.0 * v + 2.0 / h2) * np.exp(-2.0 * h2 * v)
    return total


def _tail(x: _Array, lead: float, terms: tuple[tuple[float, float], ...]) -> tuple[_Array, _Array]:
    """(p, ln p) for p = lead * Q(x) * (1 + s), s = sum_j c_j Q(m_j x) / Q(x).

    ``terms`` holds the pairs (c_j, m_j), m_j > 1. The ratios are formed in log
    space from ln Q, so they are accurate even where Q(x) underflows; for
    x >= _RATIO_CAP every ratio is below exp(-3700), i.e. exactly 0 in double
    precision, so s is evaluated at min(x, _RATIO_CAP) to keep m_j x finite.
    The direct product with :func:`_q` is used while it is a normal
    double; :func:`_q` flushes to 0 at x ~ 37.7, where Q(x) is still subnormal,
    and exp(ln p) covers the rest of the way to the underflow of p (x ~ 38.5).
    """
    capped = np.minimum(x, _RATIO_CAP)
    # Q and ln Q at x, min(x, cap) and every m_j min(x, cap), in one pass (each pass
    # of the special function has a fixed cost far above its cost per value).
    n = x.size
    coefficients, multiples = _columns(terms)
    points = np.concatenate([x, capped, (multiples * capped).ravel()])
    q = _q(points)
    log_q = _log_q(points, q)
    log_q_capped = log_q[n : 2 * n]
    # s = (((0 + c_1 r_1) + c_2 r_2) + ...), the ratios r_j of every term at once: one row
    # per term, added in order by an accumulation from a row of zeros (a sum along the
    # rows may pair its terms differently; the small calls pay per NumPy call, not per value)
    ratios = np.exp(log_q[2 * n :].reshape(len(terms), n) - log_q_capped)
    s = np.add.accumulate(np.vstack([np.zeros((1, n)), coefficients * ratios]), axis=0)[-1]
    log_p = math.log(lead) + log_q[:n] + np.log1p(s)
    p = lead * q[:n] * (1.0 + s)
    normal = p >= _SMALLEST_NORMAL
    # Where p is a normal double its own logarithm is the closer one (no cancellation
    # between ln(lead) and ln Q near the crossover).
    with np.errstate(divide="ignore"):
        log_p = np.where(normal, np.log(np.where(normal, p, 1.0)), log_p)
    return np.where(normal, p, np.exp(log_p)), log_p


@functools.cache
def _columns(terms: tuple[tuple[float, float], ...]) -> tuple[_Array, _Array]:
    """The (c_j, m_j) of :func:`_tail`'s ``terms`` as two columns (one row per term)."""
    coefficients = np.array([c for c, _ in terms]).reshape(-1, 1)
    multiples = np.array([m for _, m in terms]).reshape(-1, 1)
    return coefficients, multiples


# P(max |B| > x) = 4 Q(x) (1 + sum_{k >= 1} (-1)^k Q((2k + 1) x) / Q(x)); |s| < 0.01 for x >= 1.
_KS_TAIL = tuple(((-1.0) ** k, 2.0 * k + 1.0) for k in range(1, _KS_TAIL_TERMS))
# P(range > x) = 8 Q(x) (1 + sum_{k >= 2} (-1)^(k - 1) k Q(k x) / Q(x)); |s| < 0.05 for x >= 1.5.
_KUIPER_TAIL = tuple(((-1.0) ** (k - 1) * k, float(k)) for k in range(2, _KUIPER_TAIL_TERMS + 1))


def _ks_tail(x: _Array) -> tuple[_Array, _Array]:
    """(p, ln p) for P(max |B| > x) from the normal-tail series; for x >= crossover."""
    return _tail(x, 4.0, _KS_TAIL)


def _kuiper_tail(x: _Array) -> tuple[_Array, _Array]:
    """(p, ln p) for P(range of B > x) from the normal-tail series; for x >= crossover."""
    return _tail(x, 8.0, _KUIPER_TAIL)


def _survival(
    z: float | npt.ArrayLike,
    log10: bool,
    crossover: float,
    cdf: Callable[[_Array], _Array],
    tail: Callable[[_Array], tuple[_Array, _Array]],
) -> _FloatOrArray:
    """Shared driver: split by argument, evaluate each branch on its own subset."""
    x, scalar = _arguments(z)
    out = _both(x, crossover, cdf, tail)[1 if log10 else 0]
    if scalar:
        return float(out[0])
    return out


def _arguments(z: float | npt.ArrayLike) -> tuple[_Array, bool]:
    """``z`` as a 1-d float64 array, and whether it was a scalar."""
    try:
        x = np.asarray(z, dtype=np.float64)
    except (TypeError, ValueError):
        from polars_cumdev.errors import InvalidParameterError

        raise InvalidParameterError(
            f"the statistic z must be a number or an array of numbers, got {z!r}"
        ) from None
    return np.atleast_1d(x), x.ndim == 0


def _both(
    x: _Array,
    crossover: float,
    cdf: Callable[[_Array], _Array],
    tail: Callable[[_Array], tuple[_Array, _Array]],
) -> tuple[_Array, _Array]:
    """(p, log10 p) of the 1-d array ``x``, each series evaluated once for both."""
    p = np.full(x.shape, np.nan)  # NaN stays NaN
    log10p = np.full(x.shape, np.nan)
    p[x <= 0.0] = 1.0
    log10p[x <= 0.0] = 0.0

    # Underflow of exponentials to 0 is expected and harmless (also under
    # np.seterr(all="raise")).
    with np.errstate(under="ignore"):
        low = (x > 0.0) & (x < crossover)
        if low.any():
            c = cdf(x[low])
            p[low] = 1.0 - c
            log10p[low] = np.log1p(-c) / _LN10 + 0.0  # + 0.0: no -0.0

        high = x >= crossover  # includes +inf
        if high.any():
            tail_p, log_p = tail(x[high])
            p[high] = tail_p
            log10p[high] = log_p / _LN10
    return p, log10p


def pvalue_pairs(kuiper_z: npt.ArrayLike, ks_z: npt.ArrayLike) -> tuple[_Array, ...]:
    """``(kuiper p, ks p, kuiper log10 p, ks log10 p)`` of two arrays, in one pass each.

    The numbers of :func:`kuiper_pvalue` and :func:`ks_pvalue` (with and
    without ``log10``), bit for bit: each series is evaluated once for both
    forms.
    """
    kuiper = _both(_arguments(kuiper_z)[0], _KUIPER_CROSSOVER, _kuiper_cdf, _kuiper_tail)
    ks = _both(_arguments(ks_z)[0], _KS_CROSSOVER, _ks_cdf, _ks_tail)
    return kuiper[0], ks[0], kuiper[1], ks[1]


def ks_pvalue(z: float | npt.ArrayLike, *, log10: bool = False) -> _FloatOrArray:
    """Asymptotic p-value of the normalized Kolmogorov-Smirnov statistic G / sigma.

    Returns P(max_{0 <= t <= 1} |B(t)| > z) for a standard Brownian motion B,
    the large-sample null distribution of G / sigma with G from equation (12)
    of Tygert, "Cumulative deviation of a subpopulation from the full
    population" (see Remark 2 there and section 4 of the method spec).

    Parameters
    ----------
    z : float or array_like
        Normalized statistic(s). Values ``<= 0`` give p = 1; NaN gives NaN;
        ``+inf`` gives p = 0 (log10 p = -inf).
    log10 : bool, default False
        If True, return log10 of the p-value instead. It is evaluated in log
        space and stays finite (and accurate) where the p-value itself
        underflows, e.g. for z = 100 or z = 1e4.

    Returns
    -------
    float or numpy.ndarray
        A Python float for scalar input, otherwise a float64 array with the
        shape of ``z``.

    Notes
    -----
    For z < 1 the p-value is 1 - (4/pi) sum_k (-1)^k / (2k+1)
    exp(-(2k+1)^2 pi^2 / (8 z^2)); for z >= 1 it is 4 sum_k (-1)^k Q((2k+1) z)
    with Q the standard normal upper tail. The relative error is below 1e-12
    wherever the p-value is a normal double (z up to about 37.5); beyond that
    it degrades gracefully through the subnormal range before reaching 0 near
    z = 38.5, while the log10 form remains accurate. The mean of the
    distribution is sqrt(pi / 2).

    Examples
    --------
    >>> round(ks_pvalue(2.0), 6)
    0.091001
    >>> ks_pvalue(100.0, log10=True) < -2000
    True
    """
    return _survival(z, log10, _KS_CROSSOVER, _ks_cdf, _ks_tail)


def kuiper_pvalue(z: float | npt.ArrayLike, *, log10: bool = False) -> _FloatOrArray:
    """Asymptotic p-value of the normalized Kuiper statistic D / sigma.

    Returns P(max_{0 <= t <= 1} B(t) - min_{0 <= t <= 1} B(t) > z) for a
    standard Brownian motion B, the large-sample null distribution of
    D / sigma with D from equation (13) of Tygert, "Cumulative deviation of a
    subpopulation from the full population" (see Remark 2 there and section 4
    of the method spec).

    Parameters
    ----------
    z : float or array_like
        Normalized statistic(s). Values ``<= 0`` give p = 1; NaN gives NaN;
        ``+inf`` gives p = 0 (log10 p = -inf).
    log10 : bool, default False
        If True, return log10 of the p-value instead. It is evaluated in log
        space and stays finite (and accurate) where the p-value itself
        underflows, e.g. for z = 100 or z = 1e4.

    Returns
    -------
    float or numpy.ndarray
        A Python float for scalar input, otherwise a float64 array with the
        shape of ``z``.

    Notes
    -----
    For z < 1.5 the p-value is 1 - sum_k (8 / z^2 + 2 / (h_k^2)) exp(-2 h_k^2
    / z^2) with h_k = (k + 1/2) pi; for z >= 1.5 it is 8 sum_{k >= 1}
    (-1)^(k-1) k Q(k z) with Q the standard normal upper tail (this follows by
    integrating the density 8 sum_k (-1)^(k-1) k^2 phi(k z)). The relative
    error is below 1e-12 wherever the p-value is a normal double; the log10
    form stays finite far beyond. The mean of the distribution is
    2 sqrt(2 / pi).

    Examples
    --------
    >>> round(kuiper_pvalue(2.0), 6)
    0.181494
    >>> kuiper_pvalue(0.0)
    1.0
    >>> kuiper_pvalue(1000.0, log10=True) < -200000
    True
    """
    return _survival(z, log10, _KUIPER_CROSSOVER, _kuiper_cdf, _kuiper_tail)


def ks_critical(alpha: float) -> float:
    """Critical value of the normalized Kolmogorov-Smirnov statistic at level ``alpha``.

    The inverse of :func:`ks_pvalue`: the z with P(max |B| > z) = alpha for a
    standard Brownian motion B on [0, 1] (Remark 2 of Tygert, "Cumulative
    deviation of a subpopulation from the full population"; section 4 of the
    method spec). Since the p-value decreases in z, G / sigma > z_alpha
    exactly when the p-value of G / sigma is below alpha: a cumulative curve
    leaves the band of plus and minus z_alpha sigma around zero exactly when
    the Kolmogorov-Smirnov test rejects at level alpha.

    Parameters
    ----------
    alpha : float
        Level of the test, in (0, 1).

    Returns
    -------
    float
        z_alpha, found by Brent's method on log10 p(z) = log10 alpha (which
        stays accurate for tiny alpha), to within a few units in the last
        place.

    Raises
    ------
    InvalidParameterError
        If ``alpha`` is not a number in (0, 1).

    Examples
    --------
    >>> round(ks_critical(0.05), 4)
    2.2414
    >>> abs(ks_pvalue(ks_critical(0.01)) - 0.01) < 1e-14
    True
    """
    return _critical(alpha, ks_pvalue)


def kuiper_critical(alpha: float) -> float:
    """Critical value of the normalized Kuiper statistic at level ``alpha``.

    The inverse of :func:`kuiper_pvalue`: the z with P(range of B > z) =
    alpha for a standard Brownian motion B on [0, 1] (Remark 2 of Tygert,
    "Cumulative deviation of a subpopulation from the full population";
    section 4 of the method spec). D / sigma > z_alpha exactly when the
    Kuiper test rejects at level alpha; with alpha / m it is the Bonferroni
    line across m tests.

    Parameters
    ----------
    alpha : float
        Level of the test, in (0, 1).

    Returns
    -------
    float
        z_alpha, found as in :func:`ks_critical`.

    Raises
    ------
    InvalidParameterError
        If ``alpha`` is not a number in (0, 1).

    Examples
    --------
    >>> abs(kuiper_pvalue(kuiper_critical(0.05)) - 0.05) < 1e-14
    True
    """
    return _critical(alpha, kuiper_pvalue)


def _critical(alpha: float, pvalue: Callable[..., Any]) -> float:
    """The z where ``pvalue(z) = alpha``, by Brent's method on the base-10 logarithm."""
    from scipy.optimize import brentq

    from polars_cumdev.errors import InvalidParameterError

    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 < alpha < 1.0:
        raise InvalidParameterError(f"`alpha` must be a number in (0, 1), got {alpha!r}")
    target = math.log10(alpha)

    def gap(z: float) -> float:
        return float(pvalue(z, log10=True)) - target

    high = 1.0
    while gap(high) > 0.0:  # the p-value at z is below exp(-z^2 / 2): a few doublings
        high *= 2.0
    return float(brentq(gap, 0.0, high, xtol=1e-300, rtol=4.0 * np.finfo(np.float64).eps))
