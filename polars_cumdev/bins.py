"""Stage 2b: midpoint bins in the full population (method.md 1.2-1.3; (6)-(7), (26), (33)).

Each merged subpopulation score S'_k owns the bin of full-population rows with
B_{k-1} < S <= B_k, where B_k is the midpoint between S'_k and S'_{k+1}. The
bin sums are differences of prefix sums over the full population sorted by
score; the prefix at every midpoint of every group is found by one binary
search in that single sorted order. No loop over groups, no per-group pass
over the full population, and no sort beyond the one by score.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev import _names as nm

__all__ = ["full_population_prefix", "locate_bins", "midpoints"]

# Prefix sums carried from the full population to the bins.
_SUMS = ("_pw", "_pww", "_pwr", "_pwrr", "_pn")
_UPPER = f"{nm.PREFIX}upper"
_QUERY = f"{nm.PREFIX}query"
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
        One row per full-population row, sorted by ``SCORE``: ``SCORE`` and
        the running sums ``_pw`` (W), ``_pww`` (W^2), ``_pwr`` (W r),
        ``_pwrr`` (W r^2) and ``_pn`` (rows) up to and including that row,
        with r = R - c; and ``_centre`` (c).
    """
    w = pl.col(nm.WEIGHT)
    centre = (pl.col(nm.RESPONSE).mean() * 2.0).round() / 2.0
    r = pl.col(nm.RESPONSE) - centre
    return full.select(
        nm.SCORE,
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

    Evaluated on merged points in increasing order of score (as
    :func:`polars_cumdev.ties.merge_ties` returns them); the last point of
    each group gets +inf.
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
        ``points`` (same order) plus ``BIN_WEIGHT`` (sum W in the bin),
        ``BIN_ROWS``, ``REFERENCE`` (Rt_k, equation (26)) and ``BIN_VARIANCE``
        (V_k of equation (33) with the unbiasing factor u_k of method.md 1.3;
        0 for a bin of one row).

    Notes
    -----
    The points and the sorted full population are stacked into one frame so
    that a single expression can binary-search every upper midpoint in the
    full population's scores (``search_sorted``) and gather the prefix sums
    there; the lower end of a bin is the previous point's upper end.
    """
    queries = points.with_columns(midpoints(keys).alias(_UPPER), pl.lit(True).alias(_QUERY))
    stacked = pl.concat(
        [prefix.with_columns(pl.lit(False).alias(_QUERY)), queries], how="diagonal_relaxed"
    )
    is_query = pl.col(_QUERY)
    full_rows = ~is_query
    position = (
        pl.col(nm.SCORE).filter(full_rows).search_sorted(pl.col(_UPPER).filter(is_query), "right")
        - 1
    )
    carried = [c for c in queries.collect_schema().names() if c not in (_QUERY,)]
    # One struct gather: the binary search runs once for all five sums.
    located = stacked.select(
        *[pl.col(c).filter(is_query) for c in carried],
        pl.struct(_SUMS).filter(full_rows).gather(position).struct.unnest(),
        pl.col(_CENTRE).filter(full_rows).first(),
    )
    diffs = [(pl.col(c) - _over(pl.col(c).shift(1), keys).fill_null(0)).alias(c) for c in _SUMS]
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
            (pl.col(_CENTRE) + mean_c).alias(nm.REFERENCE),
            (unbias * spread).alias(nm.BIN_VARIANCE),
        )
        .drop(*_SUMS, _CENTRE, _UPPER)
    )
