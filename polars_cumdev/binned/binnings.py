"""The three binnings (method.md 3) and the sums per bin, in a reproducible order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.binned.options import _BIN, _FIRST, _LO, _ROW, _SPAN, _SUM_WR, _SUM_WS
from polars_cumdev.method import _names as nm
from polars_cumdev.method.prepare import (
    schema_of,
)

# --------------------------------------------------------------------------
# Bins
# --------------------------------------------------------------------------


def _sorted(frame: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Rows in increasing order of (keys, score, response, weight), with their rank in the group."""
    return frame.sort([*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT]).with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).over(keys).alias(_ROW)
    )


def _equispaced(frame: pl.LazyFrame, keys: Sequence[str], bins: int, unit: bool) -> pl.LazyFrame:
    """Add the index j of the equispaced bin (e_j, e_{j+1}] holding each row's score.

    The estimate ceil((s - lo) / (hi - lo) l) - 1 can be one off when s is
    (nearly) on an edge; one step down and one step up against the edges
    e_k = lo + (hi - lo) k / l, computed exactly as documented, settle it.
    When every score is the same (hi = lo) there is a single bin, 0. Done in
    a few steps so that no sub-expression is repeated in the plan.
    """
    s = pl.col(nm.SCORE)
    lo, span = pl.col(_LO), pl.col(_SPAN)
    if unit:
        bounds = [pl.lit(0.0).alias(_LO), pl.lit(1.0).alias(_SPAN)]
    else:
        low = s.min().over(keys)
        bounds = [low.alias(_LO), (s.max().over(keys) - low).alias(_SPAN)]

    def edge(k: pl.Expr) -> pl.Expr:
        # Polars divides by a scalar as a product with its reciprocal, which
        # can land one unit in the last place away from span * k / l; a
        # divisor that is a column keeps the true division of the spec.
        k = k.cast(pl.Float64)
        return lo + span * k / (k * 0.0 + bins)

    scaled = pl.when(span > 0).then((s - lo) / span * bins).otherwise(0.0)
    # Non-strict cast: a NaN score (rejected by the checks) must not fail first.
    whole = scaled.clip(0.0, float(bins)).ceil().cast(pl.Int64, strict=False).fill_null(1)
    guess = (whole - 1).clip(0, bins - 1)
    down = pl.col(_BIN) - ((pl.col(_BIN) >= 1) & (s <= edge(pl.col(_BIN)))).cast(pl.Int64)
    up = pl.col(_BIN) + ((pl.col(_BIN) <= bins - 2) & (s > edge(pl.col(_BIN) + 1))).cast(pl.Int64)
    return (
        frame.with_columns(bounds)
        .with_columns(guess.alias(_BIN))
        .with_columns(down.alias(_BIN))
        .with_columns(up.alias(_BIN))
        .drop(_LO, _SPAN)
    )


def _equal_count(keys: Sequence[str], bins: int) -> pl.Expr:
    """Index of the equal-count bin: row r of n goes to min(r // q, l - 1), q = max(n // l, 1)."""
    size = (pl.len().over(keys).cast(pl.Int64) // bins).clip(lower_bound=1)
    return (pl.col(_ROW) // size).clip(upper_bound=bins - 1)


def _first_fit(weights: np.ndarray, start: int, target: float, hint: int) -> int:
    """End (exclusive) of the shortest run of rows from ``start`` with ||W||_2/||W||_1 <= target.

    The running sums restart at ``start`` and are accumulated left to right
    (``np.cumsum``), exactly as a row-by-row loop would; the window searched
    doubles until a fit is found or the rows run out (then ``len(weights)``).
    """
    n = weights.size
    window = max(2 * hint, 2)
    while True:
        end = min(n, start + window)
        chunk = weights[start:end]
        with np.errstate(divide="ignore", invalid="ignore"):  # bad weights fail the checks
            ratio = np.sqrt(np.cumsum(chunk * chunk)) / np.cumsum(chunk)
        fits = np.flatnonzero(ratio <= target)
        if fits.size:
            return start + int(fits[0]) + 1
        if end == n:
            return n
        window *= 2


def equal_error_labels(weights: np.ndarray, bins: int, seed: int = 0) -> np.ndarray:
    """Equal-error bins of Remark 5 for weights in increasing order of score.

    The target is equation (40) of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population", U = sqrt(sum W_p^2) / sum W_p over
    the first q = max(floor(n / l), 1) weights of the permutation
    ``numpy.random.default_rng(seed).permutation(n)`` (the sums accumulated in
    that order). Bins 0, 1, ..., l - 2 each grow row by row from their first row
    until their ratio (38) is <= U; bin l - 1 takes every row left (the paper's
    B_l = +inf). If the last bin then holds fewer than half as many rows as the
    bin before it, the two are merged. With equal weights the ratio of k rows is
    1 / sqrt(k), every bin but the last gets exactly q rows and the result is
    the equal-count binning.

    This is a sequential scan: where a bin ends depends on where the previous
    one ended, and the ratio of a run is not monotone in its length, so the
    boundaries are no closed-form function of prefix sums. It runs in NumPy,
    in time linear in n plus a Python step per bin.

    Parameters
    ----------
    weights
        Positive weights, in the order of the rows to be binned.
    bins
        The desired number of bins, l-bar in (40).
    seed
        Seed of the permutation.

    Returns
    -------
    numpy.ndarray
        Int64 bin index of every row, 0, 1, ... without gaps.
    """
    weights = np.asarray(weights, dtype=np.float64)
    n = weights.size
    labels = np.zeros(n, dtype=np.int64)
    if n == 0:
        return labels
    size = max(n // bins, 1)
    sample = weights[np.random.default_rng(seed).permutation(n)[:size]]
    with np.errstate(divide="ignore", invalid="ignore"):  # bad weights fail the checks
        target = np.sqrt(np.cumsum(sample * sample)[-1]) / np.cumsum(sample)[-1]
    starts = []
    start = 0
    while start < n:
        starts.append(start)
        stop = n if len(starts) == bins else _first_fit(weights, start, target, size)
        labels[start:stop] = len(starts) - 1
        start = stop
    if len(starts) >= 2:
        last = n - starts[-1]
        before = starts[-1] - starts[-2]
        if 2 * last < before:
            labels[starts[-1] :] = len(starts) - 2
    return labels


def _equal_error(frame: pl.LazyFrame, keys: Sequence[str], bins: int, seed: int) -> pl.LazyFrame:
    """Attach equal-error bins; each group (contiguous, sorted) is scanned on its own."""
    schema = dict(schema_of(frame))
    schema[_BIN] = pl.Int64

    def label(batch: pl.DataFrame) -> pl.DataFrame:
        weights = batch.get_column(nm.WEIGHT).to_numpy()
        starts = np.flatnonzero(batch.get_column(_ROW).to_numpy() == 0).tolist()
        labels = np.zeros(batch.height, dtype=np.int64)
        for begin, end in zip(starts, [*starts[1:], batch.height][: len(starts)], strict=True):
            labels[begin:end] = equal_error_labels(weights[begin:end], bins, seed)
        return batch.with_columns(pl.Series(_BIN, labels, dtype=pl.Int64))

    return frame.map_batches(label, schema=schema)


def _assign(
    ordered: pl.LazyFrame,
    keys: Sequence[str],
    bins: int,
    binning: str,
    *,
    unit: bool,
    seed: int,
) -> pl.LazyFrame:
    """Add the bin index ``_BIN`` to rows sorted by :func:`_sorted`."""
    if binning == "equispaced":
        return _equispaced(ordered, keys, bins, unit)
    if binning == "equal_count":
        return ordered.with_columns(_equal_count(keys, bins).alias(_BIN))
    return _equal_error(ordered, keys, bins, seed)


def _fsum(values: pl.Expr) -> pl.Expr:
    """Sum of floats, bit for bit reproducible.

    A plain ``sum`` in a group-by may add partial sums in an order that
    changes from run to run (the streaming engine works on morsels in
    parallel). A running sum adds the values one by one in the order of the
    rows, which Polars keeps within each group; the rows come sorted by
    (score, response, weight), so a call gives the same bits every time,
    whatever the order of the input rows.
    """
    return values.cum_sum().last()


def _bin_sums(binned: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Per (keys, bin): sum W, sum W S, sum W R, rows and first score; sorted by keys and bin.

    Only bins holding rows appear, so empty bins are dropped here.
    """
    w = pl.col(nm.WEIGHT)
    return (
        binned.group_by([*keys, _BIN])
        .agg(
            _fsum(w).alias(nm.WEIGHT),
            _fsum(w * pl.col(nm.SCORE)).alias(_SUM_WS),
            _fsum(w * pl.col(nm.RESPONSE)).alias(_SUM_WR),
            pl.len().cast(pl.Int64).alias(nm.ROWS),
            pl.col(nm.SCORE).min().alias(_FIRST),
        )
        .sort([*keys, _BIN])
    )


def _means() -> list[pl.Expr]:
    """Weighted averages of score, (36)-(37), and response, (34)-(35), from :func:`_bin_sums`.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".
    """
    return [
        (pl.col(_SUM_WS) / pl.col(nm.WEIGHT)).alias("score_mean"),
        (pl.col(_SUM_WR) / pl.col(nm.WEIGHT)).alias("response_mean"),
    ]
