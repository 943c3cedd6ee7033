"""The drill-down's side of the kernel: the merged points of one subpopulation with their bins.

The walk of :mod:`polars_cumdev.kernel.walks` restricted to one
subpopulation's rows, keeping every point (S'_k, W'_k, R'_k, f_k and the
bin's Rt_k, V_k with their error bounds) instead of summing them.
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
from polars_cumdev.kernel.walks import merged_tie

__all__ = [
    "POINT_COLUMNS",
    "P_BIN_WEIGHT",
    "P_E_BERNOULLI",
    "P_E_REFERENCE",
    "P_E_VARIANCE",
    "P_REFERENCE",
    "P_RESPONSE",
    "P_SCORE",
    "P_TIE",
    "P_VARIANCE",
    "P_WEIGHT",
    "group_points",
]


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
            wi = weight(w, weighted, scale, i)
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
                upper = last_at_most(scores, midpoint(open_score, si), open_row, d - 1)
        else:
            if np.isnan(open_score):
                break
            upper = scores.shape[0] - 1
        if upper >= 0:
            response, factor = merged_tie(tie_w, tie_wr, tie_ww, tie_first, mixed, rows)
            ref, var, e_ref, e_bern, e_var, overflow, bin_w, bin_rows = bin_moments(
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


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
