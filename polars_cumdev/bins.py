"""Stage 2b: midpoint bins in the full population (method.md 1.2-1.3; (6)-(7), (26), (33)).

Each merged subpopulation score S'_k owns the bin of full-population rows with
B_{k-1} < S <= B_k, where B_k is the midpoint between S'_k and S'_{k+1}. The
bin sums are differences of compensated prefix sums over the full population
sorted by score (:mod:`polars_cumdev.sums`); the prefix at every midpoint of
every group is found by one as-of join against that single sorted order. No
loop over groups and no per-group pass over the full population.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.sums import boundary, with_running_sums

__all__ = [
    "COUNT_SUMS",
    "FLOAT_SUMS",
    "PREFIX_SCORE",
    "SUMS",
    "bin_moments",
    "full_population_prefix",
    "locate_bins",
    "midpoints",
    "running_sums",
]

# Running sums carried from the full population to the bins. The float sums
# (W, W^2, W r, W r^2) come with their accumulated rounding errors ("_err"),
# the counts (rows, rows with R = 0, rows with R = 1) are exact integers.
FLOAT_SUMS = ("_pw", "_pww", "_pwr", "_pwrr")
COUNT_SUMS = ("_pn", "_pn0", "_pn1")
SUMS = (*FLOAT_SUMS, *(f"{c}_err" for c in FLOAT_SUMS), *COUNT_SUMS)
_UPPER = f"{nm.PREFIX}upper"
PREFIX_SCORE = "_pscore"  # the score column of a running-sums table
_ROW = "_prow"
_CENTRE = "_centre"


def running_sums(rows: pl.LazyFrame, centre: pl.Expr) -> pl.LazyFrame:
    """The running sums :data:`SUMS` over ``rows``, in their order.

    Responses are centred on ``centre`` (a scalar expression, see
    :func:`full_population_prefix`). Each float running sum comes with the
    running sum of its rounding errors (:func:`polars_cumdev.sums.with_running_sums`),
    so that a *difference* of two running totals -- a bin's sum -- is
    accurate relative to the bin rather than to the whole population. The
    counts are exact integers.

    Parameters
    ----------
    rows
        Standardized rows (``SCORE``, ``RESPONSE``, ``WEIGHT``).
    centre
        Scalar expression evaluated on ``rows`` once.

    Returns
    -------
    pl.LazyFrame
        ``_pscore`` (the score), the running sums :data:`SUMS` up to and
        including each row, and ``_centre`` (the value of ``centre``).
    """
    w = pl.col(nm.WEIGHT)
    response = pl.col(nm.RESPONSE)
    r = response - pl.col(_CENTRE)
    terms = {"_pw": w, "_pww": w * w, "_pwr": w * r, "_pwrr": w * r * r}
    columns = rows.with_columns(centre.alias(_CENTRE)).select(
        pl.col(nm.SCORE).alias(PREFIX_SCORE),
        pl.col(_CENTRE),
        w,
        response,
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("_pn"),
        (response == 0.0).cast(pl.Int64).cum_sum().alias("_pn0"),
        (response == 1.0).cast(pl.Int64).cum_sum().alias("_pn1"),
    )
    return with_running_sums(columns, terms).select(PREFIX_SCORE, *SUMS, _CENTRE)


def bin_moments(total: Callable[[str], pl.Expr], centre: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """Rt_k of equation (26) and V_k of (33), unbiased as in method.md 1.3.

    Parameters
    ----------
    total
        Gives, for a name in :data:`SUMS`, the expression of the bin's total
        of that running sum (a difference of two running sums).
    centre
        The centring of the responses used in the running sums.

    Returns
    -------
    tuple of pl.Expr
        ``(Rt, V)``. A bin whose responses are all 0 (or all 1) gets exactly
        Rt = 0 (or 1) and V = 0, as summing its rows directly would give;
        V = 0 for a bin of one row (u_k = 0).
    """
    bw, bww, bwr, bwrr = (total(c) + total(f"{c}_err") for c in FLOAT_SUMS)
    rows, zeros, ones = (total(c) for c in COUNT_SUMS)
    mean_c = bwr / bw
    spread = bwrr / bw - mean_c * mean_c
    unbias = pl.when(rows > 1).then(bw * bw / (bw * bw - bww)).otherwise(0.0)
    reference = (
        pl.when(ones == rows).then(1.0).when(zeros == rows).then(0.0).otherwise(centre + mean_c)
    )
    variance = pl.when((ones == rows) | (zeros == rows)).then(0.0).otherwise(unbias * spread)
    return reference, variance


def full_population_prefix(full: pl.LazyFrame, centre: pl.Expr | None = None) -> pl.LazyFrame:
    """Running sums of the full population at each distinct score, in increasing order.

    Responses are centred on c before squaring: by default c = round(2 mean) / 2
    of ``full``. The bin mean and variance are unchanged mathematically, the
    centring keeps the differences of running sums accurate when responses
    are far from zero, and because c is a multiple of 1/2, 0/1 responses with
    integer weights still give exact sums. The float sums are compensated
    (:func:`running_sums`). Only the last row of each run of equal scores is
    kept: a bin always takes whole runs, so those rows are all a lookup needs.

    Parameters
    ----------
    full
        Standardized rows of the full population (``SCORE``, ``RESPONSE``,
        ``WEIGHT``), sorted by score (:func:`polars_cumdev.ties.sort_by_score`).
    centre
        Scalar expression for c, in place of the default (the partitioned
        screen passes one centre shared by all its ranges).

    Returns
    -------
    pl.LazyFrame
        One row per distinct score, sorted: ``_pscore`` (the score), the
        running sums :data:`SUMS` up to and including the last row with that
        score, and ``_centre`` (c).
    """
    if centre is None:
        centre = (pl.col(nm.RESPONSE).mean() * 2.0).round() / 2.0
    return running_sums(full, centre).filter(boundary([PREFIX_SCORE], -1))


def midpoints(keys: Sequence[str] = ()) -> pl.Expr:
    """Expression for B_k, the upper bound of each point's bin, equation (7).

    Evaluated on merged points with each group's rows contiguous and in
    increasing order of score (as :func:`polars_cumdev.ties.merge_ties`
    returns them); the last point of each group gets +inf.
    """
    score = pl.col(nm.SCORE)
    return pl.when(boundary(keys, -1)).then(float("inf")).otherwise((score + score.shift(-1)) / 2)


def locate_bins(
    points: pl.LazyFrame, prefix: pl.LazyFrame, keys: Sequence[str] = ()
) -> pl.LazyFrame:
    """Attach to every merged point the full-population average and variance in its bin.

    Parameters
    ----------
    points
        Merged points from :func:`polars_cumdev.ties.merge_ties` (each
        group's points contiguous, in increasing order of score).
    prefix
        Output of :func:`full_population_prefix`.
    keys
        Grouping columns of ``points``.

    Returns
    -------
    pl.LazyFrame
        The points, in the same order, plus ``BIN_WEIGHT`` (sum W in the
        bin), ``BIN_ROWS``, ``REFERENCE`` (Rt_k, equation (26)) and
        ``BIN_VARIANCE`` (V_k of equation (33) with the unbiasing factor u_k
        of method.md 1.3; 0 for a bin of one row).

    Notes
    -----
    Only the upper midpoints are looked up: a bin's lower end is the previous
    point's upper end in the same group, one row up. The lookup sorts just
    the (midpoint, row) pairs, finds every prefix by one as-of join (a
    linear merge with the sorted full population), and puts the answers back
    in the points' order by the row number.
    """
    points = points.with_columns(midpoints(keys).alias(_UPPER)).with_row_index(_ROW).cache()
    at_upper = (
        points.select(_UPPER, _ROW)
        .sort(_UPPER)
        .join_asof(prefix, left_on=_UPPER, right_on=PREFIX_SCORE, strategy="backward")
        .sort(_ROW)
        .select(*SUMS, _CENTRE)
    )
    first = boundary(keys, 1)
    diffs = [
        pl.when(first).then(pl.col(c)).otherwise(pl.col(c) - pl.col(c).shift(1)).alias(c)
        for c in SUMS
    ]
    reference, variance = bin_moments(pl.col, pl.col(_CENTRE))
    return (
        pl.concat([points, at_upper], how="horizontal")
        .with_columns(diffs)
        .with_columns(
            (pl.col("_pw") + pl.col("_pw_err")).alias(nm.BIN_WEIGHT),
            pl.col("_pn").alias(nm.BIN_ROWS),
            reference.alias(nm.REFERENCE),
            variance.alias(nm.BIN_VARIANCE),
        )
        .drop(*SUMS, _CENTRE, _UPPER, _ROW)
    )
