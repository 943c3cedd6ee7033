"""The screen's row-level work in compiled passes (Numba).

The lazy Polars plan of :mod:`polars_cumdev.subpopulation` spends its time in
row-level stages: a second sort by group, window sums for the ties, running
sums over the whole population, an as-of join for the bins. Here the same
arithmetic runs as loops compiled by Numba over the rows already sorted by
score, in two passes:

1. :func:`prefix_table` -- the full population's compensated running sums
   (TwoSum, as :mod:`polars_cumdev.sums`) of W, W^2, W r, W r^2 (r = R - c),
   the exact counts of rows, of R = 0 and of R = 1, and the running maxima of
   the error sums, kept at the last row of each distinct score
   (:func:`polars_cumdev.bins.full_population_prefix`);
2. :func:`screen_groups` -- one walk over the rows in score order carrying
   every group's open tie (method.md 1.1: W', R', f summed directly over the
   tie), closing it when the group's next distinct score arrives: its upper
   midpoint B_k (6)-(7), found in the prefix table by binary search, gives
   the bin's sums as a difference of two prefix rows, then Rt_k (26), V_k
   (33) and their error bounds (:func:`polars_cumdev.bins.bin_moments`), and
   the point's contributions to the group's C_k (25)-(28), its extremes
   (12)-(13), sigma^2 (31)-(32) and their error bounds
   (:func:`polars_cumdev.statistics.error_terms`). Nothing per point is
   stored: memory is the prefix table (one row per distinct score) and one
   state per group.

:func:`group_points` is the same walk for one subpopulation, returning its
points with their bins (for the drill-down curve); :func:`calibration_groups`
the walk without bins (method.md 2). The glue to Polars is in
:mod:`polars_cumdev.compiled`; the kernel and the plan agree to 1e-12
(``tests/test_kernel.py``), differing only in the order of some additions.

Division follows IEEE 754 (``error_model="numpy"``: x / 0 is inf or NaN,
as in Polars, never a Python exception), and no fast-math reordering is
allowed: the compensated sums depend on every rounding happening as written.
Functions are compiled on first use and cached on disk (``cache=True``:
beside this file, or in Numba's user-wide cache directory when that is not
writable; ``NUMBA_CACHE_DIR`` overrides both).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

__all__ = [
    "calibration_groups",
    "group_points",
    "prefix_table",
    "response_facts",
    "screen_groups",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
Array = npt.NDArray[np.generic]  # a column of any numeric type, read as doubles

EPS = 2.0**-52
# Float running sums of the prefix table: W, W^2, W r, W r^2 (r = R - c).
STREAMS = 4
JIT = {"cache": True, "nogil": True, "error_model": "numpy"}


@njit(**JIT)
def _two_sum(a: float, b: float) -> tuple[float, float]:
    """a + b rounded, and its exact rounding error (Knuth's TwoSum)."""
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


@njit(**JIT)
def _w(w: Array, weighted: bool, scale: float, i: int) -> float:
    """Row i's weight, rescaled exactly (:func:`polars_cumdev.weights.rescale`).

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
    bound of :func:`polars_cumdev.bins.difference_error`), then the counts of
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
        wi = _w(w, weighted, scale, i)
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
    """Whether every response is 0 or 1 (the Bernoulli sigma (31) applies), and max |R|."""
    binary = True
    largest = 0.0
    for i in range(r.shape[0]):
        ri = float(r[i])
        binary = binary and (ri == 0.0 or ri == 1.0)
        largest = max(largest, abs(ri))
    return binary, largest


@njit(**JIT)
def _midpoint(lower: float, upper: float) -> float:
    """B_k between consecutive distinct scores (:func:`polars_cumdev.bins.midpoint`)."""
    total = lower + upper
    if np.isfinite(total):
        half = total / 2.0
    else:
        half = lower / 2.0 + upper / 2.0
    if half >= upper or half < lower:
        return lower
    return half


@njit(**JIT)
def _last_at_most(scores: F64, value: float, low: int, high: int) -> int:
    """Largest d in [low, high] with scores[d] <= value (scores[low] <= value assumed)."""
    while low < high:
        mid = (low + high + 1) // 2
        if scores[mid] <= value:
            low = mid
        else:
            high = mid - 1
    return low


@njit(**JIT)
def _bin_sum(table: F64, below: int, upper: int, j: int, rows: float) -> tuple[float, float]:
    """A bin's total of stream j and its error bound (``bins.difference_error``)."""
    if below < 0:
        h = table[upper, HI + j]
        e = table[upper, LO + j]
    else:
        h = table[upper, HI + j] - table[below, HI + j]
        e = table[upper, LO + j] - table[below, LO + j]
    return h + e, EPS * (rows * table[upper, LOMAX + j] + (abs(h) + abs(e)))


@njit(**JIT)
def _bin(
    table: F64, below: int, upper: int, centre: float
) -> tuple[float, float, float, float, float, bool, float, int]:
    """Rt_k (26), V_k (33) and their error bounds for the bin between prefix rows.

    ``below`` is the prefix row of the bin's lower boundary (-1 for -inf),
    ``upper`` that of its upper boundary. The arithmetic is that of
    :func:`polars_cumdev.bins.bin_moments`, operation for operation.
    Returns ``(Rt, V, e_Rt, e_bernoulli, e_V, overflow, bin weight, bin rows)``.
    """
    rows = table[upper, ROWS]
    zeros = table[upper, ZEROS]
    ones = table[upper, ONES]
    if below >= 0:
        rows -= table[below, ROWS]
        zeros -= table[below, ZEROS]
        ones -= table[below, ONES]
    bw, e_w = _bin_sum(table, below, upper, 0, rows)
    bww, e_ww = _bin_sum(table, below, upper, 1, rows)
    bwr, e_wr = _bin_sum(table, below, upper, 2, rows)
    bwrr, e_wrr = _bin_sum(table, below, upper, 3, rows)
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


@njit(**JIT)
def _merged(
    tie_w: float, tie_wr: float, tie_ww: float, tie_first: float, mixed: bool, rows: int
) -> tuple[float, float]:
    """R' and f of a merged tie (method.md 1.1; :func:`polars_cumdev.ties.merge_ties`)."""
    response = tie_wr / tie_w if mixed else tie_first
    factor = 1.0 if rows == 1 else tie_ww / (tie_w * tie_w)
    return response, factor


# Columns of the per-group output of screen_groups and calibration_groups.
N_ROWS, N_SCORES, WEIGHT, C_LAST, C_MAX, C_MIN, SIGMA_B, SIGMA_E = range(8)
ERR_C, ERR_B, ERR_E, OVERFLOWS = range(8, 12)
GROUP_COLUMNS = 12
# Columns of the per-group state of the walk: the open tie and where its bin starts.
T_SCORE, T_W, T_WR, T_WW, T_FIRST = range(5)  # floats
T_ROW, T_BELOW, T_ROWS, T_MIXED = range(4)  # integers


@njit(**JIT)
def _accumulate(
    out: F64,
    g: int,
    weight: float,
    response: float,
    factor: float,
    rows: int,
    reference: float,
    variance: float,
    e_ref: float,
    e_bern: float,
    e_var: float,
    overflow: bool,
) -> None:
    """Add one closed point of group g to its statistics, unnormalized by W_g.

    C_k times W_g is sum_{j<=k} W'_j (R'_j - ref_j), (25)-(28); the sigma^2
    terms (31)-(32) and their error bounds are W'^2 f times the bin's.
    """
    out[g, N_ROWS] += rows
    out[g, N_SCORES] += 1
    out[g, WEIGHT] += weight
    c = out[g, C_LAST] + weight * (response - reference)
    out[g, C_LAST] = c
    out[g, C_MAX] = max(out[g, C_MAX], c)
    out[g, C_MIN] = min(out[g, C_MIN], c)
    w2f = weight * weight * factor
    bern = w2f * reference * (1.0 - reference)
    emp = w2f * variance
    out[g, SIGMA_B] += bern
    out[g, SIGMA_E] += emp
    out[g, ERR_C] += weight * e_ref
    out[g, ERR_B] += w2f * e_bern + 8.0 * EPS * abs(bern)
    out[g, ERR_E] += w2f * e_var + 8.0 * EPS * abs(emp)
    out[g, OVERFLOWS] += overflow


@njit(**JIT)
def _walk(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    groups: int,
    centre: float,
    bins: bool,
) -> tuple[F64, I64]:
    """The walk of :func:`screen_groups` (``bins``) or :func:`calibration_groups`."""
    if bins:
        scores, table = prefix_table(s, r, w, weighted, scale, centre)
    else:
        scores, table = np.empty(0), np.empty((0, TABLE_COLUMNS))
    m = s.shape[0]
    out = np.zeros((groups, GROUP_COLUMNS))
    out[:, C_MAX] = -np.inf
    out[:, C_MIN] = np.inf
    first = np.full(groups, -1, dtype=np.int64)
    tie = np.zeros((groups, 5))
    tie[:, T_SCORE] = np.nan
    state = np.zeros((groups, 4), dtype=np.int64)
    state[:, T_BELOW] = -1
    d = 0  # prefix row of the current row's score
    for i in range(m + groups):
        if i < m:
            si = float(s[i])
            if i > 0 and s[i] != s[i - 1]:
                d += 1
            g = int(gid[i]) - offset
            if first[g] < 0:
                first[g] = i
            wi = _w(w, weighted, scale, i)
            ri = float(r[i])
            if tie[g, T_SCORE] == si:  # one more row of the open tie (method.md 1.1)
                tie[g, T_W] += wi
                tie[g, T_WR] += wi * ri
                tie[g, T_WW] += wi * wi
                if ri != tie[g, T_FIRST]:
                    state[g, T_MIXED] = 1
                state[g, T_ROWS] += 1
                continue
            if np.isnan(tie[g, T_SCORE]):
                upper = -1
            elif bins:  # the open tie's bin ends at its midpoint with si, (6)-(7)
                boundary = _midpoint(tie[g, T_SCORE], si)
                upper = _last_at_most(scores, boundary, state[g, T_ROW], d - 1)
            else:
                upper = 0
        else:  # after the last row: close every group's last tie (B = +inf)
            g = i - m
            if np.isnan(tie[g, T_SCORE]):
                continue
            upper = scores.shape[0] - 1 if bins else 0
        if upper >= 0:
            response, factor = _merged(
                tie[g, T_W],
                tie[g, T_WR],
                tie[g, T_WW],
                tie[g, T_FIRST],
                state[g, T_MIXED] == 1,
                state[g, T_ROWS],
            )
            if bins:
                ref, var, e_ref, e_bern, e_var, overflow, _, _ = _bin(
                    table, state[g, T_BELOW], upper, centre
                )
                state[g, T_BELOW] = upper
            else:  # calibration: the score itself is the reference, (44)-(47)
                ref, var, e_ref, e_bern, e_var, overflow = (
                    tie[g, T_SCORE],
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    False,
                )
            _accumulate(
                out,
                g,
                tie[g, T_W],
                response,
                factor,
                state[g, T_ROWS],
                ref,
                var,
                e_ref,
                e_bern,
                e_var,
                overflow,
            )
        if i < m:
            tie[g, T_SCORE] = si
            tie[g, T_W] = wi
            tie[g, T_WR] = wi * ri
            tie[g, T_WW] = wi * wi
            tie[g, T_FIRST] = ri
            state[g, T_ROW] = d
            state[g, T_ROWS] = 1
            state[g, T_MIXED] = 0
    return out, first


@njit(**JIT)
def screen_groups(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    groups: int,
    centre: float,
) -> tuple[F64, I64]:
    """Every group's screen statistics in one walk over the rows sorted by score.

    Parameters
    ----------
    gid, offset
        Group number of each row plus ``offset`` (any integer type), so
        that 0 <= gid - offset < ``groups``.
    s, r, w
        Scores, responses and weights, sorted by score (any numeric types).
    weighted, scale
        Whether ``w`` holds the weights (else every row weighs 1), and the
        power of two they are multiplied by.
    groups
        Number of group numbers.
    centre
        The centring c of the responses in the prefix sums.

    Returns
    -------
    tuple
        ``(out, first)``: ``out[g]`` holds, at the indices named by the
        module's constants, the group's rows, merged points, total weight
        W_g (rescaled), and, all still to be divided by W_g (or W_g^2 for
        the sigma terms), C_n, max_k C_k, min_k C_k (k >= 1), the sums of
        W'^2 f Rt (1 - Rt) and W'^2 f V, and the error bounds of
        :func:`polars_cumdev.statistics.error_terms`; then the number of
        overflowed bins. ``first[g]`` is the group's first row (-1 if
        absent), to read its keys from.
    """
    return _walk(gid, offset, s, r, w, weighted, scale, groups, centre, True)


@njit(**JIT)
def calibration_groups(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    groups: int,
) -> tuple[F64, I64]:
    """Every group's calibration statistics (method.md 2) in one walk by score.

    As :func:`screen_groups`, with the score itself as the reference: C_k
    sums W' (R' - S'), sigma^2 sums W'^2 f S' (1 - S') (50); there are no
    bins, hence no error bounds and the empirical column stays 0.
    """
    return _walk(gid, offset, s, r, w, weighted, scale, groups, 0.0, False)


# Columns of the per-point output of group_points.
P_SCORE, P_WEIGHT, P_RESPONSE, P_TIE, P_REFERENCE, P_VARIANCE = range(6)
P_E_REFERENCE, P_E_BERNOULLI, P_E_VARIANCE, P_BIN_WEIGHT = range(6, 10)
POINT_COLUMNS = 10


@njit(**JIT)
def group_points(
    member: npt.NDArray[np.bool_],
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    centre: float,
) -> tuple[F64, I64, npt.NDArray[np.bool_]]:
    """The merged points of one subpopulation with their bins (for the drill-down).

    The walk of :func:`screen_groups` for the rows where ``member`` is true,
    returning every point instead of summing them: ``(values, ints, flags)``
    with ``values[k]`` at the module's ``P_*`` indices (S'_k, W'_k, R'_k,
    f_k, Rt_k, V_k, the three error bounds, the bin's weight), ``ints[k]``
    = (rows merged, rows in the bin) and ``flags[k]`` whether the bin's sums
    overflowed. Points are in increasing order of score.
    """
    scores, table = prefix_table(s, r, w, weighted, scale, centre)
    m = s.shape[0]
    size = 0
    for i in range(m):
        size += member[i]
    values = np.empty((size, POINT_COLUMNS))
    ints = np.empty((size, 2), dtype=np.int64)
    flags = np.empty(size, dtype=np.bool_)
    k = 0
    open_score = np.nan
    open_row = 0
    below = -1
    tie_w = tie_wr = tie_ww = tie_first = 0.0
    mixed = False
    rows = 0
    d = 0
    for i in range(m + 1):
        if i < m:
            si = float(s[i])
            if i > 0 and s[i] != s[i - 1]:
                d += 1
            if not member[i]:
                continue
            wi = _w(w, weighted, scale, i)
            ri = float(r[i])
            if open_score == si:
                tie_w += wi
                tie_wr += wi * ri
                tie_ww += wi * wi
                mixed = mixed or ri != tie_first
                rows += 1
                continue
            if np.isnan(open_score):
                upper = -1
            else:
                upper = _last_at_most(scores, _midpoint(open_score, si), open_row, d - 1)
        else:
            if np.isnan(open_score):
                break
            upper = scores.shape[0] - 1
        if upper >= 0:
            response, factor = _merged(tie_w, tie_wr, tie_ww, tie_first, mixed, rows)
            ref, var, e_ref, e_bern, e_var, overflow, bin_w, bin_rows = _bin(
                table, below, upper, centre
            )
            values[k, P_SCORE] = open_score
            values[k, P_WEIGHT] = tie_w
            values[k, P_RESPONSE] = response
            values[k, P_TIE] = factor
            values[k, P_REFERENCE] = ref
            values[k, P_VARIANCE] = var
            values[k, P_E_REFERENCE] = e_ref
            values[k, P_E_BERNOULLI] = e_bern
            values[k, P_E_VARIANCE] = e_var
            values[k, P_BIN_WEIGHT] = bin_w
            ints[k, 0] = rows
            ints[k, 1] = bin_rows
            flags[k] = overflow
            k += 1
            below = upper
        if i < m:
            open_score = si
            open_row = d
            tie_w = wi
            tie_wr = wi * ri
            tie_ww = wi * wi
            tie_first = ri
            mixed = False
            rows = 1
    return values[:k], ints[:k], flags[:k]
