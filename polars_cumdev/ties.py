"""Stage 2a: merge rows of a subpopulation that share exactly the same score (method.md 1.1)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.sums import boundary, run_total, with_running_sums

__all__ = ["group_rows", "merge_ties", "sort_by_score"]


def sort_by_score(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The one sort of the method: rows in increasing order of score.

    Both :func:`merge_ties` and :func:`polars_cumdev.bins.full_population_prefix`
    read rows in this order; sorting once and passing the result to both is
    what keeps a screen near the cost of one sort. The sorted frame is cached,
    so that the query computes it once for both, and so that the optimizer
    does not fold the stable sort by group of :func:`group_rows` into this one
    (a sort by several keys is far slower than the two).
    """
    return frame.sort(nm.SCORE).cache()


def group_rows(ordered: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Rows sorted by score, regrouped so that every group's rows are contiguous.

    A stable sort by the keys alone: each group keeps its rows in increasing
    order of score, and every run of one (keys, score) becomes contiguous.
    Sorting by a few integer-like keys is much cheaper than by the score.
    """
    return ordered.sort(list(keys), maintain_order=True, nulls_last=True) if keys else ordered


def merge_ties(frame: pl.LazyFrame, keys: Sequence[str] = ()) -> pl.LazyFrame:
    """Collapse each (group, score) to one point, in increasing order of score per group.

    For the rows of one group sharing a score, the merged point has weight
    W' = sum W, response R' = sum(W R) / sum W and tie factor
    f = sum(W^2) / (sum W)^2 (1 for a score that occurs once). This is the
    deterministic, order-independent treatment of ties of method.md 1.1, in
    place of the random perturbation the papers use.

    The rows are regrouped by :func:`group_rows`, so each tie is a run of
    consecutive rows; its sums are differences of compensated running sums
    (:mod:`polars_cumdev.sums`) at consecutive run ends. A score that occurs
    once keeps its row's own W and R, and a tie whose responses are all equal
    keeps that response, exactly.

    Parameters
    ----------
    frame
        Standardized rows (see :func:`polars_cumdev.prepare.prepare`) sorted
        by score (:func:`sort_by_score`): columns ``keys`` plus
        ``_names.SCORE``, ``_names.RESPONSE``, ``_names.WEIGHT``.
    keys
        Grouping columns; each group is merged separately.

    Returns
    -------
    pl.LazyFrame
        One row per distinct (keys, score): the keys, ``SCORE``, ``WEIGHT``
        (W'), ``RESPONSE`` (R'), ``TIE`` (f) and ``ROWS`` (rows merged). Each
        group's rows are contiguous and in increasing order of score.
    """
    keys = list(keys)
    tie = [*keys, nm.SCORE]
    w, r = pl.col(nm.WEIGHT), pl.col(nm.RESPONSE)
    rows = group_rows(frame, keys).select(*tie, nm.WEIGHT, nm.RESPONSE)
    # Changes of response inside a tie (not at its first row): none means every
    # row of the tie has the response of its last row.
    inner_change = (r.ne(r.shift(1)) & ~boundary(tie, 1)).fill_null(False)
    summed = with_running_sums(rows, {"_w": w, "_wr": w * r, "_ww": w * w}).with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("_n"),
        inner_change.cast(pl.Int64).cum_sum().alias("_changes"),
    )
    ends = summed.filter(boundary(tie, -1))

    def count(name: str) -> pl.Expr:
        return pl.col(name) - pl.col(name).shift(1, fill_value=0)

    merged = ends.with_columns(
        count("_n").alias(nm.ROWS),
        count("_changes").alias("_changes"),
        run_total("_w").alias("_sw"),
        run_total("_wr").alias("_swr"),
        run_total("_ww").alias("_sww"),
    )
    single = pl.col(nm.ROWS) == 1
    sw = pl.col("_sw")
    return merged.select(
        *tie,
        pl.when(single).then(w).otherwise(sw).alias(nm.WEIGHT),
        pl.when(pl.col("_changes") == 0).then(r).otherwise(pl.col("_swr") / sw).alias(nm.RESPONSE),
        pl.when(single).then(1.0).otherwise(pl.col("_sww") / (sw * sw)).alias(nm.TIE),
        pl.col(nm.ROWS),
    )
