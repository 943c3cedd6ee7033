"""One score range of the partitioned screen, in the kernel.

The compiled form of :func:`polars_cumdev.engines.partitioned.range_step`.

A range's rows, sorted by score, are walked as in :func:`screen_groups` with
the range's own prefix table, but what each group's *cell* (its points in
the range) reports follows the partitioned screen's split
(:mod:`polars_cumdev.engines.partitioned`): the first point's weight, response, tie
factor and the prefix row at its upper midpoint; the last point's, with the
prefix row at its lower midpoint (its bins reach across ranges and are
finished by :func:`polars_cumdev.engines.partitioned.combine`); and for the points
between, the sum, running maximum and minimum of W'_k (R'_k - Rt_k), the
sigma sums with W'_k in place of a_k, their error bounds and the
overflowed bins. Given the groups it wants, it walks only theirs and lists
their points: the second pass of the partitioned screen
(:func:`polars_cumdev.engines.partitioned.range_points`) reads the flagged
groups' curves from that list instead of sorting and binning the rows again.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import (
    F64,
    I64,
    JIT,
    Array,
    bin_moments,
    last_at_most,
    midpoint,
    prefix_table,
    weight,
)
from polars_cumdev.kernel.walks import event_terms, merged_tie

__all__ = [
    "CELL_FLOATS",
    "CELL_INTS",
    "LISTED_COLUMNS",
    "first_rows",
    "grouped_order",
    "range_cells",
]

# Float columns of a cell.
(
    C_WEIGHT,
    C_F_W,
    C_F_R,
    C_F_TIE,
    C_L_W,
    C_L_R,
    C_L_TIE,
    C_Q_SUM,
    C_Q_MAX,
    C_Q_MIN,
    C_S_B,
    C_S_E,
    C_E_C,
    C_E_B,
    C_E_E,
    C_S_3,
    C_S_4,
    C_F_W3,
    C_F_W4,
    C_L_W3,
    C_L_W4,
) = range(21)
CELL_FLOATS = 21
# (C_S_3, C_S_4: the interior points' terms of the effective events,
# :func:`polars_cumdev.kernel.walks.event_terms`; C_F_W3 ... C_L_W4: the sums of W^3
# and W^4 of the first and last points' ties, whose terms need their bins' means.)
# Integer columns of a cell: rows, points, overflowed interior bins, the
# prefix row at the first point's upper midpoint, at the last point's lower
# one (-1: none, the cell has one point), the first row (for the keys), and
# the positions in the cell of the first interior maximum and minimum of the
# running sum (-1: no interior point).
C_N, C_N_SCORES, C_OVERFLOWS, C_F_UP, C_L_LO, C_FIRST, C_Q_AT_MAX, C_Q_AT_MIN = range(8)
CELL_INTS = 8
# Columns of a listed point, each running over its cell: its score S'_k, the
# weight up to it (sum of W'_j, j <= k), the sum of the steps W'_j (R'_j - Rt_j)
# up to it (over the interior points: the bins of a cell's first and last
# points reach across ranges) and its place in the cell (1, 2, ...).
L_SCORE, L_WEIGHT, L_STEPS, L_PLACE = range(4)
LISTED_COLUMNS = 4


@njit(**JIT)
def first_rows(gid: Array, offset: int, groups: int) -> I64:
    """Per group number, its first row (-1: no row); stops once every group is found."""
    first = np.full(groups, -1, dtype=np.int64)
    found = 0
    for i in range(gid.shape[0]):
        g = int(gid[i]) - offset
        if first[g] < 0:
            first[g] = i
            found += 1
            if found == groups:
                break
    return first


@njit(**JIT)
def grouped_order(owners: I64, groups: int) -> I64:
    """The order putting each group's entries together, by group number (a stable counting sort)."""
    starts = np.zeros(groups + 1, dtype=np.int64)
    for i in range(owners.shape[0]):
        starts[owners[i] + 1] += 1
    for g in range(groups):
        starts[g + 1] += starts[g]
    order = np.empty(owners.shape[0], dtype=np.int64)
    for i in range(owners.shape[0]):
        g = owners[i]
        order[starts[g]] = i
        starts[g] += 1
    return order


@njit(**JIT)
def _list(
    owners: I64, points: F64, at: int, g: int, score: float, floats: F64, ints: I64, steps: float
) -> None:
    """List group g's point just closed (its cell's running columns are up to date)."""
    owners[at] = g
    points[at, L_SCORE] = score
    points[at, L_WEIGHT] = floats[g, C_WEIGHT]
    points[at, L_STEPS] = steps
    points[at, L_PLACE] = ints[g, C_N_SCORES]


@njit(**JIT)
def range_cells(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    scale: float,
    groups: int,
    centre: float,
    queries: F64,
    wanted: npt.NDArray[np.bool_],
) -> tuple[F64, I64, F64, F64, I64, I64, F64]:
    """The cells of one range and the prefix rows answering its queries.

    Parameters
    ----------
    gid, offset, groups
        Group numbers of the rows (0 <= gid - offset < groups).
    s, r, w
        The range's scores, responses and weights, sorted by score.
    scale, centre
        The plan's weight scale and centring c.
    queries
        Midpoints routed to this range.
    wanted
        Per group number, whether to walk the group and list its points;
        empty (the first pass): every group, no list. (The cells of the
        groups not wanted are left empty, but for ``ints[g, C_FIRST]``.)

    Returns
    -------
    tuple
        ``(floats, ints, scores, table, answers, owners, points)``: per group
        number, the cell's float and integer columns (``ints[g, C_FIRST]`` is
        -1 for a group absent from the range); the range's prefix table
        (:func:`prefix_table`); for each query, the prefix row of the last
        score at most its midpoint (-1: below the range's first score); with
        ``wanted``, every wanted point's group number and its :data:`LISTED_COLUMNS`
        columns, each group's points in increasing order of score (the
        groups interleaved).
    """
    scores, table = prefix_table(s, r, w, True, scale, centre)
    m = s.shape[0]
    floats = np.zeros((groups, CELL_FLOATS))
    floats[:, C_Q_MAX] = -np.inf
    floats[:, C_Q_MIN] = np.inf
    ints = np.zeros((groups, CELL_INTS), dtype=np.int64)
    ints[:, C_L_LO] = -1
    ints[:, C_FIRST] = -1
    ints[:, C_Q_AT_MAX] = -1
    ints[:, C_Q_AT_MIN] = -1
    open_score = np.full(groups, np.nan)
    open_row = np.zeros(groups, dtype=np.int64)
    below = np.full(groups, -1, dtype=np.int64)
    tie_w = np.zeros(groups)
    tie_wr = np.zeros(groups)
    tie_ww = np.zeros(groups)
    tie_w3 = np.zeros(groups)
    tie_w4 = np.zeros(groups)
    tie_first = np.zeros(groups)
    tie_mixed = np.zeros(groups, dtype=np.bool_)
    tie_rows = np.zeros(groups, dtype=np.int64)
    q = np.zeros(groups)  # running sum of the interior W' (R' - Rt)
    record = wanted.shape[0] > 0
    owners = np.empty(m if record else 0, dtype=np.int64)
    points = np.empty((m if record else 0, LISTED_COLUMNS))
    listed = 0
    d = 0
    for i in range(m):
        si = float(s[i])
        if i > 0 and s[i] != s[i - 1]:
            d += 1
        g = int(gid[i]) - offset
        if ints[g, C_FIRST] < 0:
            ints[g, C_FIRST] = i
        if record and not wanted[g]:
            continue
        wi = weight(w, True, scale, i)
        ri = float(r[i])
        ints[g, C_N] += 1
        ww = wi * wi
        if open_score[g] == si:
            tie_w[g] += wi
            tie_wr[g] += wi * ri
            tie_ww[g] += ww
            tie_w3[g] += ww * wi
            tie_w4[g] += ww * ww
            tie_mixed[g] = tie_mixed[g] or ri != tie_first[g]
            tie_rows[g] += 1
            continue
        if not np.isnan(open_score[g]):  # close the open point: first or interior
            upper = last_at_most(scores, midpoint(open_score[g], si), open_row[g], d - 1)
            response, factor = merged_tie(
                tie_w[g], tie_wr[g], tie_ww[g], tie_first[g], tie_mixed[g], tie_rows[g]
            )
            floats[g, C_WEIGHT] += tie_w[g]
            if ints[g, C_N_SCORES] == 0:
                floats[g, C_F_W] = tie_w[g]
                floats[g, C_F_R] = response
                floats[g, C_F_TIE] = factor
                floats[g, C_F_W3] = tie_w3[g]
                floats[g, C_F_W4] = tie_w4[g]
                ints[g, C_F_UP] = upper
            else:
                ref, var, e_ref, e_bern, e_var, overflow, _, _ = bin_moments(
                    table, below[g], upper, centre
                )
                step = tie_w[g] * (response - ref)
                q[g] += step
                floats[g, C_Q_SUM] += step
                if q[g] > floats[g, C_Q_MAX]:
                    floats[g, C_Q_MAX] = q[g]
                    ints[g, C_Q_AT_MAX] = ints[g, C_N_SCORES]
                if q[g] < floats[g, C_Q_MIN]:
                    floats[g, C_Q_MIN] = q[g]
                    ints[g, C_Q_AT_MIN] = ints[g, C_N_SCORES]
                w2f = tie_w[g] * tie_w[g] * factor
                floats[g, C_S_B] += w2f * ref * (1.0 - ref)
                floats[g, C_S_E] += w2f * var
                floats[g, C_E_C] += tie_w[g] * e_ref
                floats[g, C_E_B] += w2f * e_bern
                floats[g, C_E_E] += w2f * e_var
                third, fourth = event_terms(ref, tie_w3[g], tie_w4[g])
                floats[g, C_S_3] += third
                floats[g, C_S_4] += fourth
                ints[g, C_OVERFLOWS] += overflow
            ints[g, C_N_SCORES] += 1
            below[g] = upper
            if record:
                _list(owners, points, listed, g, open_score[g], floats, ints, q[g])
                listed += 1
        open_score[g] = si
        open_row[g] = d
        tie_w[g] = wi
        tie_wr[g] = wi * ri
        tie_ww[g] = ww
        tie_w3[g] = ww * wi
        tie_w4[g] = ww * ww
        tie_first[g] = ri
        tie_mixed[g] = False
        tie_rows[g] = 1
    last_row = scores.shape[0] - 1
    for g in range(groups):  # every open point is its cell's last one
        if np.isnan(open_score[g]):
            continue
        response, factor = merged_tie(
            tie_w[g], tie_wr[g], tie_ww[g], tie_first[g], tie_mixed[g], tie_rows[g]
        )
        floats[g, C_WEIGHT] += tie_w[g]
        floats[g, C_L_W] = tie_w[g]
        floats[g, C_L_R] = response
        floats[g, C_L_TIE] = factor
        floats[g, C_L_W3] = tie_w3[g]
        floats[g, C_L_W4] = tie_w4[g]
        if ints[g, C_N_SCORES] == 0:  # a single point: it is the first one too
            floats[g, C_F_W] = tie_w[g]
            floats[g, C_F_R] = response
            floats[g, C_F_TIE] = factor
            floats[g, C_F_W3] = tie_w3[g]
            floats[g, C_F_W4] = tie_w4[g]
            ints[g, C_F_UP] = last_row
        else:
            ints[g, C_L_LO] = below[g]
        ints[g, C_N_SCORES] += 1
        if record:
            _list(owners, points, listed, g, open_score[g], floats, ints, q[g])
            listed += 1
    answers = np.empty(queries.shape[0], dtype=np.int64)
    for k in range(queries.shape[0]):
        if scores.shape[0] == 0 or queries[k] < scores[0]:
            answers[k] = -1
        else:
            answers[k] = last_at_most(scores, queries[k], 0, last_row)
    return floats, ints, scores, table, answers, owners[:listed], points[:listed]


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
