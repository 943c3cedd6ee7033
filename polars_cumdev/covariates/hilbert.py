"""Position along a Hilbert space-filling curve: one ordering for several covariates.

M. Tygert, "Controlling for multiple covariates" (2021), runs the
one-dimensional cumulative method on the order in which a Hilbert curve
visits the individuals' covariate vectors: points close along the curve are
close in covariate space, so a stretch of the cumulative graph is again a
local average of the deviation (``shared/spec/paired-and-covariates.md``,
section 2).

Two steps, both vectorized over the rows (Python loops run over bits and
covariates only):

1. each covariate becomes an integer grid coordinate in [0, 2^bits), by its
   dense rank (the default) or by min-max scaling (:func:`grid_coordinates`);
2. the distance along the curve of the grid point is Skilling's transpose
   algorithm (J. Skilling, "Programming the Hilbert curve", AIP Conf. Proc.
   707, 2004): undo the excess work and Gray-encode the coordinates
   (:func:`transpose`), then interleave their bits, most significant first
   (:func:`hilbert_distances`). With the same coordinates in the same order
   it equals ``distances_from_points`` of the ``hilbertcurve`` package.

From :data:`polars_cumdev.covariates.ranking.COMPILED_ROWS` rows on, with Numba
installed, both steps run compiled instead (:mod:`polars_cumdev.covariates.ranking`:
dense ranks by a radix sort, the covariates on threads, and the state
machine row by row), with the same coordinates and the same result.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.covariates.ranking import (
    compiled_distances,
    compiled_rank_grid,
    dense_ranks,
    use_compiled,
)
from polars_cumdev.covariates.tables import MAX_TABLE_DIMENSIONS, distances
from polars_cumdev.errors import (
    ColumnTypeError,
    InvalidParameterError,
    InvalidValuesError,
)

__all__ = [
    "MAX_BITS",
    "NORMALIZATIONS",
    "default_bits",
    "grid_coordinates",
    "hilbert_distances",
    "hilbert_index",
    "transpose",
    "transposed_distances",
]

#: The ways a covariate becomes a grid coordinate.
NORMALIZATIONS = ("rank", "range")

#: Largest number of bits per covariate: 2^32 levels resolve any covariate an
#: analysis meets and keep the coordinates in 32-bit words.
MAX_BITS = 32


def _check_bits(bits: int | None, d: int) -> int | None:
    if d < 1:
        raise InvalidParameterError("hilbert_index needs at least one covariate column")
    if bits is None:
        return None
    if isinstance(bits, bool) or not isinstance(bits, int) or bits < 1:
        raise InvalidParameterError(f"`bits` must be a positive integer, got {bits!r}")
    if bits * d > 63 or bits > MAX_BITS:
        raise InvalidParameterError(
            f"`bits` = {bits} with {d} covariate(s) needs {bits * d} bits; the index must fit "
            f"in 63 bits (bits * d <= 63) and bits <= {MAX_BITS}: use bits <= "
            f"{min(63 // d, MAX_BITS)}"
        )
    return bits


def default_bits(d: int, distinct: int, normalize: str) -> int:
    """Bits per covariate used when ``bits=None``.

    ``min(floor(63 / d), 32)``; with ``normalize="rank"`` also no more than
    ``ceil(log2(distinct))`` (at least 1), ``distinct`` being the largest
    number of distinct values of a covariate: that many bits already give
    every distinct value its own coordinate, and fewer bits make the index
    cheaper to compute.
    """
    cap = min(63 // d, MAX_BITS)
    if normalize == "rank":
        needed = max(1, int(distinct - 1).bit_length())
        return min(cap, needed)
    return cap


def _validated(series: pl.Series, name: str, finite: bool = True) -> pl.Series:
    """``series`` as a numeric column without nulls, NaN or infinities, or a named error.

    ``finite=False`` leaves NaN and infinities to the caller.
    """
    dtype = series.dtype
    if dtype == pl.Boolean:
        series = series.cast(pl.UInt8)
    elif not dtype.is_numeric():
        raise ColumnTypeError(
            f"covariate column {name!r} has dtype {dtype}; Hilbert ordering needs numeric "
            "covariates"
        )
    problems = []
    nulls = series.null_count()
    if nulls:
        problems.append(f"{nulls} null value(s)")
    if finite and series.dtype.is_float():
        nans = int(series.is_nan().sum())
        infinite = int(series.is_infinite().sum())
        if nans:
            problems.append(f"{nans} NaN value(s)")
        if infinite:
            problems.append(f"{infinite} infinite value(s)")
    if problems:
        raise InvalidValuesError(
            f"covariate column {name!r} has {' and '.join(problems)} among {series.len()} rows"
        )
    return series


def _scaled_ranks(rank: np.ndarray, distinct: int, bits: int) -> np.ndarray:
    """floor(rank * 2^bits / distinct), exactly (rank < distinct).

    One shift and one division when rank * 2^bits fits in 64 bits, else binary
    long division, one step per bit.
    """
    if distinct.bit_length() + bits <= 64:
        return (rank.astype(np.uint64) << np.uint64(bits)) // np.uint64(distinct)
    n = np.uint64(distinct)
    quotient = np.zeros(rank.shape, dtype=np.uint64)
    remainder = rank.astype(np.uint64)
    for _ in range(bits):
        remainder <<= np.uint64(1)
        bit = remainder >= n
        remainder -= n * bit
        quotient <<= np.uint64(1)
        quotient |= bit
    return quotient


def grid_coordinates(series: pl.Series, bits: int, normalize: str, name: str = "") -> np.ndarray:
    """Integer grid coordinates in [0, 2^bits) of one covariate (uint64 array).

    The coordinates :func:`hilbert_index` uses, for one column on its own
    (the same dense ranks and :func:`_range_grid`).

    ``normalize="rank"``: with r the dense rank counted from 0 (equal values
    share it) and m the number of distinct values, floor(r 2^bits / m),
    computed exactly; distinct values keep distinct coordinates whenever
    m <= 2^bits. ``normalize="range"``: floor((x - min) / (max - min) 2^bits)
    in double precision, the maximum clipped to 2^bits - 1 (all 0 when the
    column is constant).
    """
    series = _validated(series, name or series.name)
    if series.len() == 0:
        return np.zeros(0, dtype=np.uint64)
    if normalize == "rank":
        if use_compiled(series.len()):
            rank = dense_ranks(series)
        else:
            rank = series.rank("dense").to_numpy().astype(np.uint64) - np.uint64(1)
        distinct = int(rank.max()) + 1
        return _scaled_ranks(rank, distinct, bits)
    return _range_grid(series, bits).astype(np.uint64)


def _rank_bits(d: int, distinct: int) -> int:
    return default_bits(d, distinct, "rank")


def _grid_distances(grid: np.ndarray, bits: int) -> np.ndarray:
    """Distances of the grid points ``grid[:, i]`` (uint32, one row per axis)."""
    if grid.shape[0] <= MAX_TABLE_DIMENSIONS:
        return compiled_distances(grid, bits)
    return transposed_distances(list(grid), bits)


def _range_grid(series: pl.Series, bits: int) -> np.ndarray:
    """Min-max grid coordinates (see :func:`grid_coordinates`) of a checked column (uint32).

    Every value is first scaled by a power of two, exactly: by 1/4 when the
    column reaches 1 in magnitude, so that max - min cannot overflow however
    far apart they are; by 2^600 otherwise, so that subnormal values and their
    differences become normal numbers and the quotient keeps its precision.
    The quotient is NumPy's correctly rounded division.
    """
    x = series.cast(pl.Float64).to_numpy()
    low, high = float(x.min()), float(x.max())
    if not high > low:
        return np.zeros(x.size, dtype=np.uint32)
    factor = 0.25 if max(abs(low), abs(high)) >= 1.0 else 2.0**600
    top = float(2**bits)
    quotient = (x * factor - low * factor) / (high * factor - low * factor)
    return np.clip(np.floor(quotient * top), 0.0, top - 1.0).astype(np.uint32)


def transpose(coordinates: list[np.ndarray], bits: int) -> list[np.ndarray]:
    """Skilling's AxestoTranspose: the Hilbert index of each point in transposed form.

    ``coordinates`` holds one unsigned integer array per covariate (values
    < 2^bits); new arrays are returned, the inputs are left unchanged. Bit
    k of the i-th output array is bit (k d + d - 1 - i) of the distance
    along the curve.
    """
    x = [c.copy() for c in coordinates]
    d = len(x)
    dtype = x[0].dtype.type
    top = dtype(1) << dtype(bits - 1)
    # Undo the excess work, from the most significant bit down: where bit q
    # of axis i is set invert the lower bits of axis 0, else exchange the
    # lower bits of axes 0 and i.
    q = top
    while q > 1:
        low = dtype(q - 1)
        for i in range(d):
            has = (x[i] & q) != 0
            if i == 0:
                x[0] ^= np.where(has, low, dtype(0))
                continue
            swap = (x[0] ^ x[i]) & low
            x[0] ^= np.where(has, low, swap)
            x[i] ^= np.where(has, dtype(0), swap)
        q = dtype(q >> dtype(1))
    # Gray encode.
    for i in range(1, d):
        x[i] ^= x[i - 1]
    flips = np.zeros_like(x[0])
    q = top
    while q > 1:
        flips ^= np.where((x[d - 1] & q) != 0, dtype(q - 1), dtype(0))
        q = dtype(q >> dtype(1))
    for i in range(d):
        x[i] ^= flips
    return x


def hilbert_distances(coordinates: list[np.ndarray], bits: int) -> np.ndarray:
    """Distance along the Hilbert curve (uint64) of integer grid points, one array per axis.

    Skilling's transpose (:func:`transpose`) followed by interleaving the
    bits: bit ``bits - 1`` of axes 0..d-1, then bit ``bits - 2`` of each,
    and so on, most significant first. ``bits * d`` must not exceed 63. Up
    to four covariates the same steps run as a table-driven state machine
    reading several bits per pass (:mod:`polars_cumdev.covariates.tables`,
    identical results, far fewer passes over the rows);
    :func:`transposed_distances` is the direct form.
    """
    d = len(coordinates)
    _check_bits(bits, d)
    if d <= MAX_TABLE_DIMENSIONS and use_compiled(len(coordinates[0])):
        return compiled_distances(np.stack([np.asarray(c, np.uint32) for c in coordinates]), bits)
    if d <= MAX_TABLE_DIMENSIONS:
        return distances(list(coordinates), bits)
    return transposed_distances(coordinates, bits)


def transposed_distances(coordinates: list[np.ndarray], bits: int) -> np.ndarray:
    """:func:`hilbert_distances` by :func:`transpose` and bit interleaving (any d)."""
    word = np.uint32 if bits <= 32 else np.uint64
    axes = transpose([np.asarray(c).astype(word) for c in coordinates], bits)
    out = np.zeros(axes[0].shape, dtype=np.uint64)
    for k in range(bits - 1, -1, -1):
        for axis in axes:
            out <<= np.uint64(1)
            out |= ((axis >> word(k)) & word(1)).astype(np.uint64)
    return out


def hilbert_index(
    *columns: str | pl.Expr, bits: int | None = None, normalize: str = "rank"
) -> pl.Expr:
    """Position of each row along a Hilbert curve through its covariates (UInt64 expression).

    Each covariate is mapped to an integer coordinate in [0, 2^bits) by
    :func:`grid_coordinates` and the grid point's distance along the curve
    is Skilling's (:func:`hilbert_distances`; paired-and-covariates.md
    section 2, after Tygert 2021). Rows in the same grid cell share the
    index; only its order matters. The expression stays lazy: it is one
    ``map_batches`` over the struct of the columns, and needs the whole
    column at once (use it in ``select`` / ``with_columns``, not in a
    ``group_by`` aggregation unless a per-group curve is wanted).

    Parameters
    ----------
    *columns
        The covariates, as column names or expressions (d >= 1 of them),
        numeric or boolean. The order of the covariates changes the curve.
    bits
        Bits per covariate; ``bits * d <= 63`` and ``bits <= 32``. ``None``
        picks :func:`default_bits`: ``min(floor(63 / d), 32)``, and with
        rank coordinates no more than needed to give every distinct value
        its own coordinate.
    normalize
        ``"rank"`` (dense rank scaled to the grid; invariant to monotone
        transforms of a covariate and insensitive to skew) or ``"range"``
        (min-max scaling).

    Returns
    -------
    pl.Expr
        A UInt64 expression named ``hilbert``.

    Raises
    ------
    InvalidParameterError
        At once, for no columns, bad ``bits`` or ``normalize``.
    ColumnTypeError, InvalidValuesError
        When collected: a non-numeric covariate, or nulls, NaN or
        infinities in one (the message names the column).
    """
    if normalize not in NORMALIZATIONS:
        raise InvalidParameterError(
            f"`normalize` must be one of {NORMALIZATIONS}, got {normalize!r}"
        )
    bits = _check_bits(bits, len(columns))
    exprs = [pl.col(c) if isinstance(c, str) else c for c in columns]
    if not all(isinstance(e, pl.Expr) for e in exprs):
        raise InvalidParameterError("hilbert_index takes column names or polars expressions")
    fields = [f"c{i}" for i in range(len(exprs))]
    labels = [c if isinstance(c, str) else str(c) for c in columns]

    ranked = normalize == "rank"

    def compute(batch: pl.Series) -> pl.Series:
        fast = ranked and use_compiled(batch.len())
        parts = [
            _validated(batch.struct.field(f), label, finite=not fast)
            for f, label in zip(fields, labels, strict=True)
        ]
        if batch.len() == 0:
            return pl.Series("hilbert", [], dtype=pl.UInt64)
        if fast:  # radix-sorted ranks, columns on threads; NaN and infinities found there

            def refuse(j: int) -> None:
                _validated(parts[j], labels[j])

            grid, chosen = compiled_rank_grid(parts, bits, _rank_bits, refuse)
            return pl.Series("hilbert", _grid_distances(grid, chosen), dtype=pl.UInt64)
        if ranked:  # dense ranks, computed by Polars (all columns at once)
            frame = pl.DataFrame({f: part for f, part in zip(fields, parts, strict=True)})
            frame = frame.select(pl.all().rank("dense"))
            ranks = [frame[f].to_numpy().astype(np.uint64) for f in fields]
            counts = [int(r.max()) for r in ranks]  # ranks count from 1: the max is m
            chosen = bits or default_bits(len(parts), max(counts), normalize)
            grid = [
                _scaled_ranks(r - np.uint64(1), m, chosen)
                for r, m in zip(ranks, counts, strict=True)
            ]
        else:  # min-max coordinates
            chosen = fixed
            grid = [_range_grid(part, chosen) for part in parts]
        return pl.Series("hilbert", hilbert_distances(grid, chosen), dtype=pl.UInt64)

    named = [e.alias(f) for e, f in zip(exprs, fields, strict=True)]
    fixed = bits or default_bits(len(exprs), 0, normalize)
    packed = pl.struct(named)
    return packed.map_batches(compute, return_dtype=pl.UInt64).alias("hilbert")
