"""Rank coordinates and Hilbert distances of large columns, by the compiled kernel.

:func:`polars_cumdev.covariates.hilbert.hilbert_index` with rank coordinates needs a
dense rank of every covariate: done by Polars, that is about one argsort per
covariate, several sorts' worth for the index. From :data:`COMPILED_ROWS`
rows on (and when Numba is installed) the same coordinates come from
:mod:`polars_cumdev.kernel.ranks` instead: a radix sort of order-preserving
keys (or, for a column with few distinct values, a hash table that stays in
cache), the covariates ranked at once on threads; then the distance along
the curve by :mod:`polars_cumdev.kernel.curve`. The coordinates are the same
integers, floor(r 2^bits / m), so the index is identical (the tests compare
both paths). Below the threshold the NumPy/Polars path runs: in a fresh
process Numba's import and the load of the cached kernels take about half a
second (the very first compilation, cached on disk, several seconds), about
what the compiled path saves on 1e6 rows of four covariates; the threshold is
the compiled screen's (:data:`polars_cumdev.method.compiled.KERNEL_ROWS`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np
import polars as pl

from polars_cumdev.covariates.tables import MAX_TABLE_DIMENSIONS, chunk_levels, chunk_table
from polars_cumdev.method import compiled
from polars_cumdev.method.score_order import sorted_in_slices

__all__ = [
    "COMPILED_ROWS",
    "compiled_distances",
    "compiled_rank_grid",
    "dense_ranks",
    "use_compiled",
]

#: Fewest rows for which rank coordinates and distances run compiled.
COMPILED_ROWS = 1_000_000
# Rows per thread of the curve machine, at least.
_SLICE = 100_000
# Levels read per look-up of the compiled machine, by number of axes (measured).
_LEVELS = {1: 8, 2: 4, 3: 3, 4: 1}


def use_compiled(rows: int) -> bool:
    """Whether ``rows`` rows go to the compiled path (enough of them, Numba installed)."""
    return COMPILED_ROWS <= rows < 2**32 and compiled.available()


def _raw(series: pl.Series) -> tuple[np.ndarray, int]:
    """The 64 bits of each value of a numeric column without nulls, and their kind."""
    ranks = compiled.kernel().ranks
    dtype = series.dtype
    if dtype.is_float():
        return series.cast(pl.Float64).to_numpy().view(np.uint64), ranks.FLOAT
    if dtype == pl.UInt64:
        return series.to_numpy().view(np.uint64), ranks.UNSIGNED
    if dtype in (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32):
        return series.cast(pl.Int64).to_numpy().view(np.uint64), ranks.SIGNED
    # Anything else numeric (128-bit integers, decimals): Polars ranks it, and
    # the rank is the key.
    return series.rank("dense").cast(pl.UInt64).to_numpy(), ranks.UNSIGNED


def _coded(series: pl.Series):
    """First step of one column: ("small", codes, distinct keys) or ("raw", bits, facts), and m.

    m is the number of distinct values when the hash table holds them all,
    else -1 (the column still needs :func:`_sorted`); -2 when the column
    holds NaN or infinities.
    """
    ranks = compiled.kernel().ranks
    raw, kind = _raw(series)
    varying, bad = ranks.survey(raw, kind)
    if bad:
        return ("bad", raw, None), -2
    codes, distinct, m = ranks.small_codes(raw, kind)
    if m >= 0:
        return ("small", codes, distinct), m
    return ("raw", raw, (kind, np.uint64(varying))), -1


def _sorted(coded: tuple, slices: int = 1) -> tuple:
    """Second step, for a column with many distinct values: the radix sort."""
    ranks = compiled.kernel().ranks
    _, raw, (kind, varying) = coded
    sorted_keys, rows = sorted_in_slices(raw, kind, varying, slices)
    return ("sorted", sorted_keys, rows), ranks.distinct_count(sorted_keys)


def _rank(series: pl.Series):
    """One column's ranking: ("small", codes, distinct keys) or ("sorted", keys, rows), and m."""
    coded = _coded(series)
    return _sorted(coded[0], os.cpu_count() or 1) if coded[1] == -1 else coded


def _threads(function, items: list) -> list:
    """``function`` over ``items`` on up to one thread per CPU (the kernels release the GIL)."""
    workers = min(len(items), os.cpu_count() or 1)
    if workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(function, items))


def dense_ranks(series: pl.Series) -> np.ndarray:
    """0-based dense ranks of a numeric column (uint64), by the compiled kernel.

    Equal to ``series.rank("dense") - 1`` (-0.0 and 0.0 are one value); the
    column must have no nulls, NaN or infinities (checked by the caller).
    """
    (kind, a, b), m = _rank(series)
    if m == -2:
        raise ValueError("dense_ranks needs finite values")
    ranks = np.empty(series.len(), dtype=np.uint64)
    _fill(kind, a, b, 1, 0, ranks)  # floor(r 2^0 / 1) = r
    return ranks


def _fill(kind: str, a: np.ndarray, b: np.ndarray, m: int, bits: int, out: np.ndarray) -> None:
    ranks = compiled.kernel().ranks
    if kind == "small":
        ranks.slot_grid(a, b, m, bits, out)
    else:
        ranks.scatter_grid(a, b, m, bits, out)


def compiled_rank_grid(
    parts: list[pl.Series], bits: int | None, chosen, refuse
) -> tuple[np.ndarray, int]:
    """Rank grid coordinates of every column, shape (d, rows) uint32, and the bits used.

    ``chosen(d, m)`` gives the bits when ``bits`` is None, m being the
    largest number of distinct values of a column (``default_bits``). The
    columns must have no nulls; ``refuse(j)`` is called (and must raise) when
    column j holds NaN or infinities.
    """
    # Keys and hash tables of all columns first, then the radix sorts of the
    # columns with many distinct values: the threads get balanced loads.
    ranked = _threads(_coded, parts)
    for j, (_, count) in enumerate(ranked):
        if count == -2:
            refuse(j)
            raise ValueError(f"column {j} has values that are not finite")
    many = [j for j, (_, count) in enumerate(ranked) if count == -1]
    if len(many) == 1:  # one column to sort: its passes are cut among the threads
        ranked[many[0]] = _sorted(ranked[many[0]][0], os.cpu_count() or 1)
    else:
        for j, done in zip(many, _threads(_sorted, [ranked[j][0] for j in many]), strict=True):
            ranked[j] = done
    m = max(count for _, count in ranked)
    bits = bits or chosen(len(parts), m)
    grid = np.empty((len(parts), parts[0].len()), dtype=np.uint32)
    jobs = [(kind, a, b, count, j) for j, ((kind, a, b), count) in enumerate(ranked)]
    _threads(lambda job: _fill(job[0], job[1], job[2], job[3], bits, grid[job[4]]), jobs)
    return grid, bits


@cache
def _table(d: int, c: int) -> np.ndarray:
    """:func:`chunk_table` for the compiled machine: level-major inputs, packed entries.

    The input's chunk bits are reordered from axis-major (``chunk_table``) to
    level-major (a piece of the Morton code); an entry is the next state,
    scaled for look-ups of ``_LEVELS[d]`` levels, times 2^16 plus the output
    bits.
    """
    digits, nexts = chunk_table(d, c)
    width = c * d
    piece = np.arange(1 << width, dtype=np.int64)
    chunk = np.zeros_like(piece)
    for axis in range(d):
        for level in range(c):
            bit = (piece >> (d * (c - 1 - level) + d - 1 - axis)) & 1
            chunk |= bit << (c * (d - 1 - axis) + c - 1 - level)
    states = digits.shape[0] >> width
    source = (np.arange(states, dtype=np.int64)[:, None] << width) + chunk[None, :]
    source = source.ravel()
    nexts = (nexts[source].astype(np.int64) >> (chunk_levels(d) * d)) << (_LEVELS[d] * d)
    if nexts.max() >= 1 << 16 or digits.max() >= 1 << 16:
        raise ValueError(f"no packed table for {d} axes and {c} levels per look-up")
    return ((nexts << 16) | digits[source].astype(np.int64)).astype(np.uint32)


def compiled_distances(grid: np.ndarray, bits: int) -> np.ndarray:
    """Distances along the curve (uint64) of the grid points ``grid[:, i]`` (d <= 4)."""
    d = grid.shape[0]
    if d > MAX_TABLE_DIMENSIONS:
        raise ValueError(f"the compiled machine takes at most {MAX_TABLE_DIMENSIONS} axes")
    c = _LEVELS[d]
    head = bits % c
    table = _table(d, c)
    head_table = _table(d, head) if head else table
    grid = np.ascontiguousarray(grid, dtype=np.uint32)
    rows = grid.shape[1]
    out = np.empty(rows, dtype=np.uint64)
    machine = compiled.kernel().curve.machine_distances
    pieces = min(os.cpu_count() or 1, max(1, rows // _SLICE))
    cuts = [rows * k // pieces // 4 * 4 for k in range(pieces)] + [rows]

    def run(k: int) -> None:
        machine(grid, cuts[k], cuts[k + 1], bits, head, head_table, c, table, out)

    _threads(run, list(range(pieces)))
    return out
