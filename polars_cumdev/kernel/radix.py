"""The radix sort of :func:`polars_cumdev.kernel.ranks.radix_order`, one pass in pieces.

For a single column with many distinct values the threads would otherwise
idle: here each pass of the least-significant-digit sort is cut into
consecutive slices of the rows, one per thread. Each thread counts its
slice's digits (:func:`slice_counts`), the caller turns the counts into
every slice's place in every bucket (slices in order inside a bucket, so the
sort stays stable and gives exactly the single-thread result), and each
thread moves its slice (:func:`slice_scatter`). The driver is
:func:`polars_cumdev.method.score_order.sorted_in_slices`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT
from polars_cumdev.kernel.ranks import _BUCKETS, key

__all__ = ["slice_counts", "slice_scatter"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]


@njit(**JIT)
def slice_counts(
    first: bool, raw: U64, kind: int, src: U64, begin: int, end: int, shift: np.uint64, out: I64
) -> None:
    """out[b] = how many keys of rows begin..end-1 have digit b at ``shift``.

    The first pass reads the values (``raw``, ``kind``), the others the keys
    ``src`` of the previous pass.
    """
    mask = np.uint64(_BUCKETS - 1)
    for i in range(begin, end):
        k = key(raw[i], kind) if first else src[i]
        out[(k >> shift) & mask] += 1


@njit(**JIT)
def slice_scatter(
    first: bool,
    raw: U64,
    kind: int,
    src_k: U64,
    src_i: U32,
    begin: int,
    end: int,
    shift: np.uint64,
    start: I64,
    dst_k: U64,
    dst_i: U32,
) -> None:
    """Move the keys (and rows) of rows begin..end-1 to their places, ``start`` per bucket."""
    mask = np.uint64(_BUCKETS - 1)
    for i in range(begin, end):
        if first:
            k = key(raw[i], kind)
            row = np.uint32(i)
        else:
            k = src_k[i]
            row = src_i[i]
        b = (k >> shift) & mask
        j = start[b]
        start[b] = j + 1
        dst_k[j] = k
        dst_i[j] = row
