"""A stable sort of row places by two unsigned 64-bit keys, in work space kept between calls.

:func:`stable_order` sorts the places 0..n-1 of n rows by (first, second)
key, rows of equal keys in increasing place, for
:mod:`polars_cumdev.kernel.tieorder` (a run of equal scores, by weight then
response). Counting passes on the leading bits in which the keys of a
stretch differ, two to four buckets a row, split every stretch until it is
short (:func:`_spread`, :func:`_split`; keys of two values, such as 0/1
responses, are parted in one pass, without counters in memory); one
insertion pass then orders the short stretches, the only rows left out of
order, and is skipped when there are none. Each pass keeps rows of equal
keys in their order: the sort is stable. A counting pass over a stretch of
more than :data:`SHORT` rows leaves buckets whose keys differ in six bits
fewer at least: a row goes through at most 11 passes a key, however the
keys are spread.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import I64, JIT

__all__ = ["SHORT", "Room", "insert", "stable_order", "work_space"]

U64 = npt.NDArray[np.uint64]
#: Work space (:func:`work_space`): the keys, the places, spare places, bucket counts, a stack.
Room = tuple[U64, U64, I64, I64, I64, I64]

#: Stretches of at most this many rows are left to the final insertion pass.
SHORT = 16
#: Most bits of a bucket number in one counting pass.
_MOST_BITS = 11
#: Bits more in a bucket number than in the number of rows (2 to 4 buckets a row).
_MORE_BITS = 1


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


@njit(**JIT, inline="always")
def insert(first: U64, second: U64, place: I64, n: int) -> None:
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
def stable_order(room: Room, n: int, levels: int, least: np.uint64, most: np.uint64) -> None:
    """Sort the places ``room[2][:n]`` stably by the keys ``room[0][:n]``, ``room[1][:n]``.

    The caller has written the keys, and gives the least and the most of
    ``first``; ``levels`` is 2, or 1 to sort by ``first`` only.
    """
    first, second, place, spare, counts, stack = room
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
        insert(first, second, place, n)


@njit(**JIT)
def work_space(size: int, two_keys: bool) -> Room:
    """Work space for up to ``size`` rows (``second`` all 0 for one key)."""
    second = np.empty(size, dtype=np.uint64) if two_keys else np.zeros(size, dtype=np.uint64)
    return (
        np.empty(size, dtype=np.uint64),
        second,
        np.empty(size, dtype=np.int64),
        np.empty(size, dtype=np.int64),
        np.empty((1 << _MOST_BITS) + 1, dtype=np.int64),
        np.empty((size // SHORT + 2, 3), dtype=np.int64),
    )
