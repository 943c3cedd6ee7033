"""Stage 2b: midpoint bins in the full population (method.md 1.2-1.3; (6)-(7), (26), (33)).

Each merged subpopulation score S'_k owns the bin of full-population rows with
B_{k-1} < S <= B_k, where B_k is the midpoint between S'_k and S'_{k+1}. The
bin sums are differences of prefix sums over the full population sorted by
score, found with one as-of join for all groups at once: no loop over groups
and no per-group pass over the full population.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev import _names as nm

__all__ = ["full_population_prefix", "locate_bins", "midpoints"]

# Prefix sums carried from the full population to the bins.
_SUMS = ("_pw", "_pww", "_pwr", "_pwrr", "_pn")
_UPPER = f"{nm.PREFIX}upper"


def full_population_prefix(full: pl.LazyFrame) -> pl.LazyFrame:
    """Prefix sums of the full population at each distinct score.

    Responses are centred on their median before squaring; the bin mean and
    variance are unchanged mathematically, and the centring keeps the
    prefix-sum differences accurate when responses are far from zero. (The
    median of 0/1 responses is 0, 0.5 or 1, so 0/1 responses with integer
    weights still give exact sums.)

    Parameters
    ----------
    full
        Standardized rows of the full population (``SCORE``, ``RESPONSE``,
        ``WEIGHT``).

    Returns
    -------
    pl.LazyFrame
        Sorted by ``SCORE``; columns ``SCORE``, cumulative ``_pw`` (sum W),
        ``_pww`` (sum W^2), ``_pwr`` (sum W r), ``_pwrr`` (sum W r^2), ``_pn``
        (rows) for S <= that score, with r = R - ``_centre``; and ``_centre``.
    """
    w = pl.col(nm.WEIGHT)
    r = pl.col(nm.RESPONSE) - pl.col(nm.RESPONSE).median()
    rows = full.select(
        nm.SCORE,
        w.alias("_pw"),
        (w * w).alias("_pww"),
        (w * r).alias("_pwr"),
        (w * r * r).alias("_pwrr"),
        pl.lit(1, dtype=pl.Int64).alias("_pn"),
        pl.col(nm.RESPONSE).median().alias("_centre"),
    )
    return (
        rows.group_by(nm.SCORE)
        .agg(*[pl.col(c).sum() for c in _SUMS], pl.col("_centre").first())
        .sort(nm.SCORE)
        .with_columns(*[pl.col(c).cum_sum() for c in _SUMS])
    )


def midpoints(points: pl.LazyFrame, keys: Sequence[str] = ()) -> pl.Expr:
    """Expression for B_k, the upper bound of each point's bin, equation (7).

    ``points`` must be sorted by keys and score (as :func:`merge_ties` returns
    them). The last point of each group gets +inf.
    """
    nxt = pl.col(nm.SCORE).shift(-1)
    if keys:
        nxt = nxt.over(keys)
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
        ``points`` (same order) plus ``BIN_WEIGHT`` (sum W in the bin),
        ``BIN_ROWS``, ``REFERENCE`` (Rt_k, equation (26)) and ``BIN_VARIANCE``
        (V_k of equation (33) with the unbiasing factor u_k of method.md 1.3;
        0 for a bin of one row).
    """
    located = (
        points.with_columns(midpoints(points, keys).alias(_UPPER))
        .sort(_UPPER)
        .join_asof(prefix, left_on=_UPPER, right_on=nm.SCORE, strategy="backward", suffix="_full")
        .drop(f"{nm.SCORE}_full")
        .sort([*keys, nm.SCORE])
    )
    diffs = []
    for c in _SUMS:
        below = pl.col(c).shift(1)
        if keys:
            below = below.over(keys)
        diffs.append((pl.col(c) - below.fill_null(0)).alias(c))
    bw = pl.col("_pw")
    mean_c = pl.col("_pwr") / bw
    spread = pl.col("_pwrr") / bw - mean_c * mean_c
    denom = bw * bw - pl.col("_pww")
    unbias = pl.when(pl.col("_pn") > 1).then(bw * bw / denom).otherwise(0.0)
    return (
        located.with_columns(diffs)
        .with_columns(
            bw.alias(nm.BIN_WEIGHT),
            pl.col("_pn").alias(nm.BIN_ROWS),
            (pl.col("_centre") + mean_c).alias(nm.REFERENCE),
            (unbias * spread).alias(nm.BIN_VARIANCE),
        )
        .drop(*_SUMS, "_centre", _UPPER)
    )
