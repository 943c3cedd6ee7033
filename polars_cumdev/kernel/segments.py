"""Every segment's calibration sums in one compiled pass per feature subset (Numba).

For :mod:`polars_cumdev.multicalibration`: the rows, sorted by score, are
walked once per feature subset (subsets in parallel, each owning its own
segment numbers), each row updating the running sum C = sum W (R - S) of the
one segment of that subset it belongs to; the segment's number is the
mixed-radix combination of the row's feature codes, formed on the fly, so
nothing is stored per row and segment. The extremes of C are sampled only
where a segment's tie closes (the row's score differs from the last one seen
in that segment, or the walk ends), so the range is the one of the
tie-merged curve (method.md 1.1 and 2): for calibration, merging a tie only
hides the partial sums inside it. The open tie's W and W R are kept apart and
its merged point W' (R' - S') is added to C when it closes
(:func:`tie_term`), as :func:`polars_cumdev.kernel.calibration_groups` adds
it: adding every row's W (R - S) to a running C lost up to 1.7e-12 of the
whole population's range at 1e6 rows with 101 distinct scores, against
1.8e-15 now (benchmarks/README.md, "Ties merged before they are added").

The additive sums (rows, W, sum W^2 S (1 - S), sum W R and the first row) do
not need a walk per subset: :func:`cell_sums` gathers them once per cell of
the full cross of the features, and each subset's table is a marginal of it
(:func:`polars_cumdev.multicalibration.family.marginals`); only when that cross
is too large are they summed in the walk itself. The bootstrap
(:func:`segment_ranges`) walks a block of resamples at once, the scores and
segment numbers shared and the resamples' sums side by side in memory.
Memory is a few numbers per segment number (times the block of resamples).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from polars_cumdev.kernel.prefix import F64, I64, JIT, Array, weight
from polars_cumdev.kernel.walks import GROUP_COLUMNS, merged_response

__all__ = [
    "TIE_FIRST",
    "TIE_W",
    "TIE_WR",
    "cell_sums",
    "segment_extremes",
    "segment_ranges",
    "segment_sums",
    "tie_add",
    "tie_open",
    "tie_term",
]

# Columns of a segment's open tie in the walks with ties: W, W R and the first
# row's R (NaN once a row of the tie has another R: the tie is mixed).
TIE_W, TIE_WR, TIE_FIRST = range(3)


@njit(**JIT)
def tie_term(tie_w: float, tie_wr: float, first: float, score: float) -> float:
    """The merged point's W' (R' - S') (method.md 1.1 and 2), as ``_walk`` and
    ``_accumulate`` of :mod:`polars_cumdev.kernel.walks` form it (``first`` NaN: the
    tie is mixed)."""
    return tie_w * (merged_response(tie_w, tie_wr, first, first != first) - score)


@njit(**JIT)
def tie_open(tie: F64, g: int, wi: float, ri: float) -> None:
    """Open segment g's tie with one row."""
    tie[g, TIE_W] = wi
    tie[g, TIE_WR] = wi * ri
    tie[g, TIE_FIRST] = ri


@njit(**JIT)
def tie_add(tie: F64, g: int, wi: float, ri: float) -> None:
    """One more row of segment g's open tie."""
    tie[g, TIE_W] += wi
    tie[g, TIE_WR] += wi * ri
    if ri != tie[g, TIE_FIRST]:
        tie[g, TIE_FIRST] = np.nan


@njit(**JIT)
def _number(codes: Array, features: I64, radices: I64, k: int, depth: int, i: int) -> int:
    """Row i's segment number within subset k (mixed radix, last feature fastest)."""
    g = 0
    for j in range(depth):
        f = features[k, j]
        if f < 0:
            break
        g = g * radices[k, j] + np.int64(codes[f, i])
    return g


@njit(**JIT)
def _first_three(features: I64, radices: I64, k: int) -> tuple[int, int, int, int, int, bool]:
    """Subset k's first three features and the radices of the 2nd and 3rd (-1 and 1 past
    its depth), and whether it has more than three (then numbered by :func:`_number`)."""
    depth = features.shape[1]
    f0 = features[k, 0]
    f1 = features[k, 1] if depth > 1 else -1
    f2 = features[k, 2] if depth > 2 else -1
    r1 = radices[k, 1] if depth > 1 else 1
    r2 = radices[k, 2] if depth > 2 else 1
    return f0, f1, f2, r1, r2, depth > 3 and features[k, 3] >= 0


@njit(**JIT, parallel=True)
def segment_ranges(
    codes: Array,
    features: I64,
    radices: I64,
    bases: I64,
    s: Array,
    bits: Array,
    w: Array,
    weighted: bool,
    scale: float,
    total: int,
) -> F64:
    """W_g times the Kuiper range of C for every segment number, for a block of resamples.

    Parameters
    ----------
    codes
        Features x rows array of level codes (rows sorted by score).
    features, radices
        Subsets x depth arrays: the feature of each position of a subset
        (-1 past its depth) and its number of levels.
    bases
        Where each subset's segment numbers start in the output.
    s, w, weighted, scale
        As in :func:`polars_cumdev.kernel.calibration_groups`.
    bits
        Rows x B array of responses (0/1, one column per resample).
    total
        Number of segment numbers over all subsets.

    Returns
    -------
    numpy.ndarray
        ``total`` x B: W_g (max_k C_k - min_k C_k) with C_0 = 0
        (unnormalized, rescaled weights), one column per resample.
    """
    rows, block = bits.shape
    subsets, depth = features.shape
    c = np.zeros((total, block))
    top = np.zeros((total, block))
    bottom = np.zeros((total, block))
    last = np.full(total, np.nan)
    tie_w = np.zeros(total)  # the open tie's W, and per resample its W R and first R
    tie_wr = np.zeros((total, block))
    tie_first = np.zeros((total, block))
    for k in prange(subsets):  # subsets own disjoint segment numbers: no race
        base = bases[k]
        for i in range(rows):
            g = base + _number(codes, features, radices, k, depth, i)
            si = float(s[i])
            wi = weight(w, weighted, scale, i)
            seen = last[g]
            if seen != si:  # a new tie opens: the one before is closed
                if seen == seen:
                    for b in range(block):
                        cg = c[g, b] + tie_term(tie_w[g], tie_wr[g, b], tie_first[g, b], seen)
                        c[g, b] = cg
                        top[g, b] = max(top[g, b], cg)
                        bottom[g, b] = min(bottom[g, b], cg)
                last[g] = si
                tie_w[g] = wi
                for b in range(block):
                    bi = float(bits[i, b])
                    tie_wr[g, b] = wi * bi
                    tie_first[g, b] = bi
            else:
                tie_w[g] += wi
                for b in range(block):
                    bi = float(bits[i, b])
                    tie_wr[g, b] += wi * bi
                    if bi != tie_first[g, b]:
                        tie_first[g, b] = np.nan
    out = np.zeros((total, block))
    for g in range(total):
        seen = last[g]
        if seen == seen:  # the last tie closes
            for b in range(block):
                cg = c[g, b] + tie_term(tie_w[g], tie_wr[g, b], tie_first[g, b], seen)
                out[g, b] = max(top[g, b], cg) - min(bottom[g, b], cg)
    return out


@njit(**JIT)
def cell_sums(
    codes: Array, radices: I64, s: Array, r: Array, w: Array, weighted: bool, scale: float
) -> tuple[F64, I64]:
    """The additive sums of every cell of the full cross of the features, in one pass.

    ``radices[f]`` is feature f's number of levels; cells are numbered in
    mixed radix (last feature fastest). Returns ``(sums, first)``: per cell
    the rows, W, sum W^2 S (1 - S) and sum W R (rescaled weights), and the
    cell's first row (-1 if empty).
    """
    features = radices.shape[0]
    cells = 1
    for f in range(features):
        cells *= radices[f]
    sums = np.zeros((cells, 4))
    first = np.full(cells, -1, dtype=np.int64)
    for i in range(s.shape[0]):
        g = 0
        for f in range(features):
            g = g * radices[f] + np.int64(codes[f, i])
        si = float(s[i])
        wi = weight(w, weighted, scale, i)
        if first[g] < 0:
            first[g] = i
        sums[g, 0] += 1.0
        sums[g, 1] += wi
        sums[g, 2] += wi * wi * si * (1.0 - si)
        sums[g, 3] += wi * float(r[i])
    return sums, first


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
    additive: bool,
) -> tuple[F64, I64, F64]:
    """Every segment's calibration sums in one walk (the layout of ``calibration_groups``).

    Returns ``(out, first, wr)``: ``out[g]`` holds, at the indices of
    :mod:`polars_cumdev.kernel.walks` (N_ROWS ... OVERFLOWS), the rows, the
    merged scores (ties, method.md 1.1), W_g, and unnormalized C_n, max C,
    min C (over the tie-merged points, k >= 1) and sigma^2's sum
    sum_j W_j^2 S_j (1 - S_j), which equals the merged form
    sum_k W'_k^2 f_k S'_k (1 - S'_k) of (50) of M. Tygert, "Cumulative deviation
    of a subpopulation from the full population"; the error columns are 0 as for
    calibration, and so are the effective events' EVENTS_3 and EVENTS_4 (the
    audit's finite-sample step counts those from the rows). ``first[g]`` is the
    segment's first row (-1 if none), ``wr[g]`` the sum of W_j R_j. With
    ``additive`` false, the rows, W_g, sigma^2's sum, ``first`` and ``wr`` are
    left at 0 (and -1): the caller takes them from :func:`cell_sums`.
    """
    out = np.zeros((total, GROUP_COLUMNS))
    first = np.full(total, -1, dtype=np.int64)
    wr = np.zeros(total)
    c = np.zeros(total)
    tie = np.zeros((total, 3))  # the open tie: TIE_W, TIE_WR, TIE_FIRST
    top = np.full(total, -np.inf)
    bottom = np.full(total, np.inf)
    last = np.full(total, np.nan)
    subsets, depth = features.shape
    rows = s.shape[0]
    weights = np.empty(rows)
    for i in range(rows):
        weights[i] = weight(w, weighted, scale, i)
    for k in prange(subsets):  # subsets own disjoint segment numbers: no race
        base = bases[k]
        f0, f1, f2, r1, r2, deep = _first_three(features, radices, k)
        for i in range(rows):
            if deep:
                g = _number(codes, features, radices, k, depth, i)
            else:
                g = 0
                if f0 >= 0:
                    g = np.int64(codes[f0, i])
                    if f1 >= 0:
                        g = g * r1 + np.int64(codes[f1, i])
                        if f2 >= 0:
                            g = g * r2 + np.int64(codes[f2, i])
            g += base
            si = float(s[i])
            wi = weights[i]
            ri = float(r[i])
            seen = last[g]
            if seen != si:
                if seen == seen:  # not the segment's first row: the tie before closes
                    cg = c[g] + tie_term(tie[g, TIE_W], tie[g, TIE_WR], tie[g, TIE_FIRST], seen)
                    c[g] = cg
                    if cg > top[g]:
                        top[g] = cg
                    if cg < bottom[g]:
                        bottom[g] = cg
                out[g, 1] += 1.0
                last[g] = si
                tie_open(tie, g, wi, ri)
            else:
                tie_add(tie, g, wi, ri)
            if additive:
                if first[g] < 0:
                    first[g] = i
                out[g, 0] += 1.0
                out[g, 2] += wi
                out[g, 6] += wi * wi * si * (1.0 - si)
                wr[g] += wi * ri
    for g in range(total):
        seen = last[g]
        if seen == seen:  # the last tie closes
            cg = c[g] + tie_term(tie[g, TIE_W], tie[g, TIE_WR], tie[g, TIE_FIRST], seen)
            out[g, 3] = cg
            out[g, 4] = max(top[g], cg)
            out[g, 5] = min(bottom[g], cg)
    return out, first, wr


@njit(**JIT, parallel=True)
def segment_extremes(
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
    """C_n, max C and min C (k >= 1) of every segment number when no two rows tie.

    With every score distinct each row is a tie of its own in every segment,
    so the extremes are taken after every row and no last score is kept:
    :func:`segment_sums`' walk without its tie bookkeeping (the rest of its
    sums come from :func:`cell_sums`). Returns ``total`` x 3 (unnormalized,
    rescaled weights; 0 for a segment without rows).
    """
    subsets, depth = features.shape
    rows = s.shape[0]
    steps = np.empty(rows)
    for i in range(rows):
        steps[i] = weight(w, weighted, scale, i) * (float(r[i]) - float(s[i]))
    c = np.zeros(total)
    top = np.full(total, -np.inf)
    bottom = np.full(total, np.inf)
    for k in prange(subsets):  # subsets own disjoint segment numbers: no race
        base = bases[k]
        f0, f1, f2, r1, r2, deep = _first_three(features, radices, k)
        for i in range(rows):
            if deep:
                g = _number(codes, features, radices, k, depth, i)
            else:
                g = 0
                if f0 >= 0:
                    g = np.int64(codes[f0, i])
                    if f1 >= 0:
                        g = g * r1 + np.int64(codes[f1, i])
                        if f2 >= 0:
                            g = g * r2 + np.int64(codes[f2, i])
            g += base
            cg = c[g] + steps[i]
            c[g] = cg
            if cg > top[g]:
                top[g] = cg
            if cg < bottom[g]:
                bottom[g] = cg
    out = np.zeros((total, 3))
    for g in range(total):
        if top[g] > -np.inf:
            out[g, 0] = c[g]
            out[g, 1] = top[g]
            out[g, 2] = bottom[g]
    return out
