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

__all__ = ["bin_codes", "few_values", "first_appearance", "integer_counts"]


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
    """Rows and first row of each value low ... low + size - 1 of an integer column."""
    counts = np.zeros(size, dtype=np.int64)
    first = np.full(size, -1, dtype=np.int64)
    for i in range(x.shape[0]):
        v = np.int64(x[i]) - low
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
    """Per row: ``table[x - offset]`` as int32 (a lookup of codes, one pass)."""
    out = np.empty(x.shape[0], dtype=np.int32)
    for i in range(x.shape[0]):
        out[i] = table[np.int64(x[i]) - offset]
    return out
