"""Stage 2a: merge rows of a subpopulation that share exactly the same score (method.md 1.1)."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.sums import boundary

__all__ = ["group_rows", "merge_ties", "sort_by_score"]

_RUN = f"{nm.PREFIX}run"
_CHANGES = f"{nm.PREFIX}changes"
_FIRST = f"{nm.PREFIX}first"
_SW = f"{nm.PREFIX}sw"
_SWR = f"{nm.PREFIX}swr"
_SWW = f"{nm.PREFIX}sww"


def sort_by_score(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The one sort of the method: rows in increasing order of score.

    Both :func:`merge_ties` and :func:`polars_cumdev.method.bins.full_population_prefix`
    read rows in this order; sorting once and passing the result to both is
    what keeps a screen near the cost of one sort. The sorted frame is cached,
    so that the query computes it once for both, and so that the optimizer
    does not fold the stable sort by group of :func:`group_rows` into this one
    (a sort by several keys is far slower than the two).
    """
    return frame.sort(nm.SCORE, maintain_order=True).cache()


def group_rows(ordered: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """Rows sorted by score, regrouped so that every group's rows are contiguous.

    A stable sort by the keys alone: each group keeps its rows in increasing
    order of score, and every run of one (keys, score) becomes contiguous.
    Sorting by a few integer-like keys is much cheaper than by the score.
    """
    return ordered.sort(list(keys), maintain_order=True, nulls_last=True) if keys else ordered


def merge_ties(
    frame: pl.LazyFrame, keys: Sequence[str] = (), *, extra: Sequence[str] = ()
) -> pl.LazyFrame:
    """Collapse each (group, score) to one point, in increasing order of score per group.

    For the rows of one group sharing a score, the merged point has weight
    W' = sum W, response R' = sum(W R) / sum W and tie factor
    f = sum(W^2) / (sum W)^2 (1 for a score that occurs once). This is the
    deterministic, order-independent treatment of ties of method.md 1.1, in
    place of the random perturbation the papers use.

    The rows are regrouped by :func:`group_rows`, so each tie is a run of
    consecutive rows, numbered in order; its sums are taken directly over
    the run (a window sum per run number), so they are accurate relative to
    the tie itself however large and uneven the weights before it are. (A
    sum in row order, ``cum_sum().last()``, would give the same bits
    whatever the engine and its threads, but costs about five times as much
    for many small ties. The window sum gives the same bits on every run
    with the same number of Polars threads; with another number, a tie that
    straddles two of the sort's chunks, one per thread, may differ in its
    last bit.)
    A score that occurs once keeps its row's own W and R, and a tie whose
    responses are all equal keeps that response, exactly.

    Parameters
    ----------
    frame
        Standardized rows (see :func:`polars_cumdev.method.prepare.prepare`, weights
        rescaled by :func:`polars_cumdev.method.weights.rescale`) sorted by score
        (:func:`sort_by_score`): columns ``keys`` plus ``_names.SCORE``,
        ``_names.RESPONSE``, ``_names.WEIGHT``.
    keys
        Grouping columns; each group is merged separately.
    extra
        Further float64 columns averaged with the weights like ``RESPONSE``
        (the second response of paired samples, :mod:`polars_cumdev.paired`).

    Returns
    -------
    pl.LazyFrame
        One row per distinct (keys, score): the keys, ``SCORE``, ``WEIGHT``
        (W'), ``RESPONSE`` (R'), the ``extra`` averages, ``TIE`` (f) and
        ``ROWS`` (rows merged). Each
        group's rows are contiguous and in increasing order of score.
    """
    keys = list(keys)
    tie = [*keys, nm.SCORE]
    w = pl.col(nm.WEIGHT)
    averaged = [nm.RESPONSE, *extra]
    start = boundary(tie, 1)

    def changes(name: str) -> str:
        return f"{_CHANGES}{averaged.index(name)}"

    # Changes of a response inside a tie (not at its first row): none means every
    # row of the tie has the response of its first row.
    rows = group_rows(frame, keys).select(
        *tie,
        w,
        *averaged,
        *[
            (pl.col(c).ne(pl.col(c).shift(1)) & ~start).fill_null(False).alias(changes(c))
            for c in averaged
        ],
        start.cum_sum().set_sorted().alias(_RUN),
    )

    def per_run(expr: pl.Expr) -> pl.Expr:
        return expr.over(_RUN, mapping_strategy="explode")

    def total(expr: pl.Expr) -> pl.Expr:
        return per_run(expr.sum())

    merged = rows.select(
        *[per_run(pl.col(c).first()) for c in tie],
        total(w).alias(_SW),
        *[total(w * pl.col(c)).alias(f"{_SWR}{c}") for c in averaged],
        total(w * w).alias(_SWW),
        *[per_run(pl.col(c).first()).alias(f"{_FIRST}{c}") for c in averaged],
        *[per_run(pl.col(changes(c)).sum()).alias(changes(c)) for c in averaged],
        per_run(pl.len()).cast(pl.Int64).alias(nm.ROWS),
    )
    sw = pl.col(_SW)
    return merged.select(
        *tie,
        sw.alias(nm.WEIGHT),
        *[
            pl.when(pl.col(changes(c)) == 0)
            .then(pl.col(f"{_FIRST}{c}"))
            .otherwise(pl.col(f"{_SWR}{c}") / sw)
            .alias(c)
            for c in averaged
        ],
        pl.when(pl.col(nm.ROWS) == 1).then(1.0).otherwise(pl.col(_SWW) / (sw * sw)).alias(nm.TIE),
        pl.col(nm.ROWS),
    )
