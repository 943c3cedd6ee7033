"""Dense ranks of one column by a compiled radix sort, and the grid coordinates they give.

The rank coordinates of :mod:`polars_cumdev.covariates.hilbert` need, for every row,
its dense rank r (counted from 0) among the column's distinct values and the
number m of distinct values. The column arrives as the 64 bits of each value
(a double, a signed or an unsigned integer), which :func:`key` turns, on the
fly in every pass, into an unsigned key ordered as the values (-0.0 and 0.0
get one key). Then:

1. :func:`survey` -- one pass: the bits in which the keys differ, and the
   count of NaN and infinities (refused by the caller);
2. :func:`small_codes` -- each row's slot in an open-addressing hash table
   of the distinct keys, small enough to stay in cache; it gives up past
   :data:`SMALL_DISTINCT` distinct values, which is at once for a column
   of distinct doubles. A column with few values (ages, counts, rounded
   values) then needs only :func:`slot_grid`: the distinct keys sorted, the
   coordinate of each slot, one look-up per row;
3. otherwise :func:`radix_order` -- a least-significant-digit radix sort of
   the keys carrying the row numbers, one byte per pass, over the
   :data:`RADIX_BYTES` most significant bytes in which the keys differ (a
   byte equal over all keys is skipped: small integers, or doubles in a
   narrow range, need two or three passes), the keys equal on those bytes
   being finished run by run; then :func:`scatter_grid` -- one walk over
   the sorted keys, adding 1 to the rank at each new value, writing
   floor(r 2^bits / m) (one exact integer division per distinct value) at
   the row's place.

Every function is ``nogil``: the caller ranks several columns at once on
threads.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT

__all__ = [
    "FLOAT",
    "RADIX_BYTES",
    "SIGNED",
    "SMALL_DISTINCT",
    "UNSIGNED",
    "digit_positions",
    "distinct_count",
    "float_values",
    "key",
    "radix_order",
    "scatter_grid",
    "slot_grid",
    "small_codes",
    "survey",
]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

#: Largest number of distinct values handled by the hash table instead of the sort.
SMALL_DISTINCT = 1 << 12
_TABLE = 1 << 14  # hash slots: 4 times SMALL_DISTINCT keeps probe chains short
_SIGN = np.uint64(1) << np.uint64(63)
#: Kinds of 64-bit values (see :func:`key`).
FLOAT, SIGNED, UNSIGNED = 0, 1, 2
_DIGIT = 8
_BUCKETS = 1 << _DIGIT
_PASSES = 8
#: Bytes of the key sorted by radix passes; ties below them are sorted run by run.
RADIX_BYTES = 5


@njit(**JIT, inline="always")
def key(raw: np.uint64, kind: int) -> np.uint64:
    """The order-preserving key of a value's 64 bits.

    ``kind``: :data:`FLOAT` (a double; -0.0 and 0.0 get one key),
    :data:`SIGNED` (a 64-bit integer) or :data:`UNSIGNED` (the key itself).
    """
    sign = np.uint64(1) << np.uint64(63)
    if kind == FLOAT:
        if raw == sign:  # -0.0 counts as 0.0
            return sign
        return ~raw if raw & sign else raw | sign
    if kind == SIGNED:
        return raw ^ sign
    return raw


@njit(**JIT)
def float_values(keys: U64) -> F64:
    """The doubles whose :data:`FLOAT` keys these are, decoded in place (a view of ``keys``).

    The inverse of :func:`key` on doubles, except that -0.0, whose key is
    0.0's, comes back as 0.0.
    """
    sign = np.uint64(1) << np.uint64(63)
    for i in range(keys.shape[0]):
        k = keys[i]
        keys[i] = k ^ sign if k & sign else ~k
    return keys.view(np.float64)


@njit(**JIT)
def survey(raw: U64, kind: int) -> tuple[np.uint64, int]:
    """The bits in which the keys differ, and how many doubles are NaN or infinite.

    The keys of NaN and infinities are meaningless: the caller refuses the
    column when the count is not 0.
    """
    both = ~np.uint64(0)
    either = np.uint64(0)
    exponent = np.uint64(0x7FF) << np.uint64(52)
    bad = 0
    for i in range(raw.shape[0]):
        k = key(raw[i], kind)
        both &= k
        either |= k
        if kind == FLOAT:
            bad += (raw[i] & exponent) == exponent
    return both ^ either, bad


@njit(**JIT)
def digit_positions(varying: np.uint64, radix_bytes: int) -> I64:
    """The bytes :func:`radix_order` sorts by, least significant first.

    The ``radix_bytes`` most significant bytes in which ``varying`` (the
    bits that differ between keys, :func:`survey`) has a set bit.
    """
    positions = np.empty(_PASSES, dtype=np.int64)
    chosen = 0
    for p in range(_PASSES - 1, -1, -1):
        if chosen < radix_bytes and (varying >> np.uint64(p * _DIGIT)) & np.uint64(255):
            positions[chosen] = p
            chosen += 1
    return positions[:chosen][::-1].copy()


@njit(**JIT)
def radix_order(raw: U64, kind: int, varying: np.uint64, radix_bytes: int) -> tuple[U64, U32]:
    """The keys (:func:`key`) sorted, and the row each came from.

    A least-significant-digit radix sort, one byte per pass, over the
    ``radix_bytes`` most significant bytes in which the keys differ (a byte
    equal over all keys orders nothing); the keys that tie on those bytes
    but differ below are then put in order run by run (:func:`_finish`). Rows
    are numbered in uint32: at most 2^32 - 1 of them. ``varying`` is from
    :func:`survey`.
    """
    n = raw.shape[0]
    positions = digit_positions(varying, radix_bytes)  # least significant first
    chosen = positions.shape[0]
    lowest = positions[0] if chosen else _PASSES
    counts = np.zeros((chosen, _BUCKETS), dtype=np.int64)
    mask = np.uint64(_BUCKETS - 1)
    for i in range(n):
        k = key(raw[i], kind)
        for q in range(chosen):
            counts[q, (k >> np.uint64(positions[q] * _DIGIT)) & mask] += 1
    a_k = np.empty(n, dtype=np.uint64)
    a_i = np.empty(n, dtype=np.uint32)
    b_k = np.empty(0, dtype=np.uint64)
    b_i = np.empty(0, dtype=np.uint32)
    start = np.empty(_BUCKETS, dtype=np.int64)
    if chosen == 0:  # every key equal (or no rows): already in order
        same = np.empty(n, dtype=np.uint64)
        for i in range(n):
            same[i] = key(raw[i], kind)
        return same, np.arange(n).astype(np.uint32)
    for q in range(chosen):
        total = 0
        for b in range(_BUCKETS):
            start[b] = total
            total += counts[q, b]
        shift = np.uint64(positions[q] * _DIGIT)
        if q == 0:
            for i in range(n):
                k = key(raw[i], kind)
                j = start[(k >> shift) & mask]
                start[(k >> shift) & mask] = j + 1
                a_k[j] = k
                a_i[j] = np.uint32(i)
            b_k = np.empty(n, dtype=np.uint64)
            b_i = np.empty(n, dtype=np.uint32)
        elif q % 2 == 1:
            _scatter(a_k, a_i, b_k, b_i, start, shift, mask)
        else:
            _scatter(b_k, b_i, a_k, a_i, start, shift, mask)
    out_k, out_i = (a_k, a_i) if chosen % 2 == 1 else (b_k, b_i)
    below = varying & ((np.uint64(1) << np.uint64(lowest * _DIGIT)) - np.uint64(1))
    if lowest > 0 and below:
        _finish(out_k, out_i, np.uint64(lowest * _DIGIT))
    return out_k, out_i


@njit(**JIT)
def _ascending(keys: U64, start: int, end: int) -> bool:
    """Whether keys[start:end] never decreases."""
    for i in range(start + 1, end):
        if keys[i] < keys[i - 1]:
            return False
    return True


@njit(**JIT)
def _finish(keys: U64, rows: U32, shift: np.uint64) -> None:
    """Sort every run of keys equal above bit ``shift`` by the whole key, in place."""
    n = keys.shape[0]
    start = 0
    while start < n:
        top = keys[start] >> shift
        end = start + 1
        while end < n and keys[end] >> shift == top:
            end += 1
        if end - start <= 16:  # insertion sort
            for i in range(start + 1, end):
                k = keys[i]
                r = rows[i]
                j = i - 1
                while j >= start and keys[j] > k:
                    keys[j + 1] = keys[j]
                    rows[j + 1] = rows[j]
                    j -= 1
                keys[j + 1] = k
                rows[j + 1] = r
        elif not _ascending(keys, start, end):  # (a run of equal scores is: ties are common)
            order = np.argsort(keys[start:end], kind="mergesort")  # (stable)
            keys[start:end] = keys[start:end][order]
            rows[start:end] = rows[start:end][order]
        start = end


@njit(**JIT)
def _scatter(src_k: U64, src_i: U32, dst_k: U64, dst_i: U32, start: I64, shift, mask) -> None:
    """One radix pass: each key and its row to the next place of its digit's bucket."""
    for i in range(src_k.shape[0]):
        k = src_k[i]
        b = (k >> shift) & mask
        j = start[b]
        start[b] = j + 1
        dst_k[j] = k
        dst_i[j] = src_i[i]


@njit(**JIT)
def distinct_count(sorted_keys: U64) -> int:
    """Number of distinct values among sorted keys."""
    n = sorted_keys.shape[0]
    if n == 0:
        return 0
    m = 1
    for i in range(1, n):
        if sorted_keys[i] != sorted_keys[i - 1]:
            m += 1
    return m


@njit(**JIT)
def scatter_grid(sorted_keys: U64, order: U32, m: int, bits: int, out: U32) -> None:
    """out[row] = floor(r 2^bits / m), r the row's dense rank from 0.

    Needs m.bit_length() + bits <= 64; m = 1, bits = 0 writes the ranks.
    """
    n = sorted_keys.shape[0]
    if n == 0:
        return
    um = np.uint64(m)
    shift = np.uint64(bits)
    r = np.uint64(0)
    q = np.uint64(0)
    out[order[0]] = q
    for i in range(1, n):
        if sorted_keys[i] != sorted_keys[i - 1]:
            r += np.uint64(1)
            q = (r << shift) // um
        out[order[i]] = q


@njit(**JIT)
def small_codes(raw: U64, kind: int) -> tuple[U32, U64, int]:
    """Each row's slot in a hash table of the distinct keys, the table, and its size.

    Returns size -1 (and stops early) once more than :data:`SMALL_DISTINCT`
    distinct keys are met. Slots are numbered in order of first appearance.
    """
    n = raw.shape[0]
    table_keys = np.zeros(_TABLE, dtype=np.uint64)
    table_slot = np.full(_TABLE, -1, dtype=np.int64)
    distinct = np.empty(SMALL_DISTINCT, dtype=np.uint64)
    codes = np.empty(n, dtype=np.uint32)
    m = 0
    tmask = np.uint64(_TABLE - 1)
    for i in range(n):
        k = key(raw[i], kind)
        h = ((k * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & tmask
        while True:
            s = table_slot[h]
            if s < 0:
                if m == SMALL_DISTINCT:
                    return codes, distinct, -1
                table_keys[h] = k
                table_slot[h] = m
                distinct[m] = k
                s = m
                m += 1
                break
            if table_keys[h] == k:
                break
            h = (h + np.uint64(1)) & tmask
        codes[i] = np.uint32(s)
    return codes, distinct[:m].copy(), m


@njit(**JIT)
def slot_grid(codes: U32, distinct: U64, m: int, bits: int, out: U32) -> None:
    """out[row] = floor(r 2^bits / m) for rows coded by :func:`small_codes`."""
    order = np.argsort(distinct)
    grid = np.empty(distinct.shape[0], dtype=out.dtype)
    um = np.uint64(m)
    for r in range(distinct.shape[0]):
        grid[order[r]] = (np.uint64(r) << np.uint64(bits)) // um
    for i in range(codes.shape[0]):
        out[i] = grid[codes[i]]
