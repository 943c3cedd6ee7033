"""The standard normal upper tail Q(x) and its logarithm, accurate to a few ulps, without SciPy.

The p-values of :mod:`polars_cumdev.method.pvalues` are series of normal
tail probabilities Q(m x). SciPy's special functions would serve, but
importing them costs a fresh process a third of a second or more, several
times a small screen's whole work; Polars has the C library's ``erfc``
(about two ulps of its argument's value) and no import cost, and so has
Python's :mod:`math`, which serves a few arguments without a query. What the C
library's function cannot see is the rounding of its argument
t = x / sqrt 2 itself, up to 2e-13 relative at x = 37: :func:`q` corrects it
to first order, so that Q is within about two ulps (SciPy's ``ndtr``: up to
2.2e-13 relative, for the same reason).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["log_q", "q"]

_Array = npt.NDArray[np.float64]

_HALF_LN_2PI = 0.5 * math.log(2.0 * math.pi)
_ASYMPTOTIC = 1e8  # ln Q(x) = ln(phi(x) / x) + O(1 / x**2) beyond this
_SERIES = 30.0  # ln Q from the asymptotic series from here on (Q(30) ~ 5e-198)
_MILLS_TERMS = 12
_SQRT_HALF = math.sqrt(0.5)
_SPLIT = 134217729.0  # 2^27 + 1, Veltkamp's splitting constant for doubles
_Q_UNDERFLOW = 40.0  # Q(x) is 0 in double precision beyond this
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def _product_error(a: _Array, b: float) -> _Array:
    """The rounding error of the product a * b, exactly (Veltkamp's split, Dekker's product)."""
    product = a * b
    a_hi = _SPLIT * a - (_SPLIT * a - a)
    b_hi = _SPLIT * b - (_SPLIT * b - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


# sqrt(1/2) - _SQRT_HALF: (h + l)^2 = 1/2 gives l = (1/2 - h^2) / (2 h), with h^2 exact.
_SQRT_HALF_LO = float(
    (0.5 - _SQRT_HALF * _SQRT_HALF - _product_error(np.array([_SQRT_HALF]), _SQRT_HALF)[0])
    / (2.0 * _SQRT_HALF)
)


def q(x: _Array) -> _Array:
    """Q(x) = erfc(x / sqrt 2) / 2, the standard normal upper tail (0 once it underflows).

    From Polars' ``erfc`` (the C library's, within about two ulps of its
    argument's value), with a first-order correction for the rounding of
    t = x / sqrt 2 itself, which alone would cost up to 2e-13 relative at
    x = 37: Q(x) = erfc(t) / 2 - exp(-t^2) d / sqrt(pi) with d the part of
    x / sqrt 2 that t lost.
    """
    t = x * _SQRT_HALF
    tail = _erfc(t) * 0.5
    near = np.where(x < _Q_UNDERFLOW, x, 0.0)  # (no overflow in the split; Q is 0 beyond)
    lost = _product_error(near, _SQRT_HALF) + near * _SQRT_HALF_LO
    with np.errstate(under="ignore", over="ignore"):
        return tail - np.exp(-t * t) * lost * _INV_SQRT_PI


#: Up to this many arguments, ``erfc`` is Python's (the same C library function: the
#: same numbers, tests/method/test_pvalues.py), without the cost of a Polars query (about
#: 0.1 ms, four times in a small calibration); more, in one pass of Polars'.
_ONE_BY_ONE = 64


def _erfc(t: _Array) -> _Array:
    """The C library's ``erfc`` of each value of ``t``."""
    if t.size <= _ONE_BY_ONE:
        return np.array([math.erfc(v) for v in t.tolist()], dtype=np.float64).reshape(t.shape)
    import polars as pl

    return pl.Series(t, dtype=pl.Float64).erfc().to_numpy()


#: The factors -(2j - 1) of the Mills-ratio series' terms, j = 1.._MILLS_TERMS (a column).
_MILLS_FACTORS = np.array([-(2.0 * j - 1.0) for j in range(1, _MILLS_TERMS + 1)]).reshape(-1, 1)


def log_q(x: _Array, tail: _Array | None = None) -> _Array:
    """ln Q(x), Q the standard normal upper tail, for x >= 1 (inf allowed).

    Below ``_SERIES`` the logarithm of :func:`q`. From there on the
    asymptotic (Mills-ratio) series ln(phi(x) / x) + ln(sum_j (-1)^j
    (2j - 1)!! / x^(2j)): at x = 30 its term j = 12 is below 1e-24, and
    beyond ``_ASYMPTOTIC`` the sum is 1 to double precision (its first term
    alone is kept, which avoids 1 / x^2 underflowing to a subnormal).
    ``tail``: :func:`q` of ``x``, when the caller has it.
    """
    series = x >= _SERIES
    if not series.any():  # (the usual case: the series' arrays would all be discarded)
        with np.errstate(divide="ignore"):
            return np.log(q(x) if tail is None else tail)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mills = -0.5 * x * x - np.log(x) - _HALF_LN_2PI
        v = 1.0 / np.where(x > _ASYMPTOTIC, np.inf, x * x)
        # term_j = term_(j-1) (-(2j - 1) v) from term_0 = 1, and total = 1 + term_1 + ...,
        # each in order: accumulations down the rows (one row per j), a NumPy call each
        rows = np.vstack([np.ones((1, x.size)), _MILLS_FACTORS * v])
        total = np.add.accumulate(np.multiply.accumulate(rows, axis=0), axis=0)[-1]
        direct = np.log(q(np.where(series, 0.0, x)) if tail is None else tail)
    return np.where(series, mills + np.log(total), direct)
