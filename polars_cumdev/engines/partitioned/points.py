"""The second pass of a range: the flagged groups' points, their best stretch and candidates.

See :mod:`polars_cumdev.engines.partitioned.locating` for the method.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.cells import Plan
from polars_cumdev.engines.partitioned.columns import GID, TOTAL_WEIGHT, Engine
from polars_cumdev.engines.partitioned.locating import FID, LIMIT, SIGN, search, stretch_columns
from polars_cumdev.engines.partitioned.step import (
    _merged_by_group,
    _table_rows,
    binned_points,
    sorted_prefix,
)
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled as _engines
from polars_cumdev.method.prefix_sums import PREFIX_SCORE
from polars_cumdev.method.prepare import FrameLike, as_lazy
from polars_cumdev.method.ties import CANONICAL

__all__ = ["range_points"]

STRETCH = ("from_score", "to_score", "share", "deviation", "end")


def range_points(
    rows: FrameLike,
    plan: Plan,
    cells: pl.DataFrame,
    *,
    engine: Engine = "in-memory",
    compiled: bool | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The flagged groups' located pieces in one range (the second pass's step).

    Parameters
    ----------
    rows
        The standardized rows of the range, all of them (the full-population
        prefix needs every row), in any order.
    plan
        The plan of the first pass.
    cells
        The range's flagged cells
        (:meth:`polars_cumdev.engines.partitioned.locating.Locating.for_range`).
    engine
        Polars engine for the range's queries.
    compiled
        Whether the range's running sums come from the compiled kernel
        (:func:`polars_cumdev.kernel.prefix_table`, about 3x faster than
        Polars' at a million rows); by default as in
        :func:`~polars_cumdev.engines.partitioned.range_step`.

    Returns
    -------
    tuple of DataFrames
        ``bests``: per flagged group, the shortest stretch whose end lies in
        the range and whose start is the point before the range's first one
        or later (``FID``, the location columns and ``end``, the end's
        position on the group's curve); ``candidates``: the points that may
        start or end a stretch crossing ranges (``FID``, ``position``, ``a``,
        ``c``, ``score`` and ``next``, the score of the following point).
    """
    keys = plan.keys
    ordered, prefix = _sorted_prefix(rows, plan, engine, compiled)
    if keys:  # only the flagged groups' points are needed
        ordered = ordered.join(
            cells.select(keys), on=keys, how="semi", nulls_equal=True, maintain_order="left"
        )
    points = _merged_by_group(ordered, keys, engine)
    del ordered
    if keys:
        points = points.join(
            cells.lazy(), on=keys, how="inner", nulls_equal=True, maintain_order="left"
        )
    else:
        points = points.join(cells.lazy(), how="cross", maintain_order="left")
    located, moments = binned_points(points, prefix, plan.centre)
    interior = ~pl.col("_first") & ~pl.col("_last")
    w = pl.col(nm.WEIGHT)
    d = pl.when(interior).then(w * (pl.col(nm.RESPONSE) - moments.reference)).otherwise(0.0)
    total = pl.col(TOTAL_WEIGHT)
    # As in combine: C_f = off + tf, C_k = off + tf + Q_k, C_l = off + tf + (Q_sum + tl).
    tail = pl.when(pl.col("_last") & ~pl.col("_first")).then(pl.col("tl")).otherwise(0.0)
    v = pl.col(SIGN) * pl.col("c")
    before = pl.col(SIGN) * pl.col("c_base")
    earlier = v.cum_max().shift(1).over(GID).fill_null(-np.inf)
    later = v.reverse().cum_min().reverse().shift(-1).over(GID).fill_null(np.inf)
    frame = (
        located.with_columns(d.cum_sum().over(GID).alias("_q"))
        .with_columns(
            (pl.col("c_first") + (pl.col("_q") / total + tail)).alias("c"),
            (pl.col("prior_w") + w.cum_sum().over(GID)).alias("a"),
            (pl.col("prior_n") + pl.int_range(1, pl.len() + 1).over(GID)).alias("position"),
            pl.col(nm.SCORE).shift(-1).over(GID).fill_null(pl.col("next_score")).alias("next"),
        )
        .select(
            GID,
            FID,
            SIGN,
            LIMIT,
            "c_base",
            "prior_w",
            TOTAL_WEIGHT,
            "lo_level",
            "hi_level",
            pl.col(nm.SCORE).alias("score"),
            "a",
            "c",
            "position",
            "next",
            # Candidates: a strict prefix maximum of v (after the point before the
            # range) reaching the band, or a strict suffix minimum below it.
            ((v > pl.max_horizontal(before, earlier)) & (v >= pl.col("hi_level"))).alias("_end"),
            ((v < later) & (v <= pl.col("lo_level"))).alias("_start"),
        )
        .collect(engine=engine)
    )
    # A_k = (weight up to k) / W, divided by NumPy: Polars may divide by a
    # broadcast scalar through its reciprocal, which is not exact for integers.
    a = frame.get_column("a").to_numpy() / frame.get_column(TOTAL_WEIGHT).to_numpy()
    frame = frame.with_columns(pl.Series("a", a))
    candidates = frame.filter(pl.col("_end") | pl.col("_start")).select(
        FID, "position", "a", "c", "score", "next"
    )
    return _bests(frame), candidates


def _sorted_prefix(
    rows: FrameLike, plan: Plan, engine: Engine, compiled: bool | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The running sums of :func:`step.sorted_prefix`, computed by the kernel.

    The kernel's prefix table holds the same columns as
    :func:`polars_cumdev.method.bins.full_population_prefix` (the compiled range
    step reads it the same way).
    """
    if compiled is False:
        return sorted_prefix(rows, plan, engine)
    ordered = as_lazy(rows).sort(CANONICAL).collect(engine=engine)
    if not (compiled or (ordered.height >= _engines.KERNEL_ROWS and _engines.available())):
        return sorted_prefix(ordered, plan, engine)
    s, r, w = (
        np.ascontiguousarray(ordered.get_column(c).cast(pl.Float64).to_numpy())
        for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    )
    scores, table = _engines.kernel().prefix_table(s, r, w, True, plan.weight_scale, plan.centre)
    del s, r, w
    prefix = pl.DataFrame({PREFIX_SCORE: scores, **_table_rows(table, None)})
    return ordered.with_columns(pl.col(nm.WEIGHT) * plan.weight_scale), prefix


def _bests(frame: pl.DataFrame) -> pl.DataFrame:
    """Each group's best stretch starting at the point before the range or later."""
    if not frame.height:
        return pl.DataFrame(schema={FID: pl.Int64, **dict.fromkeys(STRETCH, pl.Float64)})
    heads = frame.select(pl.col(GID).ne_missing(pl.col(GID).shift(1))).to_series()
    first = heads.arg_true().to_numpy()
    starts = np.append(first, frame.height).astype(np.int64)
    at = frame[pl.Series(first)]
    values = {
        c: frame.get_column(c).cast(pl.Float64).to_numpy()
        for c in ("a", "c", "next", "score", "position")
    }
    origin_a = (at.get_column("prior_w") / at.get_column(TOTAL_WEIGHT)).to_numpy()
    origin_c = at.get_column("c_base").to_numpy()
    lower, upper = search(
        starts,
        values["a"],
        values["c"],
        (origin_a, origin_c, at.get_column(SIGN).to_numpy()),
        at.get_column(LIMIT).to_numpy(),
    )
    origins = {
        "a": origin_a,
        "c": origin_c,
        "next": at.get_column("score").to_numpy(),
        "position": at.get_column("position").to_numpy() - 1.0,
    }
    columns = stretch_columns(starts, lower, upper, values, origins)
    return pl.DataFrame({FID: at.get_column(FID), **columns}).fill_nan(None).drop_nulls("share")
