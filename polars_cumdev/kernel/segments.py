"""Every segment's calibration sums in one compiled pass per feature subset (Numba).

For :mod:`polars_cumdev.multicalibration`: the rows, sorted by score, are
walked once per feature subset (subsets in parallel, each owning its own
segment numbers), each row updating the sums of the one segment of that
subset it belongs to; the segment's number is the mixed-radix combination of
the row's feature codes, formed on the fly, so nothing is stored per row and
segment. The extremes of C = sum W (R - S) are sampled only where a segment's
tie closes (the row's score differs from the last one seen in that segment, or
the walk ends), so the range is the one of the tie-merged curve (method.md 1.1
and 2): for calibration, merging a tie only hides the partial sums inside it.
Memory is a few numbers per segment number.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from polars_cumdev.kernel.prefix import F64, I64, JIT, Array, weight

__all__ = ["segment_ranges"]


@njit(**JIT, parallel=True)
def segment_ranges(
    codes: Array,
    features: I64,
    radices: I64,
    bases: I64,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    total: int,
) -> F64:
    """W_g times the Kuiper range of C for every segment number of every subset.

    Parameters
    ----------
    codes
        Features x rows array of level codes (rows sorted by score).
    features, radices
        Subsets x depth arrays: the feature of each position of a subset
        (-1 past its depth) and its number of levels.
    bases
        Where each subset's segment numbers start in the output.
    s, r, w, weighted, scale
        As in :func:`polars_cumdev.kernel.calibration_groups`.
    total
        Number of segment numbers over all subsets.

    Returns
    -------
    numpy.ndarray
        ``total`` x 2: W_g (max_k C_k - min_k C_k) with C_0 = 0 (unnormalized,
        rescaled weights), and W_g.
    """
    c = np.zeros(total)
    top = np.zeros(total)
    bottom = np.zeros(total)
    mass = np.zeros(total)
    last = np.full(total, np.nan)
    subsets, depth = features.shape
    rows = s.shape[0]
    steps = np.empty(rows)
    weights = np.empty(rows)
    for i in range(rows):
        weights[i] = weight(w, weighted, scale, i)
        steps[i] = weights[i] * (float(r[i]) - float(s[i]))
    for k in prange(subsets):  # subsets own disjoint segment numbers: no race
        for i in range(rows):
            g = 0
            for j in range(depth):
                f = features[k, j]
                if f < 0:
                    break
                g = g * radices[k, j] + int(codes[f, i])
            g += bases[k]
            si = float(s[i])
            if last[g] != si:  # a new tie opens: the one before is closed
                if c[g] > top[g]:
                    top[g] = c[g]
                if c[g] < bottom[g]:
                    bottom[g] = c[g]
                last[g] = si
            c[g] += steps[i]
            mass[g] += weights[i]
    out = np.empty((total, 2))
    for g in range(total):
        out[g, 0] = max(top[g], c[g]) - min(bottom[g], c[g])
        out[g, 1] = mass[g]
    return out


@njit(**JIT, parallel=True)
def segment_sums(
    codes: Array,
    features: I64,
    radices: I64,
    bases: I64,
    s: Array,
    r: Array,
    w: Array,
    weighted: bool,
    scale: float,
    total: int,
) -> tuple[F64, I64, F64]:
    """Every segment's calibration sums in one walk (the layout of ``calibration_groups``).

    Returns ``(out, first, wr)``: ``out[g]`` holds, at the indices of
    :mod:`polars_cumdev.kernel.walks` (N_ROWS ... OVERFLOWS), the rows, the
    merged scores (ties, method.md 1.1), W_g, and unnormalized C_n, max C,
    min C (over the tie-merged points, k >= 1) and sigma^2's sum
    sum_j W_j^2 S_j (1 - S_j), which equals the merged form
    sum_k W'_k^2 f_k S'_k (1 - S'_k) of (50) of M. Tygert, "Cumulative deviation
    of a subpopulation from the full population"; the error columns are 0 as for
    calibration. ``first[g]`` is the segment's first row (-1 if none), ``wr[g]``
    the sum of W_j R_j.
    """
    out = np.zeros((total, 12))
    first = np.full(total, -1, dtype=np.int64)
    wr = np.zeros(total)
    c = np.zeros(total)
    top = np.full(total, -np.inf)
    bottom = np.full(total, np.inf)
    last = np.full(total, np.nan)
    subsets, depth = features.shape
    rows = s.shape[0]
    weights = np.empty(rows)
    for i in range(rows):
        weights[i] = weight(w, weighted, scale, i)
    for k in prange(subsets):  # subsets own disjoint segment numbers: no race
        for i in range(rows):
            g = 0
            for j in range(depth):
                f = features[k, j]
                if f < 0:
                    break
                g = g * radices[k, j] + int(codes[f, i])
            g += bases[k]
            si = float(s[i])
            ri = float(r[i])
            wi = weights[i]
            if last[g] != si:
                if first[g] < 0:
                    first[g] = i
                else:
                    if c[g] > top[g]:
                        top[g] = c[g]
                    if c[g] < bottom[g]:
                        bottom[g] = c[g]
                out[g, 1] += 1.0
                last[g] = si
            c[g] += wi * (ri - si)
            out[g, 0] += 1.0
            out[g, 2] += wi
            out[g, 6] += wi * wi * si * (1.0 - si)
            wr[g] += wi * ri
    for g in range(total):
        if first[g] >= 0:
            out[g, 3] = c[g]
            out[g, 4] = max(top[g], c[g])
            out[g, 5] = min(bottom[g], c[g])
    return out, first, wr
