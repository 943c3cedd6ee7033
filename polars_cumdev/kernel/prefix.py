"""The full population's side of the kernel: prefix sums, and a bin from two of their rows.

:func:`prefix_table` is the compiled form of
:func:`polars_cumdev.method.bins.full_population_prefix`, :func:`_bin` of
:func:`polars_cumdev.method.bins.bin_moments` with
:func:`polars_cumdev.method.bins.difference_error`, operation for operation.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel._cache import CACHE

__all__ = [
    "EPS",
    "JIT",
    "TABLE_COLUMNS",
    "bin_moments",
    "last_at_most",
    "midpoint",
    "moments_between",
    "prefix_table",
    "response_facts",
    "weight",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Array = npt.NDArray[np.generic]  # a column of any numeric type, read as doubles

EPS = 2.0**-52
# Float running sums of the prefix table: W, W^2, W r, W r^2 (r = R - c).
STREAMS = 4
JIT = {"cache": CACHE, "nogil": True, "error_model": "numpy"}


@njit(**JIT)
def _two_sum(a: float, b: float) -> tuple[float, float]:
    """a + b rounded, and its exact rounding error (Knuth's TwoSum)."""
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


@njit(**JIT)
def weight(w: Array, weighted: bool, scale: float, i: int) -> float:
    """Row i's weight, rescaled exactly (:func:`polars_cumdev.method.weights.rescale`).

    Without weights every row weighs 1, rescaled like any weight.
    """
    return float(w[i]) * scale if weighted else scale


# Columns of the prefix table: the running sums (hi), their error sums (lo),
# the largest |lo| so far, and the counts of rows, of R = 0 and of R = 1
# (exact in a double up to 2^53 rows). One row of it spans two cache lines.
HI, LO, LOMAX = 0, STREAMS, 2 * STREAMS
ROWS, ZEROS, ONES = 3 * STREAMS, 3 * STREAMS + 1, 3 * STREAMS + 2
TABLE_COLUMNS = 3 * STREAMS + 3


@njit(**JIT)
def prefix_table(
    s: Array, r: Array, w: Array, weighted: bool, scale: float, centre: float
) -> tuple[F64, F64]:
    """Compensated running sums of the full population at each distinct score.

    Rows sorted by score. Returns ``(scores, table)``, one row per distinct
    score (its last row): at ``HI + j`` the running sum of stream j, at
    ``LO + j`` the running sum of its TwoSum errors (hi + lo is the running
    total to about 2^-106), at ``LOMAX + j`` the largest |lo| so far (the
    bound of :func:`polars_cumdev.method.bins.difference_error`), then the counts of
    rows, of R = 0 and of R = 1 so far.
    """
    m = s.shape[0]
    distinct = 0
    for i in range(m):
        if i == m - 1 or s[i] != s[i + 1]:
            distinct += 1
    scores = np.empty(distinct)
    table = np.empty((distinct, TABLE_COLUMNS))
    h0 = h1 = h2 = h3 = 0.0
    l0 = l1 = l2 = l3 = 0.0
    m0 = m1 = m2 = m3 = 0.0
    zeros = 0
    ones = 0
    d = 0
    for i in range(m):
        wi = weight(w, weighted, scale, i)
        ri = float(r[i])
        rc = ri - centre
        wr = wi * rc
        h0, e = _two_sum(h0, wi)
        l0 += e
        h1, e = _two_sum(h1, wi * wi)
        l1 += e
        h2, e = _two_sum(h2, wr)
        l2 += e
        h3, e = _two_sum(h3, wr * rc)
        l3 += e
        m0 = max(m0, abs(l0))
        m1 = max(m1, abs(l1))
        m2 = max(m2, abs(l2))
        m3 = max(m3, abs(l3))
        zeros += ri == 0.0
        ones += ri == 1.0
        if i == m - 1 or s[i] != s[i + 1]:
            scores[d] = float(s[i])
            row = table[d]
            row[HI], row[HI + 1], row[HI + 2], row[HI + 3] = h0, h1, h2, h3
            row[LO], row[LO + 1], row[LO + 2], row[LO + 3] = l0, l1, l2, l3
            row[LOMAX], row[LOMAX + 1], row[LOMAX + 2], row[LOMAX + 3] = m0, m1, m2, m3
            row[ROWS] = i + 1
            row[ZEROS] = zeros
            row[ONES] = ones
            d += 1
    return scores, table


@njit(**JIT)
def response_facts(r: Array) -> tuple[bool, float]:
    """Whether every response is 0 or 1 (the Bernoulli sigma (31) applies), and max |R|.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".
    """
    binary = True
    largest = 0.0
    for i in range(r.shape[0]):
        ri = float(r[i])
        binary = binary and (ri == 0.0 or ri == 1.0)
        largest = max(largest, abs(ri))
    return binary, largest


@njit(**JIT)
def midpoint(lower: float, upper: float) -> float:
    """B_k between consecutive distinct scores (:func:`polars_cumdev.method.bins.midpoint`)."""
    total = lower + upper
    if np.isfinite(total):
        half = total / 2.0
    else:
        half = lower / 2.0 + upper / 2.0
    if half >= upper or half < lower:
        return lower
    return half


@njit(**JIT)
def last_at_most(scores: F64, value: float, low: int, high: int) -> int:
    """Largest d in [low, high] with scores[d] <= value (scores[low] <= value assumed)."""
    while low < high:
        mid = (low + high + 1) // 2
        if scores[mid] <= value:
            low = mid
        else:
            high = mid - 1
    return low


@njit(**JIT)
def _bin_sum(
    top: F64, upper: int, bottom: F64, below: int, j: int, rows: float
) -> tuple[float, float]:
    """A bin's total of stream j and its error bound (``bins.difference_error``)."""
    if below >= 0:
        h = top[upper, HI + j] - bottom[below, HI + j]
        e = top[upper, LO + j] - bottom[below, LO + j]
    else:
        h = top[upper, HI + j]
        e = top[upper, LO + j]
    return h + e, EPS * (rows * top[upper, LOMAX + j] + (abs(h) + abs(e)))


@njit(**JIT)
def bin_moments(
    table: F64, below: int, upper: int, centre: float
) -> tuple[float, float, float, float, float, bool, float, int]:
    """Rt_k (26), V_k (33) and their error bounds for the bin between prefix rows.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    ``below`` is the prefix row of the bin's lower boundary (-1 for -inf),
    ``upper`` that of its upper boundary: :func:`moments_between` within
    one table.
    """
    return moments_between(table, upper, table, below, centre)


@njit(**JIT)
def moments_between(
    top: F64, upper: int, bottom: F64, below: int, centre: float
) -> tuple[float, float, float, float, float, bool, float, int]:
    """Rt_k (26), V_k (33) and their error bounds for the bin between two prefix rows.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    ``top[upper]`` is the prefix row (the running sums, as a row of
    :func:`prefix_table`) at the bin's upper boundary, ``bottom[below]`` the
    one at its lower boundary (``below`` -1: the bin starts at -inf). The
    arithmetic is that of :func:`polars_cumdev.method.bins.bin_moments`, operation
    for operation.
    Returns ``(Rt, V, e_Rt, e_bernoulli, e_V, overflow, bin weight, bin rows)``.
    """
    rows = top[upper, ROWS]
    zeros = top[upper, ZEROS]
    ones = top[upper, ONES]
    if below >= 0:
        rows -= bottom[below, ROWS]
        zeros -= bottom[below, ZEROS]
        ones -= bottom[below, ONES]
    bw, e_w = _bin_sum(top, upper, bottom, below, 0, rows)
    bww, e_ww = _bin_sum(top, upper, bottom, below, 1, rows)
    bwr, e_wr = _bin_sum(top, upper, bottom, below, 2, rows)
    bwrr, e_wrr = _bin_sum(top, upper, bottom, below, 3, rows)
    pure = ones == rows or zeros == rows
    mean_c = bwr / bw
    second = bwrr / bw
    spread = second - mean_c * mean_c
    square = bw * bw
    denominator = square - bww
    unbias = square / denominator if rows > 1 else 0.0
    if ones == rows:
        reference = 1.0
    elif zeros == rows:
        reference = 0.0
    else:
        reference = centre + mean_c
    variance = 0.0 if pure else unbias * spread
    overflow = not (np.isfinite(bw) and np.isfinite(bww) and np.isfinite(bwr) and np.isfinite(bwrr))
    e_mean = (e_wr + abs(mean_c) * e_w) / bw + EPS * abs(mean_c)
    if pure:
        e_reference = 0.0
    elif e_w >= bw:
        e_reference = np.inf
    else:
        e_reference = e_mean + EPS * abs(reference)
    product = reference * (1.0 - reference)
    if pure:
        e_bernoulli = 0.0
    else:
        e_bernoulli = e_reference * (1.0 + e_reference) + EPS * (abs(reference) + abs(product))
    e_spread = (
        (e_wrr + abs(second) * e_w) / bw
        + 2.0 * abs(mean_c) * e_mean
        + e_mean * e_mean
        + 2.0 * EPS * (abs(second) + mean_c * mean_c)
    )
    e_denominator = 2.0 * EPS * (square + bww) + 2.0 * bw * e_w + e_w * e_w + e_ww
    if pure or rows <= 1:
        e_variance = 0.0
    elif e_w >= bw or denominator <= e_denominator:
        e_variance = np.inf
    else:
        e_unbias = e_denominator / (denominator - e_denominator) + 2.0 * e_w / bw + 2.0 * EPS
        e_variance = unbias * e_spread + abs(variance) * e_unbias + EPS * abs(variance)
    return reference, variance, e_reference, e_bernoulli, e_variance, overflow, bw, int(rows)
