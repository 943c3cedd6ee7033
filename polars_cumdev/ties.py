"""Stage 2a: merge rows of a subpopulation that share exactly the same score (method.md 1.1)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev import _names as nm

__all__ = ["merge_ties", "sort_by_score"]


def merge_ties(frame: pl.LazyFrame, keys: Sequence[str] = ()) -> pl.LazyFrame:
    """Collapse each (group, score) to one point, in increasing order of score.

    For the rows of one group sharing a score, the merged point has weight
    W' = sum W, response R' = sum(W R) / sum W and tie factor
    f = sum(W^2) / (sum W)^2 (1 for a score that occurs once). This is the
    deterministic, order-independent treatment of ties of method.md 1.1, in
    place of the random perturbation the papers use.

    The rows must arrive sorted by score (:func:`sort_by_score`); each tie
    group keeps its first row, so the points come out sorted by score with the
    groups interleaved. Every later per-group step uses
    ``.over(keys)``, which needs each group's rows in score order but not the
    groups contiguous. The caller sorts once and feeds the same sorted frame
    to :func:`polars_cumdev.bins.full_population_prefix`.

    Parameters
    ----------
    frame
        Standardized rows (see :func:`polars_cumdev.prepare.prepare`) sorted
        by score: columns ``keys`` plus ``_names.SCORE``, ``_names.RESPONSE``,
        ``_names.WEIGHT``.
    keys
        Grouping columns; each group is merged separately.

    Returns
    -------
    pl.LazyFrame
        One row per distinct (keys, score): the keys, ``SCORE``, ``WEIGHT``
        (W'), ``RESPONSE`` (R'), ``TIE`` (f) and ``ROWS`` (rows merged),
        in increasing order of score.
    """
    w = pl.col(nm.WEIGHT)
    tie = [*keys, nm.SCORE]
    # Window sums rather than a group-by: Polars' streaming group-by adds
    # partial sums in an order that varies from run to run, and results must be
    # identical bit for bit on every run.
    merged = frame.with_columns(
        w.sum().over(tie).alias("_w"),
        (w * pl.col(nm.RESPONSE)).sum().over(tie).alias("_wr"),
        (w * w).sum().over(tie).alias("_ww"),
        pl.len().over(tie).alias(nm.ROWS),
    ).filter(pl.struct(tie).is_first_distinct())
    return merged.select(
        *keys,
        nm.SCORE,
        pl.col("_w").alias(nm.WEIGHT),
        (pl.col("_wr") / pl.col("_w")).alias(nm.RESPONSE),
        (pl.col("_ww") / (pl.col("_w") * pl.col("_w"))).alias(nm.TIE),
        pl.col(nm.ROWS).cast(pl.Int64),
    )


def sort_by_score(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The one sort of the method: rows in increasing order of score.

    Both :func:`merge_ties` and :func:`polars_cumdev.bins.full_population_prefix`
    read rows in this order; sorting once and passing the result to both is
    what keeps a screen at the cost of one sort.
    """
    return frame.sort(nm.SCORE)
