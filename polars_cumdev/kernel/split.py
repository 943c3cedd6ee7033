"""Splitting a walk's groups between two threads, so that each does its share.

A group's points are closed one after another, from its own state only (its
open tie, its previous closing, its sums): two threads may close the points
of disjoint sets of groups at the same time, each group's additions staying
in the same order. The results are then the same bits on one thread or two,
whichever thread a group is given to. :func:`owners` gives each group a
thread (0: the calling thread, 1: the second one) so that the calling thread
closes about ``share`` of the points.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from polars_cumdev.kernel.curves import calibration_curves, divide_by_weight, tie_scores
from polars_cumdev.kernel.location import stretches
from polars_cumdev.kernel.prefix import I64, JIT, TABLE_COLUMNS, Array
from polars_cumdev.kernel.walks import _walk

__all__ = [
    "TWO_THREADS",
    "calibration_walk",
    "on_threads",
    "owners",
    "split_stretches",
    "split_tie_scores",
]

#: Fewest rows for which the walks use a second thread (below, one walks everything).
TWO_THREADS = 1 << 20


def on_threads(pool: ThreadPoolExecutor, function: Callable[..., None], jobs: list) -> None:
    """``function(*job)`` for every job: the first on the calling thread, the others on ``pool``.

    The drivers of the passes cut into slices of rows or groups (the radix
    sort's, :func:`polars_cumdev.method.score_order.sorted_in_slices`; the
    bucket sort's, :mod:`polars_cumdev.kernel.bucketsort`) run their slices
    through it; each job writes its own part of the output.
    """
    others = [pool.submit(function, *job) for job in jobs[1:]]
    function(*jobs[0])
    for future in others:
        future.result()


@njit(**JIT)
def owners(points: I64, share: float) -> np.ndarray:
    """Each group's thread: 0 for about ``share`` of the points, 1 for the rest.

    Greedy, largest group first (ties by group number): each group goes to
    the thread whose load over its target is then the smaller. Deterministic, and the results do
    not depend on it anyway (see the module).
    """
    groups = points.shape[0]
    owner = np.ones(groups, dtype=np.int8)
    if share <= 0.0:
        return owner
    order = np.argsort(-points, kind="mergesort")
    load0 = 0.0
    load1 = 0.0
    for j in range(groups):
        g = order[j]
        p = float(points[g])
        if (load0 + p) * (1.0 - share) <= (load1 + p) * share:  # (no division by a 0 target)
            owner[g] = 0
            load0 += p
        else:
            load1 += p
    return owner


@njit(**JIT)
def _calibration_share(
    gid: Array,
    offset: int,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    groups: int,
    starts: I64,
    curves: np.ndarray,
    mine: np.ndarray,
) -> tuple[np.ndarray, I64]:
    """The walk of :func:`calibration_curves` for the groups of ``mine`` only."""
    scores, table = np.empty(0), np.empty((0, TABLE_COLUMNS))
    return _walk(
        gid, offset, s, r, w, weighted, scale, groups, 0.0, scores, table, False, mine, starts,
        curves,
    )  # fmt: skip


def calibration_walk(
    gid: np.ndarray,
    offset: int,
    s: np.ndarray,
    r: np.ndarray,
    w: np.ndarray,
    weighted: bool,
    scale: float,
    groups: int,
    starts: np.ndarray,
    threads: int = 2,
    divided: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`polars_cumdev.kernel.calibration_curves` on one thread or two (``threads``).

    On two, each thread walks all rows and closes the points of its groups
    (split by their points, :func:`owners`); the results are the same bits.
    With ``divided``, the columns A_k and C_k of the curves are divided by
    the group's W_g (in place).
    """
    if threads < 2:
        out, first, curves = calibration_curves(
            gid, offset, s, r, w, weighted, scale, groups, starts
        )
        if divided:
            divide_by_weight(out, starts, curves)
        return out, first, curves
    owner = owners(np.diff(starts), 0.5)  # (by points, known already: no pass over the rows)
    curves = np.empty((starts[-1], 3))
    columns = (gid, offset, s, r, w, weighted, scale, groups, starts, curves)
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(_calibration_share, *columns, owner == 1)
        out, first = _calibration_share(*columns, owner == 0)
        out_1, first_1 = other.result()
    mine = owner == 1
    out[mine] = out_1[mine]
    first[mine] = first_1[mine]
    if divided:
        divide_by_weight(out, starts, curves)
    return out, first, curves


def split_stretches(
    starts: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    thresholds: np.ndarray,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`polars_cumdev.kernel.stretches` on one thread or two.

    ``threads`` None: two from :data:`TWO_THREADS` points. On two, each
    thread searches the curves of its groups (split by their points; the
    other thread's thresholds are NaN, which :func:`stretches` skips): the
    same stretches, group by group.
    """
    if threads is None:
        threads = 2 if a.shape[0] >= TWO_THREADS else 1
    if threads < 2:
        return stretches(starts, a, c, thresholds)
    searched = np.where(thresholds > 0.0, np.diff(starts), 0).astype(np.int64)
    mine = owners(searched, 0.5) == 1
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(stretches, starts, a, c, np.where(mine, thresholds, np.nan))
        lower, upper = stretches(starts, a, c, np.where(mine, np.nan, thresholds))
        lower_1, upper_1 = other.result()
    lower[mine] = lower_1[mine]
    upper[mine] = upper_1[mine]
    return lower, upper


def split_tie_scores(
    gid: np.ndarray,
    offset: int,
    s: np.ndarray,
    wanted: np.ndarray,
    points: np.ndarray,
    threads: int | None = None,
) -> np.ndarray:
    """:func:`polars_cumdev.kernel.curves.tie_scores` on one thread or two.

    ``points`` is each group's number of merged points. ``threads`` None:
    two from :data:`TWO_THREADS` rows. On two, each thread looks for the
    points of its groups (split by the points of the groups with some point
    wanted) and passes over the other groups' rows: the same scores.
    """
    if threads is None:
        threads = 2 if s.shape[0] >= TWO_THREADS else 1
    if threads < 2:
        return tie_scores(gid, offset, s, wanted)
    asked = (wanted >= 0).any(axis=1)
    mine = (owners(np.where(asked, points, 0).astype(np.int64), 0.5) == 1)[:, None]
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(tie_scores, gid, offset, s, np.where(mine, wanted, -1))
        found = tie_scores(gid, offset, s, np.where(mine, -1, wanted))
        return np.where(mine, other.result(), found)


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
# Compiled with kernel/walks.py's _walk inlined (with the effective events' sums since
# 2026-11-30): editing this line invalidates a cache compiled with an older walk.
