"""Per-row level codes of the segment features in single passes (Numba).

For :mod:`polars_cumdev.multicalibration.levels`: whether a numerical feature
has few distinct values (stopping as soon as it has more), each row's bin
(the number of cut points below its value), the counts and first rows of a
small-range integer feature, and the order in which codes first appear along
the rows. Each is one pass over a column, no hashing and no sort.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polars_cumdev.kernel.prefix import F64, I64, JIT, Array

__all__ = ["bin_codes", "few_values", "first_appearance", "integer_counts", "order_statistics"]


@njit(**JIT)
def few_values(x: Array, limit: int) -> F64:
    """The distinct non-NaN values of ``x``, sorted, if at most ``limit``; else the first
    ``limit + 1`` found (the caller sees there are more)."""
    found = np.empty(limit + 1)
    count = 0
    for i in range(x.shape[0]):
        v = x[i]
        if v != v:
            continue
        known = False
        for j in range(count):
            if found[j] == v:
                known = True
                break
        if not known:
            found[count] = v
            count += 1
            if count > limit:
                break
    return np.sort(found[:count])


@njit(**JIT)
def bin_codes(x: Array, edges: F64, offset: int, missing: int) -> np.ndarray:
    """Per row: max(#{edges < x} + offset, 0), and ``missing`` where x is NaN (int32)."""
    out = np.empty(x.shape[0], dtype=np.int32)
    m = edges.shape[0]
    for i in range(x.shape[0]):
        v = x[i]
        if v != v:
            out[i] = missing
            continue
        below = 0
        for j in range(m):
            if edges[j] < v:
                below += 1
        out[i] = max(below + offset, 0)
    return out


@njit(**JIT)
def integer_counts(x: Array, low: int, size: int) -> tuple[I64, I64]:
    """Rows and first row of each value low ... low + size - 1 of an integer column.

    The values must lie in that range, within +-2^62 (the caller takes ``low``
    and ``size`` from the column's minimum and maximum); any other raises
    rather than writes outside the counts.
    """
    counts = np.zeros(size, dtype=np.int64)
    first = np.full(size, -1, dtype=np.int64)
    for i in range(x.shape[0]):
        v = np.int64(x[i]) - low
        if v < 0 or v >= size:
            raise IndexError("integer_counts: a value outside low ... low + size - 1")
        if first[v] < 0:
            first[v] = i
        counts[v] += 1
    return counts, first


@njit(**JIT)
def first_appearance(codes: Array, count: int) -> I64:
    """Rank of each code 0 ... count - 1 by first appearance along the rows (absent ones
    last, in code order)."""
    rank = np.full(count, -1, dtype=np.int64)
    seen = 0
    for i in range(codes.shape[0]):
        c = codes[i]
        if c < 0 or c >= count:
            raise IndexError("first_appearance: a code outside 0 ... count - 1")
        if rank[c] < 0:
            rank[c] = seen
            seen += 1
            if seen == count:
                break
    for c in range(count):
        if rank[c] < 0:
            rank[c] = seen
            seen += 1
    return rank


@njit(**JIT)
def remap(x: Array, table: Array, offset: int) -> np.ndarray:
    """Per row: ``table[x - offset]`` as int32 (a lookup of codes, one pass).

    A value outside the table raises rather than reads outside it.
    """
    out = np.empty(x.shape[0], dtype=np.int32)
    size = table.shape[0]
    for i in range(x.shape[0]):
        v = np.int64(x[i]) - offset
        if v < 0 or v >= size:
            raise IndexError("remap: a value outside the lookup table")
        out[i] = table[v]
    return out


#: Bits of a key a histogram pass of :func:`order_statistics` tells apart (2^14 buckets).
_BITS = 14
_TOP = np.uint64(1 << 63)


@njit(**JIT)
def _key(bits: np.uint64) -> np.uint64:
    """An unsigned integer of the same order as the double of ``bits`` (not NaN): the
    bits with the sign bit set for v >= +0.0, all flipped for v <= -0.0."""
    return ~bits if bits & _TOP else bits | _TOP


@njit(**JIT)
def _value(key: np.uint64) -> float:
    """The double of a :func:`_key`."""
    bits = key ^ _TOP if key & _TOP else ~key
    return np.array([bits]).view(np.float64)[0]


@njit(**JIT)
def _shift(low: np.uint64, high: np.uint64) -> np.uint64:
    """The right shift that leaves at most 2^_BITS buckets between keys low and high."""
    span = high - low
    shift = np.uint64(0)
    while (span >> shift) >= np.uint64(1 << _BITS):
        shift += np.uint64(1)
    return shift


@njit(**JIT)
def _narrow(keys: np.ndarray, rank: int) -> np.uint64:
    """The key of rank ``rank`` (0-based, ascending) among ``keys``: histograms of the
    key range narrow it down (each keeps one bucket), then a small sort."""
    while keys.shape[0] > (1 << _BITS):
        low, high = keys.min(), keys.max()
        if low == high:
            return low
        shift = _shift(low, high)
        counts = np.zeros(1 << _BITS, dtype=np.int64)
        for key in keys:
            counts[(key - low) >> shift] += 1
        bucket, below = 0, 0
        while below + counts[bucket] <= rank:
            below += counts[bucket]
            bucket += 1
        kept = np.empty(counts[bucket], dtype=np.uint64)
        filled = 0
        for key in keys:
            if (key - low) >> shift == bucket:
                kept[filled] = key
                filled += 1
        keys, rank = kept, rank - below
    return np.sort(keys)[rank]


@njit(**JIT)
def order_statistics(x: F64, ranks: I64) -> tuple[F64, int, float, float]:
    """The values of ranks ``ranks`` (0-based, ascending) among the non-NaN values of ``x``.

    Also their count, smallest and largest value. The rank of a value is
    its position in the sorted values, as :func:`numpy.partition` finds it,
    without sorting: each double is read as an unsigned key of the same
    order, one pass finds the keys' range, one counts the keys in 2^14
    buckets of it, one gathers the buckets holding the ranks asked for,
    then :func:`_narrow` works within each. Every rank must be below the
    count. Buckets of the keys, not of the values, so heavy tails cost no
    more than a bell.
    """
    bits = x.view(np.uint64)
    count = 0
    low, high = ~np.uint64(0), np.uint64(0)
    for i in range(x.shape[0]):
        if x[i] == x[i]:
            count += 1
            key = _key(bits[i])
            low = min(low, key)
            high = max(high, key)
    out = np.empty(ranks.shape[0])
    if count == 0:
        return out, 0, np.nan, np.nan
    shift = _shift(low, high)
    counts = np.zeros(1 << _BITS, dtype=np.int64)
    for i in range(x.shape[0]):
        if x[i] == x[i]:
            counts[(_key(bits[i]) - low) >> shift] += 1
    starts = np.zeros((1 << _BITS) + 1, dtype=np.int64)
    for b in range(1 << _BITS):
        starts[b + 1] = starts[b] + counts[b]
    buckets = np.searchsorted(starts, ranks, side="right") - 1
    wanted = np.full(1 << _BITS, -1, dtype=np.int64)  # bucket -> where its keys go
    offset = 0
    for b in np.unique(buckets):
        wanted[b] = offset
        offset += counts[b]
    gathered = np.empty(offset, dtype=np.uint64)
    filled = wanted.copy()
    for i in range(x.shape[0]):
        if x[i] == x[i]:
            key = _key(bits[i])
            b = (key - low) >> shift
            if wanted[b] >= 0:
                gathered[filled[b]] = key
                filled[b] += 1
    for j in range(ranks.shape[0]):
        b = buckets[j]
        keys = gathered[wanted[b] : wanted[b] + counts[b]].copy()
        out[j] = _value(_narrow(keys, ranks[j] - starts[b]))
    return out, count, _value(low), _value(high)
