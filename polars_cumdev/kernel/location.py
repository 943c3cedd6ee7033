"""Where the deviation is: the shortest stretch of a curve that rises (or falls) enough.

For a group's curve C_0 = 0, C_1, ..., C_n against A_0 = 0, A_1, ..., A_n
(equations (25)-(28) of M. Tygert, "Cumulative deviation of a subpopulation from
the full population"), the Kuiper statistic D = max C - min C is a rise when the
minimum comes first and a fall otherwise. The located stretch is the shortest
one, measured in A, whose rise (or fall) is at least a threshold T (the library
uses T = D - 2 sigma): the points i < j minimizing A_j - A_i subject to
C_j - C_i >= T (or C_i - C_j >= T).

For each j, the best i is the latest one with C_i <= C_j - T. A point i is
never the latest such point while a later point i' < j has C_i' <= C_i, so
the candidates form a stack of points whose C increase with their index
(every new point pops the ones above it that are not lower); the latest
candidate whose rise C_j - C_i reaches T is found by binary search in the
stack (the rise, computed as that difference, falls monotonically along
it). One pass, O(n log n), per group.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polars_cumdev.kernel.prefix import F64, I64, JIT

__all__ = ["stretches", "stretches_from"]


@njit(**JIT)
def _value(c: F64, start: int, k: int, sign: float, c0: float) -> float:
    """sign * C_k of a group whose points start at ``start``; k = -1 is the origin (C = c0)."""
    return sign * c0 if k < 0 else sign * c[start + k]


@njit(**JIT)
def _position(a: F64, start: int, k: int, a0: float) -> float:
    """A_k; ``a0`` at the origin (k = -1)."""
    return a0 if k < 0 else a[start + k]


@njit(**JIT)
def _search(
    a: F64, c: F64, start: int, n: int, sign: float, threshold: float, a0: float, c0: float, stack
) -> tuple[int, int]:
    """The shortest stretch of one curve (origin at (a0, c0)), as (lower, upper); upper -1: none."""
    lower, upper = -1, -1
    size = 0
    best = np.inf
    for j in range(-1, n):
        value = _value(c, start, j, sign, c0)
        # The rise from a stack entry, value - V, falls as V grows along the
        # stack: binary search for the last entry whose rise reaches T.
        if size > 0 and value - _value(c, start, stack[0], sign, c0) >= threshold:
            low, high = 0, size - 1
            while low < high:
                mid = (low + high + 1) // 2
                if value - _value(c, start, stack[mid], sign, c0) >= threshold:
                    low = mid
                else:
                    high = mid - 1
            i = stack[low]
            length = _position(a, start, j, a0) - _position(a, start, i, a0)
            if length < best:
                best, lower, upper = length, i, j
        while size > 0 and _value(c, start, stack[size - 1], sign, c0) >= value:
            size -= 1
        stack[size] = j
        size += 1
    return lower, upper


@njit(**JIT)
def stretches(starts: I64, a: F64, c: F64, thresholds: F64) -> tuple[I64, I64]:
    """The located stretch of every group.

    Parameters
    ----------
    starts
        Offsets of the groups' points in ``a`` and ``c`` (length groups + 1);
        the origin (A_0 = C_0 = 0) is implicit, before each group's first
        point.
    a, c
        A_k and C_k of every point, group after group, in order.
    thresholds
        T of each group; a group whose T is not positive (or NaN) gets none.

    Returns
    -------
    tuple of arrays
        ``(lower, upper)`` per group: the stretch runs from point ``lower``
        (exclusive; -1 is the origin) to point ``upper`` (inclusive), local
        indices within the group; ``upper`` is -1 when there is none.
    """
    groups = starts.shape[0] - 1
    signs = np.ones(groups)
    for g in range(groups):
        # Rise or fall: which of D's extremes (first occurrences) comes first.
        top, bottom = 0.0, 0.0
        at_top, at_bottom = -1, -1
        for k in range(starts[g], starts[g + 1]):
            value = c[k]
            if value > top:
                top, at_top = value, k
            if value < bottom:
                bottom, at_bottom = value, k
        signs[g] = 1.0 if at_bottom < at_top else -1.0
    origins = np.zeros(groups)
    return stretches_from(starts, a, c, origins, origins, signs, thresholds)


@njit(**JIT)
def stretches_from(
    starts: I64, a: F64, c: F64, origin_a: F64, origin_c: F64, signs: F64, thresholds: F64
) -> tuple[I64, I64]:
    """:func:`stretches` of pieces of curves: the origin and the sign given.

    Each group's points follow an explicit start point (``origin_a``,
    ``origin_c``: the point before them on the whole curve, whose index is
    -1 in the result), and its sign (+1 for a rise) is the whole curve's,
    not found from the piece. The range-partitioned screen searches each
    range's piece of a curve this way
    (:mod:`polars_cumdev.engines.partitioned.locating`).
    """
    groups = starts.shape[0] - 1
    lower = np.full(groups, -1, dtype=np.int64)
    upper = np.full(groups, -1, dtype=np.int64)
    largest = 0
    for g in range(groups):
        largest = max(largest, starts[g + 1] - starts[g])
    stack = np.empty(largest + 1, dtype=np.int64)
    for g in range(groups):
        start, n, threshold = starts[g], starts[g + 1] - starts[g], thresholds[g]
        if n == 0 or not threshold > 0.0:
            continue
        lower[g], upper[g] = _search(
            a, c, start, n, signs[g], threshold, origin_a[g], origin_c[g], stack
        )
    return lower, upper
