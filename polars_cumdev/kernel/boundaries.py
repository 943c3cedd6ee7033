"""Where each tie's bin ends: the first pass of :mod:`polars_cumdev.kernel.events`.

For each row that opens a new tie of its group, the row where the group's
previous tie's bin ends: the last row whose score is at most the midpoint B_k
of the two scores ((6)-(7) of M. Tygert, "Cumulative deviation of a
subpopulation from the full population"; a binary search in the sorted scores
between the two ties). The closing is filed under that row, in a linked list
per row (``heads[t, u]``, ``link[i]``).

A group's closings depend on its own rows only, so on large data the groups
are split between two threads (:mod:`polars_cumdev.kernel.split`, by their
rows, counted in a sample of every 64th row), each filing its groups'
closings in its own list per row (``heads[0]`` and ``heads[1]``). The lists
hold the same closings whatever the split; only the order of closings of
different groups under one row differs, and no sum adds numbers of two
groups, so the results are the same bits.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from polars_cumdev.kernel.prefix import I64, JIT, Array, midpoint
from polars_cumdev.kernel.split import owners

__all__ = ["boundaries", "file_closings"]

_SAMPLE = 64  # every this many rows are counted to split the groups between the threads


@njit(**JIT)
def _last_row_at_most(s: Array, value: float, low: int, high: int) -> int:
    """Largest row u in [low, high] with s[u] <= value (s[low] <= value assumed)."""
    while low < high:
        mid = (low + high + 1) // 2
        if float(s[mid]) <= value:
            low = mid
        else:
            high = mid - 1
    return low


@njit(**JIT)
def boundaries(
    gid: Array,
    offset: int,
    s: Array,
    groups: int,
    head: Array,
    link: Array,
    owner: np.ndarray,
    who: int,
) -> tuple[I64, I64]:
    """File the closings of the groups with ``owner[g] == who`` (see the module).

    ``head`` (length rows, filled with -1 by the caller) and ``link``
    (length rows) receive the linked lists: ``head[u]`` is the last row i
    whose arrival closes a tie at row u, ``link[i]`` the next such row
    (-1: none); the closed tie is that of group ``gid[i]``. Returns
    ``(points, first)``: each group's number of merged points and first row
    (-1 if absent; 0 and -1 for the groups of the other thread).
    """
    m = s.shape[0]
    points = np.zeros(groups, dtype=np.int64)
    first = np.full(groups, -1, dtype=np.int64)
    last = np.zeros(groups)
    tie_row = np.zeros(groups, dtype=np.int64)
    for i in range(m):
        g = int(gid[i]) - offset
        if owner[g] != who:
            continue
        si = float(s[i])
        if first[g] < 0:
            first[g] = i
        elif last[g] == si:
            continue
        else:
            u = _last_row_at_most(s, midpoint(last[g], si), tie_row[g], i - 1)
            link[i] = head[u]
            head[u] = i
        last[g] = si
        tie_row[g] = i
        points[g] += 1
    return points, first


def file_closings(
    gid: np.ndarray, offset: int, s: np.ndarray, groups: int, threads: int = 2
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`boundaries` of every group, on one thread or two (``threads``).

    Returns ``(heads, link, points, first, owner)``: ``heads`` has one row of
    list heads per thread (one or two rows), row t listing the closings of
    the groups with ``owner[g] == t``; ``link``, ``points`` and ``first`` as
    :func:`boundaries`'.
    """
    m = s.shape[0]
    index = np.int32 if m < 2**31 - 1 else np.int64
    two = threads >= 2
    heads = np.full((2 if two else 1, m), -1, dtype=index)
    link = np.empty(m, dtype=index)
    if not two:
        owner = np.zeros(groups, dtype=np.int8)
        points, first = boundaries(gid, offset, s, groups, heads[0], link, owner, 0)
        return heads, link, points, first, owner
    # The groups' shares of the rows, estimated from every 64th row: a balance of the
    # two threads' work needs no exact count (and the results do not depend on it).
    sample = np.bincount(gid[::_SAMPLE].astype(np.int64) - offset, minlength=groups)
    owner = owners(sample.astype(np.int64), 0.5)
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(boundaries, gid, offset, s, groups, heads[1], link, owner, 1)
        points, first = boundaries(gid, offset, s, groups, heads[0], link, owner, 0)
        points_1, first_1 = other.result()
    mine = owner == 1
    points[mine] = points_1[mine]
    first[mine] = first_1[mine]
    return heads, link, points, first, owner
