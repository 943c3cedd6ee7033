"""Expected calibration errors and their sweep over bins.

Equations (3)-(4) of Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu, "Metrics of
calibration for probabilistic predictions" (J. Mach. Learn. Res. 23, 2022).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.binned.binnings import _assign, _bin_sums, _fsum, _sorted
from polars_cumdev.binned.options import (
    _FIRST,
    _GAP,
    _SUM_WR,
    _SUM_WS,
    _WIDTH,
    BINNINGS,
    DEFAULT_SWEEP,
    ECE_COLUMNS,
    WEIGHTINGS,
    _check_bins,
    _check_choice,
    _check_int,
    _unit_checks,
)
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.prepare import (
    FrameLike,
    Prepared,
    prepare,
)
from polars_cumdev.method.weights import rescale

# --------------------------------------------------------------------------
# Expected calibration errors
# --------------------------------------------------------------------------


def _prepare_probabilities(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None,
    by: str | Sequence[str] | None,
    reserved: Sequence[str],
) -> tuple[Prepared, pl.LazyFrame, list[str]]:
    """Prepare for the ECEs: values in [0, 1]; a constant key when there is no ``by``."""
    prepared = prepare(
        frame, score=score, response=response, weight=weight, by=by, reserved=reserved
    )
    prepared.checks += _unit_checks(
        score, response, "the ECEs need probabilities (scores and responses in [0, 1])"
    )
    rows, _ = rescale(prepared.gated())
    if prepared.keys:
        return prepared, rows, list(prepared.keys)
    return prepared, rows.with_columns(pl.lit(0).alias(nm.GROUP)), [nm.GROUP]


def _ece(
    ordered: pl.LazyFrame,
    keys: list[str],
    bins: int,
    binning: str,
    weighting: str,
    seed: int,
) -> pl.LazyFrame:
    """ECE1 and ECE2 of every group, (3)-(4), for one number of bins.

    Equation numbers are those of Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu,
    "Metrics of calibration for probabilistic predictions".
    """
    sums = _bin_sums(_assign(ordered, keys, bins, binning, unit=True, seed=seed), keys)
    gap = (pl.col(_SUM_WR) - pl.col(_SUM_WS)) / pl.col(nm.WEIGHT)  # Rbar_j - Sbar_j
    if weighting == "count":
        width = pl.col(nm.WEIGHT) / _fsum(pl.col(nm.WEIGHT)).over(keys)
    elif binning == "equispaced":
        width = pl.lit(1.0 / bins)
    else:
        # S^1_{j+1} - S^1_j, with S^1_{m+1} = 1 after the last non-empty bin.
        width = pl.col(_FIRST).shift(-1).over(keys).fill_null(1.0) - pl.col(_FIRST)
    return (
        sums.with_columns(width.alias(_WIDTH), gap.alias(_GAP))
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
            pl.len().cast(pl.Int64).alias("bins"),
            _fsum(pl.col(_WIDTH) * pl.col(_GAP).abs()).alias("ece1"),
            _fsum(pl.col(_WIDTH) * pl.col(_GAP) ** 2).alias("ece2"),
        )
        .with_columns(pl.lit(binning).alias("binning"), pl.lit(weighting).alias("weighting"))
    )


@entry_point("score", "response", "weight", "by")
def ece(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    bins: int = 10,
    binning: str = "equispaced",
    weighting: str = "width",
    by: Column | Sequence[Column] | None = None,
    seed: int = 0,
) -> pl.LazyFrame:
    """Expected calibration errors ECE1 and ECE2 (the ECE paper's equations (4) and (3)).

    The paper: Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu, "Metrics of calibration for
    probabilistic predictions" (J. Mach. Learn. Res. 23, 2022).

    With Rbar_j and Sbar_j the weighted averages of the responses and scores
    in bin j (as in (34) and (36) of the subpopulation paper),

        ECE1 = sum_j width_j |Rbar_j - Sbar_j|,
        ECE2 = sum_j width_j (Rbar_j - Sbar_j)^2,

    summed over the non-empty bins. ``weighting="width"`` is the papers'
    Riemann sum: width_j = 1/l for equispaced bins (which partition [0, 1]);
    for equal-count and equal-error bins width_j = S^1_{j+1} - S^1_j, the
    first (smallest) score of the next non-empty bin minus that of bin j,
    with S^1 = 1 after the last bin. ``weighting="count"`` is the convention
    most used in machine learning: width_j is bin j's share of the total
    weight (its share of the rows when unweighted). Either way the value
    depends on the number of bins (see :func:`ece_sweep`), unlike the ECCEs.

    Parameters
    ----------
    frame
        The data, DataFrame or LazyFrame.
    score, response, weight
        Column names; scores are predicted probabilities and responses lie in
        [0, 1] (checked). ``weight=None`` weights rows equally.
    bins
        The number l of bins, a positive int.
    binning
        ``"equispaced"``, ``"equal_count"`` or ``"equal_error"``, as in
        :func:`reliability` with ``calibration=True``.
    weighting
        ``"width"`` (bin widths, the papers' (3)-(4)) or ``"count"`` (bin
        weight shares).
    by
        Optional grouping column(s): one row per group, all groups computed
        in the same query, each binned on its own.
    seed
        Seed of the permutation of (40) for ``"equal_error"``.

    Returns
    -------
    pl.LazyFrame
        One row (per group, the largest ``ece1`` first, then by the ``by``
        columns; binned errors give no p-value): the ``by`` columns,
        ``n`` (rows), ``bins`` (non-empty bins used), ``ece1``, ``ece2``,
        ``binning`` and ``weighting``.

    Raises
    ------
    InvalidParameterError
        At once, for a bad ``bins``, ``binning``, ``weighting`` or ``seed``.
    InvalidValuesError
        On collection, for scores or responses outside [0, 1] and the other
        value problems of :func:`polars_cumdev.method.prepare.prepare`.
    """
    bins = _check_bins(bins)
    binning = _check_choice(binning, "binning", BINNINGS)
    weighting = _check_choice(weighting, "weighting", WEIGHTINGS)
    seed = _check_int(seed, "seed", 0)
    prepared, data, keys = _prepare_probabilities(frame, score, response, weight, by, ECE_COLUMNS)
    result = _ece(_sorted(data, keys), keys, bins, binning, weighting, seed)
    if prepared.keys:  # the largest error first, as every per-group result ranks
        keys = list(prepared.keys)
        result = result.sort(
            ["ece1", *keys], descending=[True] + [False] * len(keys), nulls_last=True
        )
    return prepared.guarded(_finish(result, prepared.keys, ECE_COLUMNS))


def _finish(result: pl.LazyFrame, keys: Sequence[str], columns: Sequence[str]) -> pl.LazyFrame:
    """The public columns, ``by`` columns first (the constant key is dropped)."""
    return result.select(*keys, *columns)


@entry_point("score", "response", "weight", "by")
def ece_sweep(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    bins: Sequence[int] = DEFAULT_SWEEP,
    binning: str = "equispaced",
    weighting: str = "width",
    by: Column | Sequence[Column] | None = None,
    seed: int = 0,
) -> pl.LazyFrame:
    """ECE1 and ECE2 for each of several numbers of bins.

    The point the papers make: the ECEs of (3)-(4) of Arrieta-Ibarra, Gujral,
    Tannen, Tygert and Xu, "Metrics of calibration for probabilistic
    predictions" move with the number of bins, sometimes a lot, so a single ECE
    says little without its binning, whereas the cumulative ECCEs have no such
    parameter. One lazy query per number of bins, concatenated; the data are
    prepared and sorted once.

    Parameters
    ----------
    frame, score, response, weight, binning, weighting, by, seed
        As in :func:`ece`.
    bins
        The numbers of bins, positive ints (default 2, 4, ..., 100).

    Returns
    -------
    pl.LazyFrame
        One row per number of bins (per group with ``by``), in the order
        given: the ``by`` columns, ``requested`` (l), then the columns of
        :func:`ece` (``bins`` being the non-empty bins actually used).
    """
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool):
        bins = [int(bins)]
    if isinstance(bins, str) or not isinstance(bins, Sequence | np.ndarray) or len(bins) == 0:
        raise InvalidParameterError(
            f"`bins` must be a non-empty sequence of positive ints, got {bins!r}"
        )
    counts = [_check_bins(value) for value in bins]
    binning = _check_choice(binning, "binning", BINNINGS)
    weighting = _check_choice(weighting, "weighting", WEIGHTINGS)
    seed = _check_int(seed, "seed", 0)
    reserved = ("requested", *ECE_COLUMNS)
    prepared, data, keys = _prepare_probabilities(frame, score, response, weight, by, reserved)
    ordered = _sorted(data, keys)
    parts = [
        _ece(ordered, keys, count, binning, weighting, seed).with_columns(
            pl.lit(count, dtype=pl.Int64).alias("requested")
        )
        for count in counts
    ]
    return prepared.guarded(_finish(pl.concat(parts), prepared.keys, reserved))
