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

import numpy as np
from numba import njit

from polars_cumdev.kernel.prefix import I64, JIT

__all__ = ["FLUSH_COST", "main_share", "owners"]

#: Time to close one point over the time to carry the running sums past one row
#: (:mod:`polars_cumdev.kernel.events`; measured at 1e7 rows, continuous scores).
FLUSH_COST = 2.6


def main_share(rows: int, points: int) -> float:
    """The calling thread's share of the closings when it also walks the rows.

    The calling thread carries the running sums over ``rows`` rows (cost
    ``rows``) and closes a share ``a`` of the ``points`` (cost ``FLUSH_COST``
    each); the second thread closes the rest. Balanced when
    ``rows + a X = (1 - a) X`` with ``X = FLUSH_COST * points``.
    """
    if points <= 0:
        return 0.0
    return max(0.0, 0.5 - rows / (2.0 * FLUSH_COST * points))


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
