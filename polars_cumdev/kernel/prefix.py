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
    if abs(total) < 2.0**-1021 and half * 2.0 > total:  # subnormal half: rounded down
        half -= 2.0**-1074
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
    h: float, e: float, lowest: float, low_h: float, low_e: float, inside: bool, rows: float
) -> tuple[float, float]:
    """A bin's total of a stream and its error bound (``bins.difference_error``).

    ``h``, ``e`` and ``lowest`` are the stream's running sum, error sum and
    largest error at the bin's upper boundary, ``low_h`` and ``low_e`` the
    sums at its lower one, subtracted only when it is ``inside`` the data.
    """
    h = h - low_h if inside else h
    e = e - low_e if inside else e
    return h + e, EPS * (rows * lowest + (abs(h) + abs(e)))


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
def bin_totals(
    top: F64, upper: int, bottom: F64, below: int
) -> tuple[float, float, float, float, float, float, float, float, float, float, float]:
    """A bin's totals between two prefix rows, with the bounds of their rounding errors.

    ``top[upper]`` is the prefix row (the running sums, as a row of
    :func:`prefix_table`) at the bin's upper boundary, ``bottom[below]`` the
    one at its lower boundary (``below`` -1: the bin starts at -inf).
    Returns ``(W, W^2, W r, W r^2, their four bounds, rows, zeros, ones)``
    (:func:`polars_cumdev.method.bins.difference_error`), the arguments of
    :func:`moments_of`.
    """
    # Every value is read whether or not the bin starts at -inf (then at row 0,
    # unused), and the case only chooses among them: arrays read inside a branch
    # made Numba count references on each call (atomic operations), which took
    # more than half of the screen's closing of a point.
    inside = below >= 0
    low = max(below, 0)
    rows, low_rows = top[upper, ROWS], bottom[low, ROWS]
    zeros, low_zeros = top[upper, ZEROS], bottom[low, ZEROS]
    ones, low_ones = top[upper, ONES], bottom[low, ONES]
    rows = rows - low_rows if inside else rows
    zeros = zeros - low_zeros if inside else zeros
    ones = ones - low_ones if inside else ones
    t, b = upper, low
    bw, e_w = _bin_sum(
        top[t, HI], top[t, LO], top[t, LOMAX], bottom[b, HI], bottom[b, LO], inside, rows
    )
    bww, e_ww = _bin_sum(
        top[t, HI + 1], top[t, LO + 1], top[t, LOMAX + 1],
        bottom[b, HI + 1], bottom[b, LO + 1], inside, rows,
    )  # fmt: skip
    bwr, e_wr = _bin_sum(
        top[t, HI + 2], top[t, LO + 2], top[t, LOMAX + 2],
        bottom[b, HI + 2], bottom[b, LO + 2], inside, rows,
    )  # fmt: skip
    bwrr, e_wrr = _bin_sum(
        top[t, HI + 3], top[t, LO + 3], top[t, LOMAX + 3],
        bottom[b, HI + 3], bottom[b, LO + 3], inside, rows,
    )  # fmt: skip
    return bw, bww, bwr, bwrr, e_w, e_ww, e_wr, e_wrr, rows, zeros, ones


@njit(**JIT)
def moments_of(
    bw: float,
    bww: float,
    bwr: float,
    bwrr: float,
    e_w: float,
    e_ww: float,
    e_wr: float,
    e_wrr: float,
    rows: float,
    zeros: float,
    ones: float,
    centre: float,
) -> tuple[float, float, float, float, float, bool]:
    """Rt_k (26), V_k (33) and their error bounds from a bin's totals (:func:`bin_totals`).

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population". The arithmetic is that of
    :func:`polars_cumdev.method.bins.bin_moments`, operation for operation.
    Every quantity is computed and the cases (a pure bin, one row, a total
    without a correct digit) only choose among them: about a sixth faster in
    the screen's walk than branching on them, with the same bits.
    Returns ``(Rt, V, e_Rt, e_bernoulli, e_V, overflow)``.
    """
    all_ones = ones == rows
    all_zeros = zeros == rows
    pure = all_ones | all_zeros
    mean_c = bwr / bw
    second = bwrr / bw
    spread = second - mean_c * mean_c
    square = bw * bw
    denominator = square - bww
    unbias = square / denominator if rows > 1 else 0.0
    reference = 1.0 if all_ones else (0.0 if all_zeros else centre + mean_c)
    variance = 0.0 if pure else unbias * spread
    finite = np.isfinite(bw) & np.isfinite(bww) & np.isfinite(bwr) & np.isfinite(bwrr)
    overflow = not finite
    e_mean = (e_wr + abs(mean_c) * e_w) / bw + EPS * abs(mean_c)
    lost = e_w >= bw  # the bin's weight keeps no correct digit
    e_reference = 0.0 if pure else (np.inf if lost else e_mean + EPS * abs(reference))
    product = reference * (1.0 - reference)
    bernoulli = e_reference * (1.0 + e_reference) + EPS * (abs(reference) + abs(product))
    e_bernoulli = 0.0 if pure else bernoulli
    e_spread = (
        (e_wrr + abs(second) * e_w) / bw
        + 2.0 * abs(mean_c) * e_mean
        + e_mean * e_mean
        + 2.0 * EPS * (abs(second) + mean_c * mean_c)
    )
    e_denominator = 2.0 * EPS * (square + bww) + 2.0 * bw * e_w + e_w * e_w + e_ww
    e_unbias = e_denominator / (denominator - e_denominator) + 2.0 * e_w / bw + 2.0 * EPS
    propagated = unbias * e_spread + abs(variance) * e_unbias + EPS * abs(variance)
    unresolved = lost | (denominator <= e_denominator)
    e_variance = 0.0 if pure | (rows <= 1) else (np.inf if unresolved else propagated)
    return reference, variance, e_reference, e_bernoulli, e_variance, overflow


@njit(**JIT)
def moments_between(
    top: F64, upper: int, bottom: F64, below: int, centre: float
) -> tuple[float, float, float, float, float, bool, float, int]:
    """Rt_k (26), V_k (33) and their error bounds for the bin between two prefix rows.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population". :func:`bin_totals`, then
    :func:`moments_of`.
    Returns ``(Rt, V, e_Rt, e_bernoulli, e_V, overflow, bin weight, bin rows)``.
    """
    bw, bww, bwr, bwrr, e_w, e_ww, e_wr, e_wrr, rows, zeros, ones = bin_totals(
        top, upper, bottom, below
    )
    ref, var, e_ref, e_bern, e_var, overflow = moments_of(
        bw, bww, bwr, bwrr, e_w, e_ww, e_wr, e_wrr, rows, zeros, ones, centre
    )
    return ref, var, e_ref, e_bern, e_var, overflow, bw, int(rows)
