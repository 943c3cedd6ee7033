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

__all__ = ["calibration_groups", "group_points", "prefix_table", "screen_groups"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

EPS = 2.0**-52
# Float running sums of the prefix table: W, W^2, W r, W r^2 (r = R - c).
STREAMS = 4


@njit(cache=True, nogil=True, error_model="numpy")
def _two_sum(a: float, b: float) -> tuple[float, float]:
    """a + b rounded, and its exact rounding error (Knuth's TwoSum)."""
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


@njit(cache=True, nogil=True, error_model="numpy")
def prefix_table(s: F64, r: F64, w: F64, centre: float) -> tuple[F64, F64, F64, F64, I64]:
    """Compensated running sums of the full population at each distinct score.

    Rows sorted by score. Returns ``(scores, hi, lo, lomax, counts)``, one row
    per distinct score (its last row): ``hi[d, j]`` the running sum of
    stream j, ``lo[d, j]`` the running sum of its TwoSum errors (so that
    hi + lo is the running total to about 2^-106), ``lomax[d, j]`` the largest
    |lo| so far (the bound of :func:`polars_cumdev.bins.difference_error`),
    ``counts[d]`` = (rows, rows with R = 0, rows with R = 1) so far.
    """
    m = s.shape[0]
    distinct = 0
    for i in range(m):
        if i == m - 1 or s[i] != s[i + 1]:
            distinct += 1
    scores = np.empty(distinct)
    hi = np.empty((distinct, STREAMS))
    lo = np.empty((distinct, STREAMS))
    lomax = np.empty((distinct, STREAMS))
    counts = np.empty((distinct, 3), dtype=np.int64)
    run_hi = np.zeros(STREAMS)
    run_lo = np.zeros(STREAMS)
    run_max = np.zeros(STREAMS)
    terms = np.empty(STREAMS)
    zeros = 0
    ones = 0
    d = 0
    for i in range(m):
        rc = r[i] - centre
        terms[0] = w[i]
        terms[1] = w[i] * w[i]
        terms[2] = w[i] * rc
        terms[3] = w[i] * rc * rc
        for j in range(STREAMS):
            run_hi[j], err = _two_sum(run_hi[j], terms[j])
            run_lo[j] += err
            run_max[j] = max(run_max[j], abs(run_lo[j]))
        zeros += r[i] == 0.0
        ones += r[i] == 1.0
        if i == m - 1 or s[i] != s[i + 1]:
            scores[d] = s[i]
            hi[d] = run_hi
            lo[d] = run_lo
            lomax[d] = run_max
            counts[d, 0] = i + 1
            counts[d, 1] = zeros
            counts[d, 2] = ones
            d += 1
    return scores, hi, lo, lomax, counts


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
def _last_at_most(scores: F64, value: float, low: int, high: int) -> int:
    """Largest d in [low, high] with scores[d] <= value (scores[low] <= value assumed)."""
    while low < high:
        mid = (low + high + 1) // 2
        if scores[mid] <= value:
            low = mid
        else:
            high = mid - 1
    return low


@njit(cache=True, nogil=True, error_model="numpy")
def _bin(
    hi: F64, lo: F64, lomax: F64, counts: I64, below: int, upper: int, centre: float
) -> tuple[float, float, float, float, float, bool, float, int]:
    """Rt_k (26), V_k (33) and their error bounds for the bin between prefix rows.

    ``below`` is the prefix row of the bin's lower boundary (-1 for -inf),
    ``upper`` that of its upper boundary. The arithmetic is that of
    :func:`polars_cumdev.bins.bin_moments` with
    :func:`polars_cumdev.bins.difference_error`, operation for operation.
    Returns ``(Rt, V, e_Rt, e_bernoulli, e_V, overflow, bin weight, bin rows)``.
    """
    total = np.empty(STREAMS)
    error = np.empty(STREAMS)
    if below < 0:
        rows = counts[upper, 0]
        zeros = counts[upper, 1]
        ones = counts[upper, 2]
    else:
        rows = counts[upper, 0] - counts[below, 0]
        zeros = counts[upper, 1] - counts[below, 1]
        ones = counts[upper, 2] - counts[below, 2]
    for j in range(STREAMS):
        if below < 0:
            h = hi[upper, j]
            e = lo[upper, j]
        else:
            h = hi[upper, j] - hi[below, j]
            e = lo[upper, j] - lo[below, j]
        total[j] = h + e
        error[j] = EPS * (rows * lomax[upper, j] + (abs(h) + abs(e)))
    bw, bww, bwr, bwrr = total[0], total[1], total[2], total[3]
    e_w, e_ww, e_wr, e_wrr = error[0], error[1], error[2], error[3]
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
    # Error bounds, as in bins.bin_moments.
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
    return reference, variance, e_reference, e_bernoulli, e_variance, overflow, bw, rows


# Columns of the per-group output of screen_groups.
N_ROWS, N_SCORES, WEIGHT, C_LAST, C_MAX, C_MIN, SIGMA_B, SIGMA_E = range(8)
ERR_C, ERR_B, ERR_E, OVERFLOWS = range(8, 12)
GROUP_COLUMNS = 12


@njit(cache=True, nogil=True, error_model="numpy")
def screen_groups(gid: I64, s: F64, r: F64, w: F64, groups: int, centre: float) -> tuple[F64, I64]:
    """Every group's screen statistics in one walk over the rows sorted by score.

    Parameters
    ----------
    gid
        Group number of each row, 0 <= gid < ``groups``.
    s, r, w
        Scores, responses and (rescaled) weights, sorted by score.
    centre
        The centring c of the responses in the prefix sums.

    Returns
    -------
    tuple
        ``(out, first)``: ``out[g]`` holds, at the indices named by the
        module's constants, the group's rows, merged points, total weight
        W_g, and, all still to be divided by W_g (or W_g^2 for the sigma
        terms), C_n, max_k C_k, min_k C_k (k >= 1), the sums of
        W'^2 f Rt (1 - Rt) and W'^2 f V, and the error bounds of
        :func:`polars_cumdev.statistics.error_terms`; then the number of
        overflowed bins. ``first[g]`` is the group's first row (-1 if
        absent), to read its keys from.
    """
    scores, hi, lo, lomax, counts = prefix_table(s, r, w, centre)
    m = s.shape[0]
    out = np.zeros((groups, GROUP_COLUMNS))
    out[:, C_MAX] = -np.inf
    out[:, C_MIN] = np.inf
    first = np.full(groups, -1, dtype=np.int64)
    open_score = np.full(groups, np.nan)  # score of the group's open tie
    open_row = np.zeros(groups, dtype=np.int64)  # prefix row of that score
    below = np.full(groups, -1, dtype=np.int64)  # prefix row of its bin's lower end
    tie_w = np.zeros(groups)
    tie_wr = np.zeros(groups)
    tie_ww = np.zeros(groups)
    tie_first = np.zeros(groups)
    tie_mixed = np.zeros(groups, dtype=np.bool_)
    tie_rows = np.zeros(groups, dtype=np.int64)
    d = 0  # prefix row of the current row's score
    for i in range(m + groups):
        if i < m:
            if i > 0 and s[i] != s[i - 1]:
                d += 1
            g = gid[i]
            if first[g] < 0:
                first[g] = i
            if open_score[g] == s[i]:
                tie_w[g] += w[i]
                tie_wr[g] += w[i] * r[i]
                tie_ww[g] += w[i] * w[i]
                tie_mixed[g] = tie_mixed[g] or r[i] != tie_first[g]
                tie_rows[g] += 1
                continue
            if np.isnan(open_score[g]):
                upper = -1
            else:
                boundary = _midpoint(open_score[g], s[i])
                upper = _last_at_most(scores, boundary, open_row[g], d - 1)
        else:  # after the last row: close every group's last tie with B = +inf
            g = i - m
            if np.isnan(open_score[g]):
                continue
            upper = scores.shape[0] - 1
        if upper >= 0:
            _close(
                g,
                out,
                hi,
                lo,
                lomax,
                counts,
                below[g],
                upper,
                centre,
                tie_w[g],
                tie_wr[g],
                tie_ww[g],
                tie_first[g],
                tie_mixed[g],
                tie_rows[g],
            )
            below[g] = upper
        if i < m:
            open_score[g] = s[i]
            open_row[g] = d
            tie_w[g] = w[i]
            tie_wr[g] = w[i] * r[i]
            tie_ww[g] = w[i] * w[i]
            tie_first[g] = r[i]
            tie_mixed[g] = False
            tie_rows[g] = 1
    return out, first


@njit(cache=True, nogil=True, error_model="numpy")
def _merged(
    tie_w: float, tie_wr: float, tie_ww: float, tie_first: float, mixed: bool, rows: int
) -> tuple[float, float]:
    """R' and f of a merged tie (method.md 1.1; :func:`polars_cumdev.ties.merge_ties`)."""
    response = tie_wr / tie_w if mixed else tie_first
    factor = 1.0 if rows == 1 else tie_ww / (tie_w * tie_w)
    return response, factor


@njit(cache=True, nogil=True, error_model="numpy")
def _close(
    g: int,
    out: F64,
    hi: F64,
    lo: F64,
    lomax: F64,
    counts: I64,
    below: int,
    upper: int,
    centre: float,
    tie_w: float,
    tie_wr: float,
    tie_ww: float,
    tie_first: float,
    mixed: bool,
    rows: int,
) -> None:
    """Add a closed point of group g to its statistics (unnormalized by W_g)."""
    response, factor = _merged(tie_w, tie_wr, tie_ww, tie_first, mixed, rows)
    ref, var, e_ref, e_bern, e_var, overflow, _, _ = _bin(
        hi, lo, lomax, counts, below, upper, centre
    )
    o = out[g]
    o[N_ROWS] += rows
    o[N_SCORES] += 1
    o[WEIGHT] += tie_w
    o[C_LAST] += tie_w * (response - ref)  # W' (R' - Rt): C_k times W_g, (25)-(28)
    o[C_MAX] = max(o[C_MAX], o[C_LAST])
    o[C_MIN] = min(o[C_MIN], o[C_LAST])
    w2f = tie_w * tie_w * factor
    bern = w2f * ref * (1.0 - ref)  # (31)
    emp = w2f * var  # (32)
    o[SIGMA_B] += bern
    o[SIGMA_E] += emp
    o[ERR_C] += tie_w * e_ref
    o[ERR_B] += w2f * e_bern + 8.0 * EPS * abs(bern)
    o[ERR_E] += w2f * e_var + 8.0 * EPS * abs(emp)
    o[OVERFLOWS] += overflow


# Columns of the per-point output of group_points.
P_SCORE, P_WEIGHT, P_RESPONSE, P_TIE, P_REFERENCE, P_VARIANCE = range(6)
P_E_REFERENCE, P_E_BERNOULLI, P_E_VARIANCE, P_BIN_WEIGHT = range(6, 10)
POINT_COLUMNS = 10


@njit(cache=True, nogil=True, error_model="numpy")
def group_points(
    member: npt.NDArray[np.bool_], s: F64, r: F64, w: F64, centre: float
) -> tuple[F64, I64, npt.NDArray[np.bool_]]:
    """The merged points of one subpopulation with their bins (for the drill-down).

    The walk of :func:`screen_groups` for the rows where ``member`` is true,
    returning every point instead of summing them: ``(values, ints, flags)``
    with ``values[k]`` at the module's ``P_*`` indices (S'_k, W'_k, R'_k,
    f_k, Rt_k, V_k, the three error bounds, the bin's weight), ``ints[k]``
    = (rows merged, rows in the bin) and ``flags[k]`` whether the bin's sums
    overflowed. Points are in increasing order of score.
    """
    scores, hi, lo, lomax, counts = prefix_table(s, r, w, centre)
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
            if i > 0 and s[i] != s[i - 1]:
                d += 1
            if not member[i]:
                continue
            if open_score == s[i]:
                tie_w += w[i]
                tie_wr += w[i] * r[i]
                tie_ww += w[i] * w[i]
                mixed = mixed or r[i] != tie_first
                rows += 1
                continue
            if np.isnan(open_score):
                upper = -1
            else:
                upper = _last_at_most(scores, _midpoint(open_score, s[i]), open_row, d - 1)
        else:
            if np.isnan(open_score):
                break
            upper = scores.shape[0] - 1
        if upper >= 0:
            response, factor = _merged(tie_w, tie_wr, tie_ww, tie_first, mixed, rows)
            ref, var, e_ref, e_bern, e_var, overflow, bin_w, bin_rows = _bin(
                hi, lo, lomax, counts, below, upper, centre
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
            open_score = s[i]
            open_row = d
            tie_w = w[i]
            tie_wr = w[i] * r[i]
            tie_ww = w[i] * w[i]
            tie_first = r[i]
            mixed = False
            rows = 1
    return values[:k], ints[:k], flags[:k]


@njit(cache=True, nogil=True, error_model="numpy")
def calibration_groups(gid: I64, s: F64, r: F64, w: F64, groups: int) -> tuple[F64, I64]:
    """Every group's calibration statistics (method.md 2) in one walk by score.

    As :func:`screen_groups`, with the score itself as the reference: C_k
    sums W' (R' - S'), sigma^2 sums W'^2 f S' (1 - S') (50); there are no
    bins, hence no error bounds beyond the exact reference. Same output
    layout (the empirical and error columns stay 0).
    """
    m = s.shape[0]
    out = np.zeros((groups, GROUP_COLUMNS))
    out[:, C_MAX] = -np.inf
    out[:, C_MIN] = np.inf
    first = np.full(groups, -1, dtype=np.int64)
    open_score = np.full(groups, np.nan)
    tie_w = np.zeros(groups)
    tie_wr = np.zeros(groups)
    tie_ww = np.zeros(groups)
    tie_first = np.zeros(groups)
    tie_mixed = np.zeros(groups, dtype=np.bool_)
    tie_rows = np.zeros(groups, dtype=np.int64)
    for i in range(m + groups):
        if i < m:
            g = gid[i]
            if first[g] < 0:
                first[g] = i
            if open_score[g] == s[i]:
                tie_w[g] += w[i]
                tie_wr[g] += w[i] * r[i]
                tie_ww[g] += w[i] * w[i]
                tie_mixed[g] = tie_mixed[g] or r[i] != tie_first[g]
                tie_rows[g] += 1
                continue
        else:
            g = i - m
        if not np.isnan(open_score[g]):
            response, factor = _merged(
                tie_w[g], tie_wr[g], tie_ww[g], tie_first[g], tie_mixed[g], tie_rows[g]
            )
            score = open_score[g]
            o = out[g]
            o[N_ROWS] += tie_rows[g]
            o[N_SCORES] += 1
            o[WEIGHT] += tie_w[g]
            o[C_LAST] += tie_w[g] * (response - score)  # (44)-(47)
            o[C_MAX] = max(o[C_MAX], o[C_LAST])
            o[C_MIN] = min(o[C_MIN], o[C_LAST])
            o[SIGMA_B] += tie_w[g] * tie_w[g] * factor * score * (1.0 - score)  # (50)
        if i < m:
            open_score[g] = s[i]
            tie_w[g] = w[i]
            tie_wr[g] = w[i] * r[i]
            tie_ww[g] = w[i] * w[i]
            tie_first[g] = r[i]
            tie_mixed[g] = False
            tie_rows[g] = 1
    return out, first
