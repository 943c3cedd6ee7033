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
(:func:`polars_cumdev.kernel.ranks.key` of the weight, then of the response;
without weights, the response's key alone): float comparisons, -0.0 and 0.0
being one key (NaN is refused before). The run's places are then sorted
stably by the keys (:func:`polars_cumdev.kernel.keysort.stable_order`:
counting passes on the keys' leading bits, then an insertion pass), about
four times faster than the merge sort of (weight, response) pairs it
replaced (at 1e7 rows and runs of about 100 rows, five-decimal scores).
On two threads the rows are cut into stretches of whole runs, which the
threads take in turn.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Lock

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.keysort import SHORT, Room, insert, stable_order, work_space
from polars_cumdev.kernel.prefix import I64, JIT, Array
from polars_cumdev.kernel.ranks import FLOAT, key
from polars_cumdev.kernel.split import TWO_THREADS

__all__ = ["tie_order"]


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


@njit(**JIT, inline="always")  # (a call per run cost a third of the pass on runs of 2 rows)
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

    The keys of row begin + j are written at j of the work space ``room``
    (:func:`polars_cumdev.kernel.keysort.work_space`, at least end - begin rows),
    the weight's and the response's, or the response's alone, and the
    places sorted by them (:func:`polars_cumdev.kernel.keysort.stable_order`).
    """
    first, second, place = room[0], room[1], room[2]
    n = end - begin
    least = most = _key(float(w[begin])) if weighted else _key(float(r[begin]))
    for j in range(n):
        if weighted:
            k = _key(float(w[begin + j]))
            second[j] = _key(float(r[begin + j]))
        else:
            k = _key(float(r[begin + j]))
        first[j] = k
        least, most = min(least, k), max(most, k)
    if n <= SHORT:  # (no call: on short runs a call's cost is the sort's)
        for j in range(n):
            place[j] = j
        insert(first, second, place, n)
    else:
        stable_order(room, n, 2 if weighted else 1, least, most)
    for j in range(n):
        order[begin + j] = begin + place[j]


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
    start: int,
    stop: int,
    order: npt.NDArray[np.int64],
) -> None:
    """Rows ``start`` to ``stop`` - 1 of ``order``: each run of equal scores there in order.

    ``start`` and ``stop`` are the first rows of runs (or the ends of the
    rows). Rows outside the runs out of order are their own place.
    """
    size = 256
    room = work_space(size, weighted)
    done = start
    i = _unordered_run(s, r, w, weighted, start, stop)
    while i >= 0:
        for j in range(done, i):
            order[j] = j
        end = i + 2
        while end < stop and s[end] == s[i]:
            end += 1
        if end - i > size:  # work space for the longest run so far (grown rarely)
            size = max(2 * size, end - i)
            room = work_space(size, weighted)
        _order_run(w, r, weighted, i, end, order, room)
        done = end
        i = _unordered_run(s, r, w, weighted, end, stop)
    for j in range(done, stop):
        order[j] = j


@njit(**JIT)
def _cuts(s: Array, begin: int, blocks: int) -> I64:
    """Rows begin to the end cut into about ``blocks`` stretches at the first rows of runs."""
    m = s.shape[0]
    cuts = np.empty(blocks + 1, dtype=np.int64)
    cuts[0], cuts[blocks] = 0, m
    for k in range(1, blocks):
        i = begin + (m - begin) * k // blocks
        i = max(i, cuts[k - 1])
        while i > cuts[k - 1] and s[i - 1] == s[i]:  # back to the run's first row
            i -= 1  # (or the previous cut, in the same run: each row read once at most)
        cuts[k] = i
    return cuts


#: Stretches of rows the two threads take in turn (each a whole number of runs).
BLOCKS = 64


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
        rows. On two, the rows from the first run out of order are cut into
        :data:`BLOCKS` stretches at the first rows of runs, and each thread
        takes the next stretch left until none is (the threads share the work
        however the ties fall): the same permutation, as each run is ordered
        by itself.

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
    order = np.empty(m, dtype=np.int64)
    if threads is None:
        threads = 2 if m >= TWO_THREADS else 1
    if threads < 2:
        _order_runs(s, r, w, weighted, 0, m, order)
        return order
    cuts = _cuts(s, begin, BLOCKS).tolist()
    blocks = iter(range(BLOCKS))
    lock = Lock()

    def work() -> None:
        while True:
            with lock:
                k = next(blocks, None)
            if k is None:
                return
            _order_runs(s, r, w, weighted, cuts[k], cuts[k + 1], order)

    with ThreadPoolExecutor(max_workers=1) as pool:
        other = pool.submit(work)
        work()
        other.result()
    return order
