"""Where each tie's bin ends: the first pass of :mod:`polars_cumdev.kernel.events`.

For each row that opens a new tie of its group, the row where the group's
previous tie's bin ends: the last row whose score is at most the midpoint B_k
of the two scores ((6)-(7) of M. Tygert, "Cumulative deviation of a
subpopulation from the full population"; a binary search in the sorted scores
between the two ties, :data:`SIDE_BY_SIDE` searches at once). The closing is
filed under that row, in a linked list per row (``heads[t, u]``, ``link[i]``).

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


# Searches run side by side (:func:`_last_rows_at_most`); at 1e7 rows 8 took 0.31 s
# on one thread, 4 0.38, 16 0.34, 64 0.39 (a batch waits for its longest search).
SIDE_BY_SIDE = 8


@njit(**JIT)
def _last_rows_at_most(s: Array, values: np.ndarray, bases: I64, lengths: I64, count: int) -> None:
    """Each of ``count`` searches: the last row u in its range with s[u] <= its value.

    Search x looks in rows ``bases[x]`` to ``bases[x] + lengths[x] - 1``,
    assuming ``s[bases[x]] <= values[x]``; its answer replaces ``bases[x]``.
    The searches halve their ranges in lock step, the comparison choosing the
    next base without a branch. A lone binary search waits on each read in
    turn: about 52 ns a search at 1e7 rows, though its rows are mostly in
    cache (the boundaries took 0.60 s on one thread, 0.08 s of them outside
    the searches). Side by side the reads overlap: 0.31 s.
    """
    longest = 0
    for x in range(count):
        longest = max(longest, lengths[x])
    while longest > 1:
        for x in range(count):
            half = lengths[x] // 2  # 0 once a search is done: it then stays
            probe = bases[x] + half
            bases[x] = probe if float(s[probe]) <= values[x] else bases[x]
            lengths[x] -= half
        longest -= longest // 2


@njit(**JIT)
def _file(
    s: Array,
    arrivals: I64,
    values: np.ndarray,
    bases: I64,
    lengths: I64,
    pending: int,
    head: Array,
    link: Array,
) -> None:
    """Search the ``pending`` closings at once, then file each under its row (``head``)."""
    _last_rows_at_most(s, values, bases, lengths, pending)
    for x in range(pending):
        u = bases[x]
        link[arrivals[x]] = head[u]
        head[u] = arrivals[x]


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
    arrivals = np.empty(SIDE_BY_SIDE, dtype=np.int64)  # the pending searches' rows i
    values = np.empty(SIDE_BY_SIDE)
    bases = np.empty(SIDE_BY_SIDE, dtype=np.int64)
    lengths = np.empty(SIDE_BY_SIDE, dtype=np.int64)
    pending = 0
    for i in range(m):
        g = int(gid[i]) - offset
        if owner[g] != who:
            continue
        si = float(s[i])
        if first[g] < 0:
            first[g] = i
        elif last[g] == si:
            continue
        else:  # the previous tie's bin ends at the last row <= B_k, in [tie_row[g], i - 1]
            arrivals[pending] = i
            values[pending] = midpoint(last[g], si)
            bases[pending] = tie_row[g]
            lengths[pending] = i - tie_row[g]
            pending += 1
        last[g] = si
        tie_row[g] = i
        points[g] += 1
        if pending == SIDE_BY_SIDE:
            _file(s, arrivals, values, bases, lengths, pending, head, link)
            pending = 0
    _file(s, arrivals, values, bases, lengths, pending, head, link)
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


# Compiled with kernel/prefix.py midpoint inlined (subnormal halves rounded down since
# issue 37): editing this line invalidates a cache compiled with an older midpoint.
