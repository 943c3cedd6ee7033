"""Every segment's running sum and its extremes, all subsets in one pass over the rows (Numba).

For :mod:`polars_cumdev.multicalibration`, when the full cross of the
features is small enough to tabulate: each row's cell of the cross (the
mixed-radix combination of all its feature codes, :func:`cell_numbers`)
determines its segment in every feature subset, so a table of cells x subsets
(:func:`cell_segments`) replaces the per-row arithmetic. The rows, sorted by
score, are then walked once, each row updating the running sum C = sum W (R - S)
of its segment in every subset (:func:`cell_extremes`): the subsets are the
inner loop, so no segment waits on the update before it (the walk per subset
of :func:`polars_cumdev.kernel.segments.segment_sums` chains the updates of
the few segments of a shallow subset), and the rows are read once, not once per
subset. The subsets are split between the threads, each owning its segments,
and every segment adds its rows in row order: the same bits as
``segment_sums`` and ``segment_extremes``, on any number of threads.

Ties (method.md 1.1 and 2): a segment's open tie is kept apart and its merged
point W' (R' - S') added to C where the tie closes (its next row has another
score, or the walk ends), and the extremes of C are sampled there, as in
``segment_sums``; with every score distinct (``ties`` false) each row is added
and sampled, as in ``segment_extremes``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from polars_cumdev.kernel.prefix import F64, I64, JIT, Array, weight
from polars_cumdev.kernel.segments import TIE_FIRST, TIE_W, TIE_WR, tie_add, tie_open, tie_term

__all__ = ["TABLE_LIMIT", "cell_extremes", "cell_numbers", "cell_segments"]

#: Largest cells x subsets table (int32 entries) the walk tabulates.
TABLE_LIMIT = 1 << 22


@njit(**JIT)
def cell_numbers(codes: Array, counts: I64) -> np.ndarray:
    """Each row's cell of the full cross (mixed radix over all features, last fastest).

    ``codes`` is the features x rows array of level codes, ``counts[f]``
    feature f's number of levels; int32 (the caller keeps the cross below 2^31).
    """
    features, rows = codes.shape[0], codes.shape[1]
    out = np.zeros(rows, dtype=np.int32)
    for f in range(features):
        radix = np.int32(counts[f])
        for i in range(rows):
            out[i] = out[i] * radix + np.int32(codes[f, i])
    return out


@njit(**JIT)
def cell_segments(counts: I64, features: I64, radices: I64, bases: I64) -> np.ndarray:
    """Cells x subsets: the segment number (offset by ``bases``) of each cell in each subset.

    ``features`` and ``radices`` are as in
    :func:`polars_cumdev.kernel.segments.segment_sums` (subsets x depth, -1
    and 1 past a subset's depth); the numbering is theirs. The walk reads the
    table once per row: the caller narrows it to int16 when the numbers fit
    (2187 cells x 64 subsets then take 280 kB, which stay in a core's cache).
    """
    count = counts.shape[0]
    cells = 1
    for f in range(count):
        cells *= counts[f]
    subsets, depth = features.shape
    table = np.empty((cells, subsets), dtype=np.int32)
    digits = np.zeros(max(count, 1), dtype=np.int64)
    for cell in range(cells):
        rest = cell
        for f in range(count - 1, -1, -1):
            digits[f] = rest % counts[f]
            rest //= counts[f]
        for k in range(subsets):
            g = 0
            for j in range(depth):
                f = features[k, j]
                if f < 0:
                    break
                g = g * radices[k, j] + digits[f]
            table[cell, k] = bases[k] + g
    return table


@njit(**JIT)
def _distinct(table: np.ndarray, cell: np.ndarray, steps: F64, state: F64, k0: int, k1: int):
    """Subsets k0 ... k1 - 1 when no two rows tie: extremes after every row."""
    for i in range(steps.shape[0]):
        step = steps[i]
        c = cell[i]
        for k in range(k0, k1):
            g = table[c, k]
            value = state[g, 0] + step
            state[g, 0] = value
            if value > state[g, 1]:
                state[g, 1] = value
            if value < state[g, 2]:
                state[g, 2] = value


@njit(**JIT)
def _tied(
    table: np.ndarray, cell: np.ndarray, weights: F64, r: Array, s: Array, state: F64,
    merged: F64, last: F64, tie: F64, k0: int, k1: int,
):  # fmt: skip
    """Subsets k0 ... k1 - 1 with ties: each tie's merged point added, and the extremes
    taken, where it closes (``tie``: each segment's open tie, columns ``TIE_W`` ...)."""
    for i in range(weights.shape[0]):
        wi = weights[i]
        ri = float(r[i])
        c = cell[i]
        si = float(s[i])
        for k in range(k0, k1):
            g = table[c, k]
            seen = last[g]
            if seen != si:
                if seen == seen:  # not the segment's first row: the tie before closes
                    value = state[g, 0] + tie_term(
                        tie[g, TIE_W], tie[g, TIE_WR], tie[g, TIE_FIRST], seen
                    )
                    state[g, 0] = value
                    if value > state[g, 1]:
                        state[g, 1] = value
                    if value < state[g, 2]:
                        state[g, 2] = value
                merged[g] += 1.0
                last[g] = si
                tie_open(tie, g, wi, ri)
            else:
                tie_add(tie, g, wi, ri)


@njit(**JIT, parallel=True)
def cell_extremes(
    table: np.ndarray,
    cell: np.ndarray,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    total: int,
    ties: bool,
    parts: int,
) -> F64:
    """Per segment number: merged scores, C_n, max C and min C (k >= 1), in one pass.

    Parameters
    ----------
    table, cell
        :func:`cell_segments` (int16 or int32) and :func:`cell_numbers`.
    s, r, w, weighted, scale
        As in :func:`polars_cumdev.kernel.calibration_groups` (rows sorted by score).
    total
        Number of segment numbers over all subsets.
    ties
        Whether two rows may share a score (else the tie bookkeeping is skipped
        and the merged scores are left at 0: the caller counts the rows).
    parts
        Into how many parts the subsets are split, one per thread
        (``numba.get_num_threads()``); the result does not depend on it.

    Returns
    -------
    numpy.ndarray
        ``total`` x 4: the merged scores, C_n, max C, min C (unnormalized,
        rescaled weights; C over the tie-merged points k >= 1); a segment
        without rows has zeros.
    """
    rows = s.shape[0]
    subsets = table.shape[1]
    weights = np.empty(rows if ties else 0)  # with ties, the rows' weights;
    steps = np.empty(0 if ties else rows)  # without, their steps W (R - S)
    for i in range(rows):
        if ties:
            weights[i] = weight(w, weighted, scale, i)
        else:
            steps[i] = weight(w, weighted, scale, i) * (float(r[i]) - float(s[i]))
    state = np.zeros((total, 3))  # C, max C, min C: 24 bytes a segment, to stay in cache
    for g in range(total):
        state[g, 1] = -np.inf
        state[g, 2] = np.inf
    merged = np.zeros(total if ties else 0)
    last = np.full(total if ties else 0, np.nan)
    tie = np.zeros((total if ties else 0, 3))
    parts = max(min(parts, subsets), 1)
    for p in prange(parts):  # parts own disjoint subsets, so disjoint segment numbers
        k0, k1 = p * subsets // parts, (p + 1) * subsets // parts
        if ties:
            _tied(table, cell, weights, r, s, state, merged, last, tie, k0, k1)
        else:
            _distinct(table, cell, steps, state, k0, k1)
    out = np.zeros((total, 4))
    for g in range(total):
        seen = last[g] == last[g] if ties else state[g, 1] > -np.inf
        if seen:
            value = state[g, 0]
            if ties:  # the last tie closes
                value += tie_term(tie[g, TIE_W], tie[g, TIE_WR], tie[g, TIE_FIRST], last[g])
            out[g, 0] = merged[g] if ties else 0.0
            out[g, 1] = value
            out[g, 2] = max(state[g, 1], value)
            out[g, 3] = min(state[g, 2], value)
    return out
