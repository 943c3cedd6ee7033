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
stably by the keys (:func:`_order_run`): counting passes on the leading bits
in which the keys of a stretch differ, two to four buckets a row, split
every stretch until it is short (:func:`_spread`, :func:`_split`; keys of
two values, such as 0/1 responses, are parted in one pass); one insertion
pass then orders the short stretches, the only rows left out of order. The
insertion pass alone is a whole stable sort, so the result never depends on
the passes before it, only its time: about 25 ns a row at 1e7 rows and runs
of about 100 (five-decimal scores), against 90 ns for the merge sort of
(weight, response) pairs it replaced.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from threading import Lock

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
#: Most bits of a bucket number in one counting pass.
_MOST_BITS = 11
#: Bits more in a bucket number than in the number of rows (2 to 4 buckets a row).
_MORE_BITS = 1


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
    keys: U64, source: I64, target: I64, counts: I64, low: int, high: int, least: np.uint64,
    most: np.uint64,
) -> tuple[int, bool, int]:  # fmt: skip
    """Rows ``source[low:high]`` into ``target[low:high]`` stably by the leading bits of their keys.

    ``source`` empty: the rows low..high-1 themselves. The keys lie from
    ``least`` to ``most`` (not equal). Keys of two values are parted in
    two; otherwise the bucket of a key is its difference from ``least`` cut
    to :data:`_MORE_BITS` bits more than the rows (at most :data:`_MOST_BITS`).
    Returns the number of buckets, whether each holds equal keys and the
    most rows in one; ``counts[d]`` is then the end of bucket d, counted
    from ``low``.
    """
    direct = source.shape[0] == 0
    lows, two = 0, True
    for t in range(low, high):  # (continuous keys: stops at once)
        k = keys[t if direct else source[t]]
        if k != least and k != most:
            two = False
            break
        lows += k == least
    if two:  # a stable partition (no counters in memory: no chain of stores and loads)
        a, b = low, low + lows
        for t in range(low, high):
            p = t if direct else source[t]
            is_low = keys[p] == least
            target[a if is_low else b] = p
            a, b = a + is_low, b + (not is_low)
        counts[0], counts[1] = lows, high - low
        return 2, True, max(lows, high - low - lows)
    width = min(_bit_length(np.uint64(high - low - 1)) + _MORE_BITS, _MOST_BITS)
    shift = np.uint64(max(_bit_length(most - least) - width, 0))
    buckets = int((most - least) >> shift) + 1
    counts[:buckets] = 0
    for t in range(low, high):
        counts[int((keys[t if direct else source[t]] - least) >> shift)] += 1
    total = fullest = 0
    for d in range(buckets):  # the start of each bucket
        fullest = max(fullest, counts[d])
        total, counts[d] = total + counts[d], total
    for t in range(low, high):
        p = t if direct else source[t]
        d = int((keys[p] - least) >> shift)
        target[low + counts[d]] = p
        counts[d] += 1
    return buckets, shift == 0, fullest


@njit(**JIT)
def _push(
    stack: I64, top: int, counts: I64, spread: tuple[int, bool, int], low: int, level: int,
    levels: int,
) -> tuple[int, bool]:  # fmt: skip
    """Push the buckets (``spread``: :func:`_spread`'s answer) longer than :data:`SHORT` rows.

    They are to be split by key ``level``, or the next when each holds equal
    keys; none when no key is left (each bucket's rows equal in every key:
    in order). Returns the new top, and whether a short bucket of two
    rows or more is left to the insertion pass.
    """
    buckets, exact, fullest = spread
    level += exact
    if level >= levels or fullest < 2:
        return top, False
    if fullest <= SHORT:
        return top, True
    rough = False
    start = low
    for d in range(buckets):
        end = low + counts[d]
        if end - start > SHORT:
            stack[top, 0], stack[top, 1], stack[top, 2] = start, end, level
            top += 1
        elif end - start > 1:
            rough = True
        start = end
    return top, rough


@njit(**JIT)
def _split(
    first: U64, second: U64, levels: int, place: I64, spare: I64, counts: I64, stack: I64, top: int
) -> bool:
    """Split each stretch of ``place`` on ``stack`` (low, high, key) until all are short.

    A stretch is spread (:func:`_spread`) by its key (0: ``first``, 1:
    ``second``) and its long buckets pushed; a stretch of equal keys is
    pushed again on the next key, up to ``levels``. The stretches on the
    stack are disjoint: at most n / SHORT + 1. Returns whether a short
    stretch is left to the insertion pass.
    """
    rough = False
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
        spread = _spread(keys, place, spare, counts, low, high, least, most)
        for t in range(low, high):
            place[t] = spare[t]
        top, short = _push(stack, top, counts, spread, low, level, levels)
        rough |= short
    return rough


@njit(**JIT)
def _insert(first: U64, second: U64, place: I64, n: int) -> None:
    """Stable insertion sort of ``place[:n]`` by (first, second) of each.

    The last row placed is the largest so far: kept at hand, a row in order
    after it is passed over without a store or a second load.
    """
    if n < 2:
        return
    last = place[0]
    top_first, top_second = first[last], second[last]
    for t in range(1, n):
        p = place[t]
        a, b = first[p], second[p]
        if top_first < a or (top_first == a and top_second <= b):
            top_first, top_second = a, b
            continue
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
    least = most = _key(float(w[begin])) if weighted else _key(float(r[begin]))
    for j in range(n):
        if weighted:
            k = _key(float(w[begin + j]))
            second[j] = _key(float(r[begin + j]))
        else:
            k = _key(float(r[begin + j]))
        first[j] = k
        least, most = min(least, k), max(most, k)
    levels = 2 if weighted else 1
    top, rough = 0, False
    if least == most or n <= SHORT:
        for j in range(n):
            place[j] = j
        if least != most or levels == 2:
            if n > SHORT:  # (equal first keys)
                stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 1
                top = 1
            else:
                rough = True
    else:
        spread = _spread(first, spare[:0], place, counts, 0, n, least, most)
        top, rough = _push(stack, 0, counts, spread, 0, 0, levels)
    if _split(first, second, levels, place, spare, counts, stack, top) or rough:
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
    start: int,
    stop: int,
    order: npt.NDArray[np.int64],
) -> None:
    """Rows ``start`` to ``stop`` - 1 of ``order``: each run of equal scores there in order.

    ``start`` and ``stop`` are the first rows of runs (or the ends of the
    rows). Rows outside the runs out of order are their own place.
    """
    size = 256
    room = _room(size, weighted)
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
            room = _room(size, weighted)
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
