"""Every group's curve laid out by the walk: the points the located stretch is searched in.

:func:`calibration_curves` is calibration's walk keeping every group's curve
as it goes; :func:`group_curves` walks again for chosen groups (the screen
through the prefix table, or calibration). A curve has a row per merged
point k of a group: W_g A_k, W_g C_k (the running sums of W'_j and of
W'_j (R'_j - ref_j), (25)-(28) of M. Tygert, "Cumulative deviation of a
subpopulation from the full population") and S'_k, group g's rows from
``starts[g]``. :func:`divide_by_weight` then divides the first two columns
by the group's W_g; the screen's events walk
(:mod:`polars_cumdev.kernel.events`) writes its curves the same way. A
point's three values sit side by side, so that the walk, which writes the
points of a thousand groups in turn, writes one place per point rather than
three (calibration's walk on two threads: about 0.03 s less at 1e7 rows).
The screen's events walk keeps only W_g A_k and W_g C_k (two columns): the
scores of the few points a located stretch ends at are found afterwards by
:func:`tie_scores`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import F64, I64, JIT, TABLE_COLUMNS, Array
from polars_cumdev.kernel.walks import WEIGHT, _walk

__all__ = ["calibration_curves", "divide_by_weight", "group_curves", "tie_scores"]


@njit(**JIT)
def group_curves(
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
) -> F64:
    """The curves of the ``wanted`` groups, walked again (for their located stretch).

    ``starts[g]`` is where group g's points go (its merged points, as
    counted by the first walk, follow); rows of other groups are skipped.
    Returns ``curves`` with columns W_g A_k, W_g C_k (sums of W'_j and of
    W'_j (R'_j - ref_j) up to point k, not yet divided by the group's total
    weight W_g) and S'_k, a row per point. With ``bins``, ``scores`` and ``table`` are the
    prefix table given to :func:`screen_groups` (its walk, again); without,
    empty arrays and the walk is :func:`calibration_groups`'.
    """
    curves = np.empty((starts[-1], 3))
    _walk(
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
        bins,
        wanted,
        starts,
        curves,
    )
    return curves


@njit(**JIT)
def calibration_curves(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    groups: int,
    starts: I64,
) -> tuple[F64, I64, F64]:
    """:func:`calibration_groups` that also lays out every group's curve in the same walk.

    ``starts`` are the groups' offsets from :func:`tie_counts`; returns
    ``(out, first, curves)`` with ``curves`` as :func:`group_curves`'
    (W_g A_k, W_g C_k, S'_k, not yet divided by W_g), so that the located
    stretch needs no second walk.
    """
    everyone = np.ones(groups, dtype=np.bool_)
    scores, table = np.empty(0), np.empty((0, TABLE_COLUMNS))
    curves = np.empty((starts[-1], 3))
    out, first = _walk(
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
        everyone,
        starts,
        curves,
    )
    return out, first, curves


@njit(**JIT)
def divide_by_weight(out: F64, starts: I64, curves: F64) -> None:
    """Columns W_g A_k and W_g C_k of every group's curve divided by its W_g, in place.

    ``curves`` as :func:`group_curves`' (a row per point, group g's at
    ``starts[g]`` on); ``out`` holds each group's W_g.
    """
    for g in range(out.shape[0]):
        total = out[g, WEIGHT]
        for k in range(starts[g], starts[g + 1]):
            curves[k, 0] /= total
            curves[k, 1] /= total


@njit(**JIT)
def tie_scores(gid: Array, offset: int, s: Array, wanted: I64) -> F64:
    """The scores S'_k of chosen merged points: ``wanted[g, j]`` is a point k of group g.

    Rows sorted by score; group g's merged point k is its k-th run of equal
    scores (from 0), whose score is that of its first row, as the walks
    record it. Returns an array shaped as ``wanted``, NaN where ``wanted``
    is negative. One pass over the rows, each group counting its runs, and
    only until every wanted point is found (the rows of groups with none
    wanted are skipped).
    """
    groups, ends = wanted.shape
    found = np.full((groups, ends), np.nan)
    count = np.zeros(groups, dtype=np.int64)
    last = np.full(groups, np.nan)
    latest = np.full(groups, -1, dtype=np.int64)  # the last point wanted of each group
    remaining = 0
    for g in range(groups):
        for j in range(ends):
            latest[g] = max(latest[g], wanted[g, j])
            remaining += wanted[g, j] >= 0
    for i in range(s.shape[0]):
        if remaining == 0:
            break
        g = int(gid[i]) - offset
        si = float(s[i])
        if latest[g] < count[g] or last[g] == si:  # (NaN at a group's first row: a new run)
            continue
        last[g] = si
        k = count[g]
        count[g] = k + 1
        for j in range(ends):
            if wanted[g, j] == k:
                found[g, j] = si
                remaining -= 1
    return found


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
# Compiled with kernel/walks.py's _walk inlined (with the effective events' sums since
# 2026-11-30): editing this line invalidates a cache compiled with an older walk.
