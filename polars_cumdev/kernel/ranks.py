"""Dense ranks of one column by a compiled radix sort, and the grid coordinates they give.

The rank coordinates of :mod:`polars_cumdev.hilbert` need, for every row,
its dense rank r (counted from 0) among the column's distinct values and the
number m of distinct values. Here that is three compiled passes:

1. :func:`float_keys` / :func:`int_keys` -- each value as an unsigned 64-bit
   key whose unsigned order is the values' order (equal values, -0.0 and 0.0
   included, get equal keys);
2. :func:`radix_order` -- a least-significant-digit radix sort of the keys
   carrying the row numbers, 8 bits per pass; a digit position with one
   value over all keys is skipped (a column of small integers, or of floats
   in a narrow range, needs two or three passes instead of eight). One
   histogram pass counts every digit position at once;
3. :func:`scatter_grid` -- one walk over the sorted keys, adding 1 to the
   rank at each new value, writing floor(r 2^bits / m) (one integer
   division per distinct value, exact) at the row's place.

A column with at most :data:`SMALL_DISTINCT` distinct values (ages, counts,
rounded values) skips the sort: :func:`small_codes` gives each row the slot
of its value in an open-addressing hash table that stays in cache, the few
distinct keys are sorted, and :func:`slot_grid` maps slots to coordinates.

Every function is ``nogil``: the caller ranks several columns at once on
threads.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT

__all__ = [
    "RADIX_BYTES",
    "SMALL_DISTINCT",
    "distinct_count",
    "float_keys",
    "int_keys",
    "radix_order",
    "scatter_grid",
    "slot_grid",
    "small_codes",
]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

#: Largest number of distinct values handled by the hash table instead of the sort.
SMALL_DISTINCT = 1 << 12
_TABLE = 1 << 14  # hash slots: 4 times SMALL_DISTINCT keeps probe chains short
_SIGN = np.uint64(1) << np.uint64(63)
_DIGIT = 8
_BUCKETS = 1 << _DIGIT
_PASSES = 8
#: Bytes of the key sorted by radix passes; ties below them are sorted run by run.
RADIX_BYTES = 4


@njit(**JIT)
def float_keys(x: F64) -> tuple[U64, int]:
    """Order-preserving keys of doubles (-0.0 and 0.0 share one), and how many are not finite.

    The keys of NaN and infinities are meaningless: the caller refuses the
    column when the count is not 0.
    """
    n = x.shape[0]
    out = np.empty(n, dtype=np.uint64)
    bits = x.view(np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    exponent = np.uint64(0x7FF) << np.uint64(52)
    bad = 0
    for i in range(n):
        b = bits[i]
        bad += (b & exponent) == exponent
        if b == sign:  # -0.0 counts as 0.0
            b = np.uint64(0)
        out[i] = ~b if b & sign else b | sign
    return out, bad


@njit(**JIT)
def int_keys(x: I64) -> U64:
    """Order-preserving keys of signed 64-bit integers."""
    n = x.shape[0]
    out = np.empty(n, dtype=np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    for i in range(n):
        out[i] = np.uint64(x[i]) ^ sign
    return out


@njit(**JIT)
def _varying_bytes(keys: U64) -> U64:
    """The bits in which the keys differ (the OR of all keys XOR their AND)."""
    both = ~np.uint64(0)
    either = np.uint64(0)
    for i in range(keys.shape[0]):
        both &= keys[i]
        either |= keys[i]
    return both ^ either


@njit(**JIT)
def radix_order(keys: U64, radix_bytes: int) -> tuple[U64, U32]:
    """The keys sorted, and the row each came from.

    A least-significant-digit radix sort, one byte per pass, over the
    ``radix_bytes`` most significant bytes in which the keys differ (a byte
    equal over all keys orders nothing); the keys that tie on those bytes
    but differ below are then put in order run by run (:func:`_finish`). Rows
    are numbered in uint32: at most 2^32 - 1 of them.
    """
    n = keys.shape[0]
    varying = _varying_bytes(keys)
    positions = np.empty(_PASSES, dtype=np.int64)
    chosen = 0
    for p in range(_PASSES - 1, -1, -1):
        if chosen < radix_bytes and (varying >> np.uint64(p * _DIGIT)) & np.uint64(255):
            positions[chosen] = p
            chosen += 1
    lowest = positions[chosen - 1] if chosen else _PASSES
    positions = positions[:chosen][::-1].copy()  # least significant first
    counts = np.zeros((chosen, _BUCKETS), dtype=np.int64)
    mask = np.uint64(_BUCKETS - 1)
    for i in range(n):
        k = keys[i]
        for q in range(chosen):
            counts[q, (k >> np.uint64(positions[q] * _DIGIT)) & mask] += 1
    a_k = np.empty(n, dtype=np.uint64)
    a_i = np.empty(n, dtype=np.uint32)
    b_k = np.empty(0, dtype=np.uint64)
    b_i = np.empty(0, dtype=np.uint32)
    start = np.empty(_BUCKETS, dtype=np.int64)
    if chosen == 0:  # every key equal (or no rows): already in order
        return keys.copy(), np.arange(n).astype(np.uint32)
    for q in range(chosen):
        total = 0
        for b in range(_BUCKETS):
            start[b] = total
            total += counts[q, b]
        shift = np.uint64(positions[q] * _DIGIT)
        if q == 0:
            for i in range(n):
                k = keys[i]
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
        else:
            order = np.argsort(keys[start:end])
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
def small_codes(keys: U64) -> tuple[U32, U64, int]:
    """Each row's slot in a hash table of the distinct keys, the table, and its size.

    Returns size -1 (and stops early) once more than :data:`SMALL_DISTINCT`
    distinct keys are met. Slots are numbered in order of first appearance.
    """
    n = keys.shape[0]
    table_keys = np.zeros(_TABLE, dtype=np.uint64)
    table_slot = np.full(_TABLE, -1, dtype=np.int64)
    distinct = np.empty(SMALL_DISTINCT, dtype=np.uint64)
    codes = np.empty(n, dtype=np.uint32)
    m = 0
    tmask = np.uint64(_TABLE - 1)
    for i in range(n):
        k = keys[i]
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
