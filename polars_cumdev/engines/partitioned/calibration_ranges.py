"""Calibration by score ranges: the driver's side (combine the cells, flag, finish).

The cells of :func:`~polars_cumdev.engines.partitioned.calibration_step.calibration_cells`
hold each (range, group)'s partial walk. A group's curve is the
concatenation of its cells in range order, so with B_r the sum of the
terms of its cells before range r (the *base*), every C_k of cell r is
B_r plus a partial sum of the cell: max_k C_k = max_r (B_r + c_max_r),
likewise the minimum, C_n is the sum of the cells' sums, and the sigma
sums add (method.md 2). The first maximum lies in the first cell reaching
the group's maximum, at that cell's ``at_max``; likewise the minimum, which
fixes the sign of the located stretch (:mod:`.locating`).

:func:`combine` gives the statistics in the layout of the in-process summary
(:func:`polars_cumdev.calibration.cumulative._summary_node`), :func:`flag` the
groups whose stretch is located and what their second pass needs, and
:func:`finish` the table of :func:`polars_cumdev.calibration.calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.engines.partitioned import events
from polars_cumdev.engines.partitioned.calibration_step import CELL_SUMS
from polars_cumdev.engines.partitioned.columns import LO, RANGE, TOTAL_WEIGHT
from polars_cumdev.engines.partitioned.locating import FID, LIMIT, SIGN, SLACK, Locating
from polars_cumdev.method.findings import significant
from polars_cumdev.method.location import LOCATION_COLUMNS, threshold
from polars_cumdev.method.prepare import Prepared
from polars_cumdev.method.summary_columns import (
    C_ERROR,
    OVERFLOWS,
    SIGMA_B,
    SIGMA_B_ERROR,
    SIGMA_E,
    SIGMA_E_ERROR,
    SUMMARY_SCHEMA,
)
from polars_cumdev.method.sums import ordered_sum

__all__ = ["combine", "finish", "flag", "with_located"]

_ALL = "__cd_all"  # the one group's key when there is no grouping


def _on(keys: Sequence[str]) -> list[str]:
    return list(keys) or [_ALL]


def combine(
    cells: Sequence[pl.DataFrame | None], keys: Sequence[str], scale: float
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The groups' statistics from the ranges' cells (``cells[r]``: range r's, or None).

    Returns ``(stats, joined)``: ``stats`` in the in-process summary's layout
    (keys, then :data:`~polars_cumdev.method.summary_columns.SUMMARY_SCHEMA`,
    ``weight`` in the user's units, the location null), one row per group in
    the order of the groups' first cells; ``joined`` the cells in range
    order with their group's ``base`` (sum of the terms before the cell),
    ``prior_w``, ``prior_n`` and ``next_score`` (the next cell's first score).
    """
    on = _on(keys)
    frames = [
        c.with_columns(pl.lit(r, dtype=pl.Int64).alias(RANGE))
        for r, c in enumerate(cells)
        if c is not None and c.height
    ]
    every = pl.concat(frames, how="vertical_relaxed")
    if not keys:
        every = every.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))

    def before(column: str) -> pl.Expr:
        return pl.col(column).cum_sum().over(on) - pl.col(column)

    joined = every.with_columns(
        before("c_last").alias("base"),
        before("weight").alias("prior_w"),
        before("n_scores").alias("prior_n"),
        pl.col("lo").shift(-1).over(on).alias("next_score"),
    ).with_columns(
        (pl.col("base") + pl.col("c_max")).alias("_max"),
        (pl.col("base") + pl.col("c_min")).alias("_min"),
    )
    sums = joined.group_by(on, maintain_order=True).agg(
        pl.col("n").sum(),
        pl.col("n_scores").sum(),
        # (added one cell at a time, in range order: a group-by's sum is not the same
        # bits from run to run, Polars 2.1)
        *[ordered_sum(pl.col(c)).alias(c) for c in CELL_SUMS],
        pl.col("_max").max().alias("top"),
        pl.col("_min").min().alias("bottom"),
        pl.col("overflows").sum(),
        pl.col("lo").first().alias(LO),
    )
    total = pl.col("weight")
    top, bottom = pl.col("top"), pl.col("bottom")
    columns = {
        "n": pl.col("n"),
        "n_scores": pl.col("n_scores"),
        "weight": total / scale,
        "kuiper": (pl.max_horizontal(top, 0.0) - pl.min_horizontal(bottom, 0.0)) / total,
        "ks": pl.max_horizontal(top.abs(), bottom.abs()) / total,
        "delta": pl.col("c_last") / total,
        SIGMA_B: pl.col("s_b") / (total * total),
        SIGMA_E: pl.col("s_e") / (total * total),
        C_ERROR: pl.col("e_c") / total,
        SIGMA_B_ERROR: pl.col("e_b") / (total * total),
        SIGMA_E_ERROR: pl.col("e_e") / (total * total),
        OVERFLOWS: pl.col("overflows"),
    }
    stats = sums.select(
        *keys,
        *[columns[c].cast(SUMMARY_SCHEMA[c]).alias(c) for c in columns],
        *[pl.lit(None, dtype=pl.Float64).alias(c) for c in LOCATION_COLUMNS],
        (pl.col("s_3") / total**3).alias(events.SUMS[0]),
        (pl.col("s_4") / total**4).alias(events.SUMS[1]),
    )
    stats = events.with_events(stats)  # (the walks' count of the effective events)
    groups = sums.select(*on, pl.col("weight").alias(TOTAL_WEIGHT), "top", "bottom", LO)
    joined = joined.join(groups, on=on, how="left", nulls_equal=True, maintain_order="left")
    return stats, joined


def flag(
    joined: pl.DataFrame,
    stats: pl.DataFrame,
    table: pl.DataFrame | None,
    keys: Sequence[str],
    level: float,
) -> Locating | None:
    """The groups whose stretch is located, and their cells; None when there is none.

    A group is flagged when T = D - 2 sigma > 0 and it is significant at
    ``level`` in ``table`` (the calibration table without the location):
    any other group's stretch would be nulled (:mod:`polars_cumdev.method.findings`).
    ``table`` None flags every group with T > 0 (a caller deciding later,
    e.g. multicalibration's family-wise decision).
    """
    on = _on(keys)
    limit = threshold(pl.col("kuiper"), pl.col(SIGMA_B)).alias(LIMIT)
    candidates = stats.select(*keys, limit).filter(pl.col(LIMIT) > 0.0)
    if table is not None:
        judged = table.filter(significant(level, "ecce_r_q"))
        if keys:
            candidates = candidates.join(
                judged.select(keys), on=keys, how="semi", nulls_equal=True, maintain_order="left"
            )
        elif not judged.height:
            return None
    if not candidates.height:
        return None
    flagged = candidates.with_row_index(FID).with_columns(pl.col(FID).cast(pl.Int64))
    if not keys:
        flagged = flagged.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))
    mine = joined.join(flagged, on=on, how="inner", nulls_equal=True, maintain_order="left")
    top, bottom = pl.col("top"), pl.col("bottom")
    at_max = (pl.col("prior_n") + pl.col("at_max")).filter(pl.col("_max") == top).min()
    at_min = (pl.col("prior_n") + pl.col("at_min")).filter(pl.col("_min") == bottom).min()
    signs = mine.group_by(FID).agg(
        top.first().clip(lower_bound=0.0).alias("_top"),
        bottom.first().clip(upper_bound=0.0).alias("_bottom"),
        pl.when(top.first() > 0.0).then(at_max).otherwise(0).alias("_first_top"),
        pl.when(bottom.first() < 0.0).then(at_min).otherwise(0).alias("_first_bottom"),
    )
    sign = pl.when(pl.col("_first_bottom") < pl.col("_first_top")).then(1.0).otherwise(-1.0)
    signs = signs.with_columns(sign.alias(SIGN))
    high = pl.when(pl.col(SIGN) > 0).then(pl.col("_top")).otherwise(-pl.col("_bottom"))
    low = pl.when(pl.col(SIGN) > 0).then(pl.col("_bottom")).otherwise(-pl.col("_top"))
    slack = SLACK * (pl.col("_top") - pl.col("_bottom"))
    total = pl.col(TOTAL_WEIGHT)
    mine = mine.join(signs, on=FID, how="left").with_columns(
        (high / total - pl.col(LIMIT) + slack / total).alias("lo_level"),
        (low / total + pl.col(LIMIT) - slack / total).alias("hi_level"),
        (pl.col("base") / total).alias("c_base"),
    )
    columns = ["c_base", TOTAL_WEIGHT, "prior_w", "prior_n", "next_score"]
    cells = mine.select(FID, *keys, RANGE, SIGN, LIMIT, *columns, "lo_level", "hi_level")
    firsts = mine.group_by(FID).agg(pl.col(LO).first(), pl.col(SIGN).first())
    groups = flagged.drop(_ALL, strict=False).join(firsts, on=FID, how="left").sort(FID)
    return Locating(groups=groups, cells=cells)


def with_located(stats: pl.DataFrame, found: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """``stats`` with the location columns of ``found`` (null for the groups not in it)."""
    rest = stats.drop(LOCATION_COLUMNS)
    if keys:
        out = rest.join(found, on=list(keys), how="left", nulls_equal=True, maintain_order="left")
    else:
        out = rest.join(found, how="cross") if found.height else stats
    return out.select(stats.columns)


def finish(stats: pl.DataFrame, prepared: Prepared, level: float) -> pl.DataFrame:
    """The calibration table (p- and q-values, order, notes) from the groups' statistics.

    ``stats`` carry the simulated columns
    (:func:`polars_cumdev.engines.cluster.finite.calibration_simulated`).
    """
    from polars_cumdev.calibration.table import BERNOULLI, PROBABILITY, normalized_table

    bernoulli = pl.LazyFrame([BERNOULLI])
    keys = prepared.keys
    out = normalized_table(stats.lazy(), keys, bernoulli, None, prepared, PROBABILITY, level)
    return out.collect(engine="in-memory")
