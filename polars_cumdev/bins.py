"""Stage 2b: midpoint bins in the full population (method.md 1.2-1.3; (6)-(7), (26), (33)).

Each merged subpopulation score S'_k owns the bin of full-population rows with
B_{k-1} < S <= B_k, where B_k is the midpoint between S'_k and S'_{k+1}. The
bin sums are differences of prefix sums over the full population sorted by
score; the prefix at every midpoint of every group is found by one as-of join
against that single sorted order. No loop over groups and no per-group pass
over the full population.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev import _names as nm

__all__ = ["full_population_prefix", "locate_bins", "midpoints"]

# Prefix sums carried from the full population to the bins.
_SUMS = ("_pw", "_pww", "_pwr", "_pwrr", "_pn")
_UPPER = f"{nm.PREFIX}upper"
_KEY = "_pscore"
_ROW = "_prow"
_CENTRE = "_centre"


def full_population_prefix(full: pl.LazyFrame) -> pl.LazyFrame:
    """Prefix sums of the full population in increasing order of score.

    Responses are centred on c = round(2 mean) / 2 before squaring; the bin
    mean and variance are unchanged mathematically, the centring keeps the
    prefix-sum differences accurate when responses are far from zero, and
    because c is a multiple of 1/2, 0/1 responses with integer weights still
    give exact sums.

    Parameters
    ----------
    full
        Standardized rows of the full population (``SCORE``, ``RESPONSE``,
        ``WEIGHT``), sorted by score (:func:`polars_cumdev.ties.sort_by_score`).

    Returns
    -------
    pl.LazyFrame
        One row per full-population row, sorted: ``_pscore`` (the score) and
        the running sums ``_pw`` (W), ``_pww`` (W^2), ``_pwr`` (W r),
        ``_pwrr`` (W r^2) and ``_pn`` (rows) up to and including that row,
        with r = R - c; and ``_centre`` (c).
    """
    w = pl.col(nm.WEIGHT)
    centre = (pl.col(nm.RESPONSE).mean() * 2.0).round() / 2.0
    r = pl.col(nm.RESPONSE) - centre
    return full.select(
        pl.col(nm.SCORE).alias(_KEY),
        w.cum_sum().alias("_pw"),
        (w * w).cum_sum().alias("_pww"),
        (w * r).cum_sum().alias("_pwr"),
        (w * r * r).cum_sum().alias("_pwrr"),
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("_pn"),
        centre.alias(_CENTRE),
    )


def _over(expr: pl.Expr, keys: Sequence[str]) -> pl.Expr:
    return expr.over(keys) if keys else expr


def midpoints(keys: Sequence[str] = ()) -> pl.Expr:
    """Expression for B_k, the upper bound of each point's bin, equation (7).

    Evaluated on merged points with each group's rows in increasing order of
    score (as :func:`polars_cumdev.ties.merge_ties` returns them); the last
    point of each group gets +inf.
    """
    nxt = _over(pl.col(nm.SCORE).shift(-1), keys)
    return ((pl.col(nm.SCORE) + nxt) / 2).fill_null(float("inf"))


def locate_bins(
    points: pl.LazyFrame, prefix: pl.LazyFrame, keys: Sequence[str] = ()
) -> pl.LazyFrame:
    """Attach to every merged point the full-population average and variance in its bin.

    Parameters
    ----------
    points
        Merged points from :func:`polars_cumdev.ties.merge_ties`.
    prefix
        Output of :func:`full_population_prefix`.
    keys
        Grouping columns of ``points``.

    Returns
    -------
    pl.LazyFrame
        The points, ordered by their upper midpoints (so each group's points
        are still in increasing order of score), plus ``BIN_WEIGHT`` (sum W
        in the bin), ``BIN_ROWS``, ``REFERENCE`` (Rt_k, equation (26)) and
        ``BIN_VARIANCE`` (V_k of equation (33) with the unbiasing factor u_k
        of method.md 1.3; 0 for a bin of one row).

    Notes
    -----
    Within a group the upper midpoints increase with the score, so ordering
    all points by midpoint keeps every group in score order while letting one
    as-of join (a linear merge with the sorted full population) find the
    prefix sums at every midpoint of every group. The points arrive almost
    sorted by midpoint already, which makes that sort cheap. The lower end of
    a bin is the previous point's upper end in the same group, fetched by one
    gather.
    """
    located = (
        points.with_columns(midpoints(keys).alias(_UPPER))
        .sort(_UPPER)
        .join_asof(prefix, left_on=_UPPER, right_on=_KEY, strategy="backward")
        .with_row_index(_ROW)
    )
    previous = _over(pl.col(_ROW).shift(1), keys)
    lower = pl.struct(_SUMS).gather(previous).struct.unnest().name.suffix("_lo")
    diffs = [(pl.col(c) - pl.col(f"{c}_lo").fill_null(0)).alias(c) for c in _SUMS]
    bw = pl.col("_pw")
    mean_c = pl.col("_pwr") / bw
    spread = pl.col("_pwrr") / bw - mean_c * mean_c
    denom = bw * bw - pl.col("_pww")
    unbias = pl.when(pl.col("_pn") > 1).then(bw * bw / denom).otherwise(0.0)
    return (
        located.with_columns(lower)
        .with_columns(diffs)
        .with_columns(
            bw.alias(nm.BIN_WEIGHT),
            pl.col("_pn").alias(nm.BIN_ROWS),
            (pl.col(_CENTRE) + mean_c).alias(nm.REFERENCE),
            (unbias * spread).alias(nm.BIN_VARIANCE),
        )
        .drop(*_SUMS, *[f"{c}_lo" for c in _SUMS], _CENTRE, _UPPER, _KEY, _ROW)
    )
