"""Rows of equal score put in a canonical order after a sort by score alone.

The compiled node sorts the rows by score only (one key: on tie-heavy data a
sort by score, weight and response cost a quarter to a half more) and this
pass then orders each run of equal scores by weight, then response, as
:func:`polars_cumdev.method.ties.sort_by_score` does in one sort. Every sum
over a tie or a bin then adds the same values in the same order whatever the
order of the input rows (rows equal in all three columns are interchangeable
in every sum), so the results are the same bits.

On continuous scores there are no runs and the pass is one read of the
scores; runs already in order are left as they are. A run out of order is
read once into two unsigned keys per row, ordered as the values
(:func:`polars_cumdev.kernel.ranks.key` of the weight, and of the response;
without weights, the response's key and 0), and sorted stably by them
(:func:`_sort_run`): counting passes on the leading bits in which the keys
of a stretch differ, as many buckets as rows, until every stretch is short,
then one insertion pass. The order is that of float comparisons (-0.0 and
0.0 are one key; NaN is refused before), stable by row.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import I64, JIT, Array
from polars_cumdev.kernel.ranks import FLOAT, key
from polars_cumdev.kernel.split import TWO_THREADS

__all__ = ["tie_order"]

U64 = npt.NDArray[np.uint64]
#: Work space of the runs (:func:`_room`): keys, their order, spare order, bucket counts, stack.
Room = tuple[U64, U64, I64, I64, I64, I64]

#: Stretches of at most this many rows are left to the final insertion pass.
SHORT = 16
#: Most bits of a bucket number in one counting pass (as many buckets as rows up to this).
_MOST_BITS = 11


@njit(**JIT)
def _in_order(w: Array, r: Array, weighted: bool, begin: int, end: int) -> bool:
    """Whether rows begin..end-1 are in increasing order of (weight, response)."""
    for i in range(begin + 1, end):
        wa = float(w[i - 1]) if weighted else 0.0
        wb = float(w[i]) if weighted else 0.0
        if wa > wb or (wa == wb and float(r[i - 1]) > float(r[i])):
            return False
    return True


@njit(**JIT, inline="always")
def _key(x: float) -> np.uint64:
    """The order-preserving key of a double (:func:`polars_cumdev.kernel.ranks.key`)."""
    return key(np.float64(x).view(np.uint64), FLOAT)


@njit(**JIT)
def _bit_length(x: np.uint64) -> int:
    """Number of bits of x (0 for 0)."""
    bits = 0
    while x:
        x >>= np.uint64(1)
        bits += 1
    return bits


@njit(**JIT)
def _spread(
    keys: U64, place: I64, spare: I64, counts: I64, low: int, high: int, least: np.uint64,
    most: np.uint64,
) -> int:  # fmt: skip
    """One stable counting pass of ``place[low:high]`` on the leading bits of their keys.

    ``keys[place[t]]`` lie between ``least`` and ``most`` (not equal); the
    bucket of a key is its difference from ``least`` cut to at most
    :data:`_MOST_BITS` bits, about one bucket per row. ``spare`` is work
    space. Returns the number of buckets; ``counts[d]`` is then the end of
    bucket d, counted from ``low``.
    """
    width = min(max(_bit_length(np.uint64(high - low - 1)), 1), _MOST_BITS)
    shift = np.uint64(max(_bit_length(most - least) - width, 0))
    buckets = int((most - least) >> shift) + 1
    for d in range(buckets + 1):
        counts[d] = 0
    for t in range(low, high):
        counts[int((keys[place[t]] - least) >> shift) + 1] += 1
    for d in range(1, buckets):
        counts[d] += counts[d - 1]
    for t in range(low, high):
        p = place[t]
        d = int((keys[p] - least) >> shift)
        spare[counts[d]] = p
        counts[d] += 1
    for t in range(high - low):
        place[low + t] = spare[t]
    return buckets


@njit(**JIT)
def _split(
    first: U64, second: U64, levels: int, place: I64, spare: I64, counts: I64, stack: I64, top: int
) -> None:
    """Split each stretch of ``place`` on ``stack`` (low, high, key) until all are short.

    A stretch of more than :data:`SHORT` rows is spread by its key (0:
    ``first``, 1: ``second``) and each long bucket is pushed; a stretch of
    equal keys is pushed again on the next key, up to ``levels``.
    The stretches on the stack are disjoint: at most n / SHORT + 1.
    """
    while top > 0:
        top -= 1
        low, high, level = stack[top, 0], stack[top, 1], stack[top, 2]
        keys = first if level == 0 else second
        least = most = keys[place[low]]
        for t in range(low + 1, high):
            k = keys[place[t]]
            least, most = min(least, k), max(most, k)
        if least == most:  # equal keys: on to the next key, if any
            if level + 1 < levels:
                stack[top, 2] = level + 1
                top += 1
            continue
        buckets = _spread(keys, place, spare, counts, low, high, least, most)
        start = low
        for d in range(buckets):
            end = low + counts[d]
            if end - start > SHORT:
                stack[top, 0], stack[top, 1], stack[top, 2] = start, end, level
                top += 1
            start = end


@njit(**JIT)
def _insert(first: U64, second: U64, place: I64, n: int) -> None:
    """Stable insertion sort of ``place[:n]`` by (first, second) of each."""
    for t in range(1, n):
        p = place[t]
        a, b = first[p], second[p]
        u = t - 1
        while u >= 0:
            q = place[u]
            if first[q] < a or (first[q] == a and second[q] <= b):
                break
            place[u + 1] = q
            u -= 1
        place[u + 1] = p


@njit(**JIT)
def _order_run(
    w: Array,
    r: Array,
    weighted: bool,
    begin: int,
    end: int,
    order: npt.NDArray[np.int64],
    room: Room,
) -> None:
    """Rows begin..end-1 of ``order`` in increasing (weight, response), stably.

    The keys of row begin + j are ``first[j]``, ``second[j]`` (0 without
    weights); ``place`` is the rows' order, counted from ``begin``: sorted
    stably by the keys through counting passes on their leading bits
    (:func:`_spread`, :func:`_split`), then one insertion pass for the short
    stretches, the only rows left out of order. ``room``: work space of
    at least end - begin rows (:func:`_room`).
    """
    first, second, place, spare, counts, stack = room
    n = end - begin
    for j in range(n):
        if weighted:
            first[j] = _key(float(w[begin + j]))
            second[j] = _key(float(r[begin + j]))
        else:
            first[j] = _key(float(r[begin + j]))
        place[j] = j
    if n > SHORT:
        stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 0
        _split(first, second, 2 if weighted else 1, place, spare, counts, stack, 1)
    _insert(first, second, place, n)
    for j in range(n):
        order[begin + j] = begin + place[j]


@njit(**JIT)
def _room(size: int, weighted: bool) -> Room:
    """Work space for runs of up to ``size`` rows (``second`` all 0 without weights)."""
    second = np.empty(size, dtype=np.uint64) if weighted else np.zeros(size, dtype=np.uint64)
    return (
        np.empty(size, dtype=np.uint64),
        second,
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty((1 << _MOST_BITS) + 1, dtype=np.int64),
        np.empty((size // SHORT + 2, 3), dtype=np.int64),
    )


@njit(**JIT)
def _unordered_run(s: Array, r: Array, w: Array, weighted: bool, begin: int, stop: int) -> int:
    """The first row, from ``begin`` to ``stop``, of a run of equal scores out of order (-1: none).

    ``stop`` is the end of the rows or the first row of a run.
    """
    m = stop
    i = begin
    while i < m - 1:
        if s[i + 1] != s[i]:
            i += 1
            continue
        end = i + 2
        while end < m and s[end] == s[i]:
            end += 1
        if not _in_order(w, r, weighted, i, end):
            return i
        i = end
    return -1


@njit(**JIT)
def _order_runs(
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    begin: int,
    stop: int,
    order: npt.NDArray[np.int64],
) -> None:
    """Every run of equal scores from row ``begin`` to ``stop`` put in order in ``order``."""
    size = 256
    room = _room(size, weighted)
    i = begin
    while i >= 0:
        end = i + 2
        while end < stop and s[end] == s[i]:
            end += 1
        if end - i > size:  # work space for the longest run so far (grown rarely)
            size = max(2 * size, end - i)
            room = _room(size, weighted)
        _order_run(w, r, weighted, i, end, order, room)
        i = _unordered_run(s, r, w, weighted, end, stop)


@njit(**JIT)
def _run_start(s: Array, i: int) -> int:
    """The first row of the run of equal scores holding row i."""
    while i > 0 and s[i - 1] == s[i]:
        i -= 1
    return i


def tie_order(
    s: np.ndarray, r: np.ndarray, w: np.ndarray, weighted: bool, threads: int | None = None
) -> np.ndarray:
    """The rows (sorted by score) in canonical order: a permutation, or empty if they are.

    Parameters
    ----------
    s
        Scores, in increasing order (NaN refused before).
    r, w
        Responses and weights of the same rows (``w`` read only if ``weighted``).
    weighted
        Whether ties are ordered by weight first.
    threads
        1 or 2; None: two from :data:`polars_cumdev.kernel.split.TWO_THREADS`
        rows. On two, the rows are cut at the start of a run near the middle
        and each thread orders the runs of one half: the same permutation.

    Returns
    -------
    numpy.ndarray
        ``order`` such that the rows ``order[0], order[1], ...`` are sorted by
        score, then weight, then response; empty when the rows already are.
    """
    m = s.shape[0]
    begin = _unordered_run(s, r, w, weighted, 0, m)
    if begin < 0:  # (the search allocates nothing: a compiled loop that may allocate
        return np.empty(0, dtype=np.int64)  # ran ten times slower on continuous scores)
    order = np.arange(m, dtype=np.int64)
    if threads is None:
        threads = 2 if m >= TWO_THREADS else 1
    middle = _run_start(s, max(begin, m // 2))
    if threads < 2 or middle <= begin:
        _order_runs(s, r, w, weighted, begin, m, order)
        return order
    later = _unordered_run(s, r, w, weighted, middle, m)
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(_order_runs, s, r, w, weighted, later, m, order) if later >= 0 else None
        _order_runs(s, r, w, weighted, begin, middle, order)
        if other is not None:
            other.result()
    return order
