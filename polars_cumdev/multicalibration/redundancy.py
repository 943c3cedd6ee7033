"""Each segment against its parents: a new finding, or one inherited from a parent.

The parents of a segment of depth d are the d segments of depth d - 1 made by
dropping one of its conditions (their rows contain its rows). A child of a
miscalibrated parent deviates too, but with fewer rows its z is smaller: the
deviation is inherited. A segment whose z exceeds every parent's is where the
deviation concentrates. ``finding`` is "new" for a significant segment
(``p_family <= level``) whose z exceeds its strongest parent's (or that has no
parent in the family), "inherited" for a significant one that does not, and
"not significant" otherwise; reports list the new findings first.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

__all__ = ["with_parents"]


def with_parents(
    table: pl.LazyFrame, features: Sequence[str], level: float, z: str = "ecce_r_z"
) -> pl.LazyFrame:
    """``table`` with ``parent_z``, ``parent`` (its condition) and ``finding``.

    ``z`` names the statistic compared (``kuiper_z`` for a screen).

    Joins only (one per feature): no loop over segments.
    """
    table = table.cache()
    features = list(features)
    base = table.select(*features, pl.col(z).alias("_pz"), pl.col("condition").alias("_pc"))
    links = [
        table.filter(pl.col(f).is_not_null()).select(
            pl.col("condition").alias("_child"),
            *[pl.lit(None, dtype=pl.String).alias(g) if g == f else pl.col(g) for g in features],
        )
        for f in features
    ]
    if links:
        best = (
            pl.concat(links)
            .join(base, on=features, how="inner", nulls_equal=True)
            .filter(pl.col("_pz").is_not_null())
            .sort(["_pz", "_pc"], descending=[True, False])
            .group_by("_child", maintain_order=True)
            .first()
            .select(
                pl.col("_child").alias("condition"),
                pl.col("_pz").alias("parent_z"),
                pl.col("_pc").alias("parent"),
            )
        )
    else:
        schema = {"condition": pl.String, "parent_z": pl.Float64, "parent": pl.String}
        best = pl.LazyFrame(schema=schema)
    significant = (pl.col("p_family") <= level).fill_null(False)
    stronger = pl.col("parent_z").is_null() | (pl.col(z) > pl.col("parent_z"))
    finding = (
        pl.when(~significant)
        .then(pl.lit("not significant"))
        .when(stronger)
        .then(pl.lit("new"))
        .otherwise(pl.lit("inherited"))
    )
    return table.join(best, on="condition", how="left").with_columns(finding.alias("finding"))
