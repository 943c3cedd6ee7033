"""The node's rows put in canonical order in one pass over memory, the columns riding along.

The node (:mod:`polars_cumdev.method.compiled`) needs the score, response,
weight and group number of every row in canonical order: by score, each run
of equal scores by weight, then response. Sorting the scores' row numbers
(a least-significant-digit radix sort: five passes over all rows), then
gathering the columns through them (a read at a random row for every value)
and moving the runs of equal scores into order after (a pass over all
columns again) costs most of a Polars sort of the whole frame before the
analysis starts. Here:

1. :func:`_histogram` counts the rows of each of 2048 buckets of the keys'
   (:func:`polars_cumdev.kernel.ranks.key`) eleven highest bits that differ
   between rows;
2. :func:`_scatter` moves every row's key, row number and columns to its
   bucket, each thread its slice of the rows (the slices in order inside a
   bucket), so that every value is read once, in order, and written to one
   of the places that advance one after the other;
3. :func:`_sort_buckets` sorts each bucket, mostly small enough to stay in
   the processor's caches, by the key's next bits (insertion sort for a few
   rows, else least-significant-digit passes over the next two bytes that
   differ, then :func:`polars_cumdev.kernel.ranks._finish` for rows equal on
   all of those), moves its columns into that order, and puts its runs of
   equal scores in order (:func:`polars_cumdev.kernel.tieorder._order_runs`).

Every step is stable, so rows equal in all three columns keep their input
order: the order of ``np.lexsort((r, w, s))``. The scores come back decoded
from the sorted keys (:func:`polars_cumdev.kernel.ranks.float_values`).
At 1e7 rows on continuous scores this takes about 0.45 s, where the radix
sort, the gather and the tie order took 1.1 s (``benchmarks/kernel_stages.py``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
from numba import njit

from polars_cumdev.kernel.prefix import JIT, Array
from polars_cumdev.kernel.ranks import FLOAT, _finish, float_values, key, survey
from polars_cumdev.kernel.split import TWO_THREADS, on_threads
from polars_cumdev.kernel.tieorder import _order_runs, _unordered_run

__all__ = ["bucket_sort"]

U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]

_TOP = 11  # bits of the buckets
_DIGITS = 2  # bytes sorted by passes inside a bucket, below the bucket's bits
_SMALL = 48  # buckets of at most this many rows: insertion sort


@njit(**JIT)
def _histogram(raw: U64, begin: int, end: int, shift: np.uint64, counts: I64) -> None:
    """counts[b] = rows begin..end-1 whose key has bucket b at ``shift``."""
    mask = np.uint64((1 << _TOP) - 1)
    for i in range(begin, end):
        counts[(key(raw[i], FLOAT) >> shift) & mask] += 1


@njit(**JIT)
def _scatter(
    raw: U64,
    begin: int,
    end: int,
    shift: np.uint64,
    start: I64,
    keys: U64,
    order: U32,
    a: Array,
    b: Array,
    c: Array,
    out_a: Array,
    out_b: Array,
    out_c: Array,
) -> None:
    """Rows begin..end-1 (key, row number, non-empty columns) to their buckets' next places."""
    mask = np.uint64((1 << _TOP) - 1)
    has_a, has_b, has_c = a.size > 0, b.size > 0, c.size > 0
    for i in range(begin, end):
        k = key(raw[i], FLOAT)
        bucket = (k >> shift) & mask
        j = start[bucket]
        start[bucket] = j + 1
        keys[j] = k
        order[j] = i
        if has_a:
            out_a[j] = a[i]
        if has_b:
            out_b[j] = b[i]
        if has_c:
            out_c[j] = c[i]


@njit(**JIT)
def _local_order(
    keys: U64, lo: int, n: int, shifts: I64, tk: U64, tp: U32, uk: U64, up: U32
) -> tuple[U64, U32]:
    """Keys lo..lo+n-1 sorted (stable) by the bits at ``shifts`` and below, with their places.

    Returns the scratch arrays holding the sorted keys and, for each, its
    place (0..n-1) in the bucket.
    """
    for q in range(n):
        tk[q] = keys[lo + q]
        tp[q] = q
    if n <= _SMALL:  # insertion sort by the whole key
        for q in range(1, n):
            kq, pq = tk[q], tp[q]
            j = q - 1
            while j >= 0 and tk[j] > kq:
                tk[j + 1] = tk[j]
                tp[j + 1] = tp[j]
                j -= 1
            tk[j + 1] = kq
            tp[j + 1] = pq
        return tk, tp
    counts = np.empty(256, dtype=np.int64)
    mask = np.uint64(255)
    for d in range(shifts.shape[0] - 1, -1, -1):  # least significant digit first
        shift = np.uint64(shifts[d])
        counts[:] = 0
        for q in range(n):
            counts[(tk[q] >> shift) & mask] += 1
        total = 0
        for v in range(256):
            here = counts[v]
            counts[v] = total
            total += here
        for q in range(n):
            v = (tk[q] >> shift) & mask
            j = counts[v]
            counts[v] = j + 1
            uk[j] = tk[q]
            up[j] = tp[q]
        tk, uk = uk, tk
        tp, up = up, tp
    if shifts.shape[0] and shifts[shifts.shape[0] - 1] > 0:
        _finish(tk[:n], tp[:n], np.uint64(shifts[shifts.shape[0] - 1]))
    return tk, tp


@njit(**JIT)
def _permute(x: Array, lo: int, n: int, places: npt.NDArray[np.integer], temporary: Array) -> None:
    """Rows lo..lo+n-1 of ``x`` put in the order ``places`` (through ``temporary``)."""
    for q in range(n):
        temporary[q] = x[lo + places[q]]
    for q in range(n):
        x[lo + q] = temporary[q]


@njit(**JIT)
def _move(
    lo: int,
    n: int,
    places: npt.NDArray[np.integer],
    order: U32,
    columns: tuple,
    temporary: tuple,
) -> None:
    """Rows lo..lo+n-1 of ``order`` and of the non-empty columns to their ``places`` order."""
    t_o, t_a, t_b, t_c = temporary
    a, b, c = columns
    _permute(order, lo, n, places, t_o)
    if a.size > 0:
        _permute(a, lo, n, places, t_a)
    if b.size > 0:
        _permute(b, lo, n, places, t_b)
    if c.size > 0:
        _permute(c, lo, n, places, t_c)


@njit(**JIT)
def _sort_buckets(
    bounds: I64,
    first: int,
    last: int,
    shifts: I64,
    keys: U64,
    order: U32,
    r: Array,
    w: Array,
    ids: Array,
    weighted: bool,
    scratch: tuple,
) -> None:
    """Buckets first..last-1 in canonical order, in place: keys, row numbers and columns.

    By score (the keys), then each run of equal scores by weight, then
    response (:func:`polars_cumdev.kernel.tieorder._order_runs`, on the
    bucket while it is in cache).
    """
    tk, tp, uk, up, runs, t_o, t_a, t_b, t_c = scratch
    columns, temporary = (r, w, ids), (t_o, t_a, t_b, t_c)
    for bucket in range(first, last):
        lo, hi = bounds[bucket], bounds[bucket + 1]
        n = hi - lo
        if n <= 1:
            continue
        sk, sp = _local_order(keys, lo, n, shifts, tk, tp, uk, up)
        for q in range(n):
            if sp[q] != q:
                for j in range(n):
                    keys[lo + j] = sk[j]
                _move(lo, n, sp, order, columns, temporary)
                break
        s_b, r_b, w_b = keys[lo:hi], r[lo:hi], w[lo:hi] if weighted else w
        if _unordered_run(s_b, r_b, w_b, weighted, 0, n) >= 0:
            _order_runs(s_b, r_b, w_b, weighted, 0, n, runs)
            _move(lo, n, runs, order, columns, temporary)  # (equal keys in a run: not moved)


def _inner_shifts(varying: int, shift: int) -> np.ndarray:
    """The shifts of the bytes sorted inside a bucket, most significant first.

    Up to :data:`_DIGITS` windows of eight bits right below ``shift`` (the
    lowest clamped at bit 0), keeping only windows in which some key bit
    varies.
    """
    shifts = []
    for d in range(1, _DIGITS + 1):
        low = max(shift - 8 * d, 0)
        window = ((1 << 8) - 1) << low
        if varying & window & ((1 << shift) - 1):
            shifts.append(low)
        if low == 0:
            break
    return np.array(shifts, dtype=np.int64)


def bucket_sort(
    score: np.ndarray,
    r: np.ndarray,
    w: np.ndarray,
    ids: np.ndarray,
    weighted: bool,
    threads: int = 2,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The rows in canonical order: by score, then weight, then response.

    ``score`` is a float64 array without NaN (-0.0 would come back as 0.0:
    the callers read it as 0.0 before, :mod:`polars_cumdev.method.signed_zeros`);
    ``r``, ``w`` (read only if ``weighted``; may be empty) and ``ids`` (the group numbers; may be
    empty) are numeric arrays of the same length. Returns the scores in
    order, the row each came from (uint32) and ``[r, w, ids]`` in order
    (each empty where it came in empty). Rows equal in score, weight and
    response keep their input order (a stable sort). From
    :data:`~polars_cumdev.kernel.split.TWO_THREADS` rows two threads take
    half of the rows, then of the buckets: the same result on one thread or
    two.
    """
    raw = np.ascontiguousarray(score).view(np.uint64)
    n = raw.shape[0]
    if n >= 2**32:
        raise ValueError("bucket_sort numbers rows in 32 bits: at most 2^32 - 1 rows")
    if not weighted:
        w = w[:0]  # (not moved)
    columns = [r, w, ids]
    moved = [np.empty(n if x.size else 0, dtype=x.dtype) for x in columns]
    keys = np.empty(n, dtype=np.uint64)
    order = np.empty(n, dtype=np.uint32)
    varying = int(survey(raw, FLOAT)[0]) if n else 0
    slices = 2 if threads >= 2 and n >= TWO_THREADS else 1
    cuts = [n * t // slices for t in range(slices + 1)]
    shift = max(varying.bit_length() - _TOP, 0)
    counts = np.zeros((slices, 1 << _TOP), dtype=np.int64)
    with ThreadPoolExecutor(max_workers=1) as pool:  # (idle on one thread)
        jobs = [(raw, cuts[t], cuts[t + 1], np.uint64(shift), counts[t]) for t in range(slices)]
        on_threads(pool, _histogram, jobs)
        totals = counts.sum(axis=0)
        starts = (np.cumsum(totals) - totals)[None, :] + np.cumsum(counts, axis=0) - counts
        bounds = np.concatenate([[0], np.cumsum(totals)]).astype(np.int64)
        jobs = [
            (raw, cuts[t], cuts[t + 1], np.uint64(shift), starts[t], keys, order, *columns, *moved)
            for t in range(slices)
        ]
        on_threads(pool, _scatter, jobs)
        shifts = _inner_shifts(varying, shift)
        largest = int(totals.max()) if n else 0
        middle = int(np.searchsorted(bounds, n // 2)) if slices > 1 else totals.size
        parts = [(0, middle), (middle, totals.size)][:slices] if slices > 1 else [(0, totals.size)]
        jobs = [
            (bounds, lo, hi, shifts, keys, order, *moved, weighted, _scratch(largest, moved))
            for lo, hi in parts
        ]
        on_threads(pool, _sort_buckets, jobs)
    return float_values(keys), order, moved


def _scratch(size: int, moved: list[np.ndarray]) -> tuple:
    """One thread's buffers for :func:`_sort_buckets`: keys and places (two of each), the
    places of the runs, and one per moved column (the row numbers first)."""
    return (
        np.empty(size, dtype=np.uint64),
        np.empty(size, dtype=np.uint32),
        np.empty(size, dtype=np.uint64),
        np.empty(size, dtype=np.uint32),
        np.empty(size, dtype=np.int64),  # the places of a bucket's runs put in order
        np.empty(size, dtype=np.uint32),
        *[np.empty(size if x.size else 0, dtype=x.dtype) for x in moved],
    )
