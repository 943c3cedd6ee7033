"""The groups' side of the kernel: walks over the rows in score order, group by group.

Each walk carries every group's open tie (method.md 1.1) and closes it when
the group's next distinct score arrives; :func:`screen_groups` and
:func:`calibration_groups` sum the closed points into per-group statistics;
:mod:`polars_cumdev.kernel.curves` lays out the groups' curves with the
same walk.
The points of one subpopulation are :mod:`polars_cumdev.kernel.points`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import (
    EPS,
    F64,
    I64,
    JIT,
    TABLE_COLUMNS,
    Array,
    bin_moments,
    last_at_most,
    midpoint,
    weight,
)

__all__ = [
    "calibration_groups",
    "event_terms",
    "merged_response",
    "merged_tie",
    "screen_groups",
    "tie_counts",
]


@njit(**JIT)
def merged_response(tie_w: float, tie_wr: float, tie_first: float, mixed: bool) -> float:
    """R' of a merged tie (method.md 1.1): sum W R / W' when its rows' R differ, else
    their common R, exactly."""
    return tie_wr / tie_w if mixed else tie_first


@njit(**JIT)
def merged_tie(
    tie_w: float, tie_wr: float, tie_ww: float, tie_first: float, mixed: bool, rows: int
) -> tuple[float, float]:
    """R' and f of a merged tie (method.md 1.1; :func:`polars_cumdev.method.ties.merge_ties`)."""
    response = merged_response(tie_w, tie_wr, tie_first, mixed)
    factor = 1.0 if rows == 1 else tie_ww / (tie_w * tie_w)
    return response, factor


# Columns of the per-group output of screen_groups and calibration_groups. EVENTS_3 and
# EVENTS_4 sum w^3 v |1 - 2p| and w^4 v max(1 - 6v, 0) over the group's rows, p the
# reference of the row's point (Rt_k, or the score for calibration) clipped to [0, 1]
# and v = p (1 - p): with SIGMA_B (the sum of w^2 v, times each tie's f) they give the
# group's effective number of events (method/finite_sample.py) with no second look at
# its rows; EVENTS_4 is NaN once a tie's sum of w^4 is below the smallest normal double
# (weights spread over more than about 2^250): not known then.
N_ROWS, N_SCORES, WEIGHT, C_LAST, C_MAX, C_MIN, SIGMA_B, SIGMA_E = range(8)
ERR_C, ERR_B, ERR_E, OVERFLOWS, EVENTS_3, EVENTS_4 = range(8, 14)
GROUP_COLUMNS = 14
_TINY = 2.0**-1022
_ONE = np.zeros(1, dtype=np.int64)  # the starts of no recorded group (read only)

# Columns of the per-group state of the walk: the open tie and where its bin starts.
T_SCORE, T_W, T_WR, T_WW, T_FIRST, T_W3, T_W4 = range(7)  # floats
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
    w3: float,
    w4: float,
) -> None:
    """Add one closed point of group g to its statistics, unnormalized by W_g.

    C_k times W_g is sum_{j<=k} W'_j (R'_j - ref_j), (25)-(28) of M. Tygert,
    "Cumulative deviation of a subpopulation from the full population"; the
    sigma^2 terms (31)-(32) and their error bounds are W'^2 f times the bin's;
    ``w3`` and ``w4``, the tie's sums of W^3 and W^4, times the reference's
    terms give the effective events' (EVENTS_3, EVENTS_4).
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
    third, fourth = event_terms(reference, w3, w4)
    out[g, EVENTS_3] += third
    out[g, EVENTS_4] += fourth


@njit(**JIT)
def event_terms(reference: float, w3: float, w4: float) -> tuple[float, float]:
    """A point's terms of its group's effective events (EVENTS_3, EVENTS_4): its tie's sums
    of W^3 and W^4 times v |1 - 2p| and v max(1 - 6v, 0), p the reference clipped to
    [0, 1] (as the finite-sample step clips its bin means), v = p (1 - p); the second is
    NaN when ``w4`` is below the smallest normal double (not known to its last digits)."""
    p = min(max(reference, 0.0), 1.0)
    v = p * (1.0 - p)
    fourth = w4 * v * max(1.0 - 6.0 * v, 0.0) if w4 >= _TINY else np.nan
    return w3 * v * abs(1.0 - 2.0 * p), fourth


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
    scores: F64,
    table: F64,
    bins: bool,
    wanted: npt.NDArray[np.bool_],
    starts: I64,
    curves: F64,
) -> tuple[F64, I64]:
    """The walk of :func:`screen_groups` (``bins``) or :func:`calibration_groups`.

    ``scores`` and ``table`` are :func:`prefix_table`'s (empty without bins).
    With a non-empty ``wanted``, only the wanted groups are walked, and each
    closed point of group g is written to ``curves[starts[g] + k]``:
    W_g A_k, W_g C_k and S'_k (see :func:`polars_cumdev.kernel.curves.group_curves`).
    """
    recording = wanted.shape[0] > 0
    m = s.shape[0]
    out = np.zeros((groups, GROUP_COLUMNS))
    out[:, C_MAX] = -np.inf
    out[:, C_MIN] = np.inf
    first = np.full(groups, -1, dtype=np.int64)
    tie = np.zeros((groups, 7))
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
            if recording and not wanted[g]:
                continue
            if first[g] < 0:
                first[g] = i
            wi = weight(w, weighted, scale, i)
            ri = float(r[i])
            ww = wi * wi
            if tie[g, T_SCORE] == si:  # one more row of the open tie (method.md 1.1)
                tie[g, T_W] += wi
                tie[g, T_WR] += wi * ri
                tie[g, T_WW] += ww
                tie[g, T_W3] += ww * wi
                tie[g, T_W4] += ww * ww
                if ri != tie[g, T_FIRST]:
                    state[g, T_MIXED] = 1
                state[g, T_ROWS] += 1
                continue
            if np.isnan(tie[g, T_SCORE]):
                upper = -1
            elif bins:  # the open tie's bin ends at its midpoint with si, (6)-(7)
                boundary = midpoint(tie[g, T_SCORE], si)
                upper = last_at_most(scores, boundary, state[g, T_ROW], d - 1)
            else:
                upper = 0
        else:  # after the last row: close every group's last tie (B = +inf)
            g = i - m
            if np.isnan(tie[g, T_SCORE]) or (recording and not wanted[g]):
                continue
            upper = scores.shape[0] - 1 if bins else 0
        if upper >= 0:
            response, factor = merged_tie(
                tie[g, T_W],
                tie[g, T_WR],
                tie[g, T_WW],
                tie[g, T_FIRST],
                state[g, T_MIXED] == 1,
                state[g, T_ROWS],
            )
            if bins:
                ref, var, e_ref, e_bern, e_var, overflow, _, _ = bin_moments(
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
                tie[g, T_W3],
                tie[g, T_W4],
            )
            if recording:
                at = starts[g] + int(out[g, N_SCORES]) - 1
                curves[at, 0] = out[g, WEIGHT]  # (a point's three values side by side:
                curves[at, 1] = out[g, C_LAST]  # one place written per point, not three)
                curves[at, 2] = tie[g, T_SCORE]
        if i < m:
            tie[g, T_SCORE] = si
            tie[g, T_W] = wi
            tie[g, T_WR] = wi * ri
            tie[g, T_WW] = ww
            tie[g, T_FIRST] = ri
            tie[g, T_W3] = ww * wi
            tie[g, T_W4] = ww * ww
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
    scores: F64,
    table: F64,
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
    scores, table
        The full population's distinct scores and compensated running sums,
        ``prefix_table(s, r, w, weighted, scale, centre)`` (computed once by
        the caller, who may walk again with
        :func:`polars_cumdev.kernel.curves.group_curves`).

    Returns
    -------
    tuple
        ``(out, first)``: ``out[g]`` holds, at the indices named by the
        module's constants, the group's rows, merged points, total weight
        W_g (rescaled), and, all still to be divided by W_g (or W_g^2 for
        the sigma terms), C_n, max_k C_k, min_k C_k (k >= 1), the sums of
        W'^2 f Rt (1 - Rt) and W'^2 f V, and the error bounds of
        :func:`polars_cumdev.method.sigma_terms.error_terms`; then the number of
        overflowed bins. ``first[g]`` is the group's first row (-1 if
        absent), to read its keys from.
    """
    nothing = np.zeros(0, dtype=np.bool_)
    return _walk(
        gid,
        offset,
        s,
        r,
        w,
        weighted,
        scale,
        groups,
        centre,
        scores,
        table,
        True,
        nothing,
        _ONE,
        np.zeros((3, 0)),
    )


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
    sums W' (R' - S'), sigma^2 sums W'^2 f S' (1 - S') (50) of M. Tygert,
    "Cumulative deviation of a subpopulation from the full population"; there
    are no bins, hence no error bounds and the empirical column stays 0.
    """
    nothing = np.zeros(0, dtype=np.bool_)
    scores, table = np.empty(0), np.empty((0, TABLE_COLUMNS))
    return _walk(
        gid,
        offset,
        s,
        r,
        w,
        weighted,
        scale,
        groups,
        0.0,
        scores,
        table,
        False,
        nothing,
        _ONE,
        np.zeros((3, 0)),
    )


@njit(**JIT)
def tie_counts(gid: Array, offset: int, s: Array, groups: int) -> I64:
    """Each group's number of merged points (distinct scores), rows sorted by score."""
    counts = np.zeros(groups, dtype=np.int64)
    last = np.full(groups, np.nan)
    for i in range(s.shape[0]):
        g = int(gid[i]) - offset
        si = float(s[i])
        if last[g] != si:
            last[g] = si
            counts[g] += 1
    return counts


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
