"""The order of the rows by score where the node cannot move the columns with the sort.

:func:`polars_cumdev.method.compiled.node` hands the kernel the score,
response and weight columns sorted by score. A Float64 score from
:data:`~polars_cumdev.method.compiled.KERNEL_ROWS` rows is sorted with the
columns riding along (:mod:`polars_cumdev.kernel.bucketsort`); other scores
(other dtypes, a Float64 column holding -0.0, whose key is 0.0's) get their
order here, and one compiled pass
(:func:`polars_cumdev.kernel.gather.gather_rows`) then moves the columns.
Polars' ``arg_sort`` is a comparison sort; for Float64 a
least-significant-digit radix sort of the scores' bits
(:func:`polars_cumdev.kernel.ranks.radix_order`, one byte per pass over the
bytes in which the scores differ) finds the order in about half the
processor time (``benchmarks/multicalibration.py``). From
:data:`SLICED_ROWS` rows each pass of the radix sort is cut into two slices
of the rows, one per thread (:func:`sorted_in_slices`, the same order as on
one thread); the Hilbert ranking (:mod:`polars_cumdev.covariates.ranking`)
uses the same driver. Equal scores may come out in another order than
Polars' sort would give them; the node puts every run of equal scores in
its canonical order right after (by weight, then response), so the
kernel's sums are the same bits either way.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

from polars_cumdev.method.kernel_loader import kernel

__all__ = ["RADIX_ROWS", "SLICED_ROWS", "score_order", "sorted_in_slices"]

#: Fewest rows sorted by the radix sort (the kernel, and so Numba, is loaded from there on).
RADIX_ROWS = 1_000_000
#: Fewest rows for which each pass of the radix sort runs on two threads.
SLICED_ROWS = 1 << 20


def sorted_in_slices(
    raw: np.ndarray, kind: int, varying: np.uint64, slices: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~polars_cumdev.kernel.ranks.radix_order` with each pass on ``slices`` threads.

    Each thread counts the digits of its slice of the rows
    (:func:`polars_cumdev.kernel.radix.slice_counts`); the counts give every
    slice its place in every bucket, slices in order, so each thread can move
    its rows (:func:`polars_cumdev.kernel.radix.slice_scatter`) and the sort
    stays stable: the same keys and rows as on one thread.
    """
    k = kernel()
    ranks, radix = k.ranks, k.radix
    positions = ranks.digit_positions(varying, ranks.RADIX_BYTES)
    n = raw.shape[0]
    if positions.size == 0 or slices < 2:
        return ranks.radix_order(raw, kind, varying, ranks.RADIX_BYTES)
    cuts = [n * t // slices for t in range(slices + 1)]
    buffers = [(np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint32)) for _ in range(2)]
    src_k, src_i = buffers[1]  # not read by the first pass
    slice_of = [(cuts[t], cuts[t + 1]) for t in range(slices)]
    with ThreadPoolExecutor(max_workers=slices - 1) as pool:
        for q, position in enumerate(positions):
            first = q == 0
            shift = np.uint64(8 * position)
            counts = np.zeros((slices, 256), dtype=np.int64)
            read = (first, raw, kind, src_k)
            jobs = [(*read, *ends, shift, counts[t]) for t, ends in enumerate(slice_of)]
            k.split.on_threads(pool, radix.slice_counts, jobs)
            totals = counts.sum(axis=0)
            starts = (np.cumsum(totals) - totals)[None, :] + np.cumsum(counts, axis=0) - counts
            dst_k, dst_i = buffers[q % 2]
            moves = [
                (*read, src_i, *ends, shift, starts[t], dst_k, dst_i)
                for t, ends in enumerate(slice_of)
            ]
            k.split.on_threads(pool, radix.slice_scatter, moves)
            src_k, src_i = dst_k, dst_i
    lowest = int(positions[0])
    below = int(varying) & ((1 << (8 * lowest)) - 1)
    if lowest > 0 and below:
        ranks._finish(src_k, src_i, np.uint64(8 * lowest))
    return src_k, src_i


def score_order(column: pl.Series) -> np.ndarray:
    """The rows of ``column`` in increasing score (equal scores in no set order).

    The radix sort for a Float64 score without nulls from :data:`RADIX_ROWS`
    rows (on two threads from :data:`SLICED_ROWS` rows when the machine has
    two cores); Polars' ``arg_sort`` otherwise (other types, nulls, small
    columns: those are refused or cheap).
    """
    if column.len() < RADIX_ROWS or column.dtype != pl.Float64 or column.null_count():
        return column.arg_sort().to_numpy()
    ranks = kernel().ranks
    raw = np.ascontiguousarray(column.to_numpy()).view(np.uint64)
    varying, _ = ranks.survey(raw, ranks.FLOAT)
    slices = 2 if column.len() >= SLICED_ROWS and (os.cpu_count() or 1) >= 2 else 1
    return sorted_in_slices(raw, ranks.FLOAT, np.uint64(varying), slices)[1]
