"""Each group's effective number of events, counted from its cells by the range engines.

The compiled range step (:func:`polars_cumdev.kernel.range_cells`) adds the terms
of its cells' interior points as it walks
(:func:`polars_cumdev.kernel.walks.event_terms`: w^3 v |1 - 2p| and
w^4 v (1 - 6v)+ of each tie, p its bin mean) and keeps the sums of W^3 and W^4
of each cell's first and last points, whose bins reach across ranges. Once
:func:`~polars_cumdev.engines.partitioned.joining.combine_cells` has those two
points' bin means, :func:`cell_terms` adds their terms, and :func:`with_events`
gives each group its count E (:func:`polars_cumdev.method.finite_sample.counted_events`),
which :func:`polars_cumdev.engines.partitioned.finite.chosen` reads to set a
candidate aside before any of its rows is gathered. The Polars range step does
not count (its columns are NaN): the groups it touches keep E unknown, and the
finite-sample step decides them from their rows, as before.
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.summary_columns import EVENTS, SIGMA_B

__all__ = ["SUMS", "cell_terms", "with_events"]

#: The per-cell terms :func:`cell_terms` adds (divided by W^3 and W^4), summed per group.
SUMS = ("_e3", "_e4")
_TINY = 2.0**-1022


def _terms(reference: pl.Expr, w3: pl.Expr, w4: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """:func:`polars_cumdev.kernel.walks.event_terms` as expressions (the same rule)."""
    p = reference.clip(0.0, 1.0)
    v = p * (1.0 - p)
    fourth = pl.when(w4 >= _TINY).then(w4 * v * (1.0 - 6.0 * v).clip(lower_bound=0.0))
    return w3 * v * (1.0 - 2.0 * p).abs(), fourth.otherwise(float("nan"))


def cell_terms(
    first_mean: pl.Expr, last_mean: pl.Expr, multi: pl.Expr, total: pl.Expr
) -> list[pl.Expr]:
    """A cell's terms of its group's effective events: its interior points' (``s_3``,
    ``s_4``) and its first and last points' (the last only when the cell has two points
    or more, ``multi``), from their bin means, divided by the group's W^3 and W^4."""
    f3, f4 = _terms(first_mean, pl.col("f_w3"), pl.col("f_w4"))
    l3, l4 = _terms(last_mean, pl.col("l_w3"), pl.col("l_w4"))
    third = pl.col("s_3") + f3 + pl.when(multi).then(l3).otherwise(0.0)
    fourth = pl.col("s_4") + f4 + pl.when(multi).then(l4).otherwise(0.0)
    return [(third / total**3).alias(SUMS[0]), (fourth / total**4).alias(SUMS[1])]


def with_events(stats: pl.DataFrame) -> pl.DataFrame:
    """``stats`` (one row per group, with the sums of :data:`SUMS` and ``SIGMA_B``) with
    ``EVENTS`` in their place."""
    second, third, fourth = (stats.get_column(c).to_numpy() for c in (SIGMA_B, *SUMS))
    counted = fs.counted_events(second, third, fourth)
    return stats.drop(SUMS).with_columns(pl.Series(EVENTS, counted, dtype=pl.Float64))
