"""Each segment against its parents and children: one finding, not ten variants of it.

The parents of a segment of depth d are the d segments of depth d - 1 made by
dropping one of its conditions (their rows contain its rows); its children
add one condition. A miscalibration confined to one intersection shows in
three ways: the intersection itself has the largest z around it; its
children deviate too, with fewer rows and so a smaller z (inherited); and its
parents deviate too, diluted by their other rows, with a smaller z than that
child (a broader view). ``finding`` says which, for every segment significant
family-wise (``p_family <= level``):

* ``"new"``: z exceeds its strongest parent's and every child's (or it has
  none in the family), and no overlapping stronger significant segment
  explains it (:mod:`~polars_cumdev.multicalibration.echoes`): the deviation
  is concentrated here;
* ``"echo"``: as "new" against its parents and children, but its rows outside
  an overlapping stronger significant segment (``overlap``) are not
  significant on their own (``remainder_z`` at most ``critical_z``);
* ``"inherited"``: z does not exceed its strongest parent's;
* ``"broader"``: z exceeds its parents' but a child's z is larger: the
  deviation is concentrated in that child;
* ``"not significant"`` otherwise.

This is a ranking device, not a test: "new" findings are listed first in
reports and sentences, and the strongest parent and child are named.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

__all__ = ["with_parents"]


def _links(table: pl.LazyFrame, features: list[str]) -> pl.LazyFrame:
    """(child condition, parent's feature columns) for every child and every dropped feature."""
    return pl.concat(
        [
            table.filter(pl.col(f).is_not_null()).select(
                pl.col("condition").alias("_child"),
                *[
                    pl.lit(None, dtype=pl.String).alias(g) if g == f else pl.col(g)
                    for g in features
                ],
            )
            for f in features
        ]
    )


def with_parents(
    table: pl.LazyFrame, features: Sequence[str], level: float, z: str = "ecce_r_z"
) -> pl.LazyFrame:
    """``table`` with ``parent_z``, ``parent``, ``child_z``, ``child`` and ``finding``.

    ``parent`` and ``child`` are the conditions of the strongest parent and
    child (by z); ``z`` names the statistic compared (``kuiper_z`` for a
    screen). Joins only (one per feature): no loop over segments.
    """
    table = table.cache()
    features = list(features)
    schema = {"condition": pl.String, "parent_z": pl.Float64, "parent": pl.String}
    if not features:
        parents = pl.LazyFrame(schema=schema)
        children = pl.LazyFrame(schema={"condition": pl.String, "child_z": pl.Float64,
                                        "child": pl.String})  # fmt: skip
    else:
        base = table.select(*features, pl.col(z).alias("_pz"), pl.col("condition").alias("_pc"))
        pairs = (
            _links(table, features)
            .join(base, on=features, how="inner", nulls_equal=True)
            .join(
                table.select(pl.col("condition").alias("_child"), pl.col(z).alias("_cz")),
                on="_child",
                how="left",
            )
            .cache()
        )
        parents = (
            pairs.filter(pl.col("_pz").is_not_null())
            .sort(["_pz", "_pc"], descending=[True, False])
            .group_by("_child", maintain_order=True)
            .first()
            .select(
                pl.col("_child").alias("condition"),
                pl.col("_pz").alias("parent_z"),
                pl.col("_pc").alias("parent"),
            )
        )
        children = (
            pairs.filter(pl.col("_cz").is_not_null())
            .sort(["_cz", "_child"], descending=[True, False])
            .group_by("_pc", maintain_order=True)
            .first()
            .select(
                pl.col("_pc").alias("condition"),
                pl.col("_cz").alias("child_z"),
                pl.col("_child").alias("child"),
            )
        )
    significant = pl.col("significant").fill_null(False)
    above_parents = pl.col("parent_z").is_null() | (pl.col(z) > pl.col("parent_z"))
    above_children = pl.col("child_z").is_null() | (pl.col(z) >= pl.col("child_z"))
    finding = (
        pl.when(~significant)
        .then(pl.lit("not significant"))
        .when(~above_parents)
        .then(pl.lit("inherited"))
        .when(~above_children)
        .then(pl.lit("broader"))
        .when(pl.col("overlap").is_not_null())
        .then(pl.lit("echo"))
        .otherwise(pl.lit("new"))
    )
    return (
        table.join(parents, on="condition", how="left")
        .join(children, on="condition", how="left")
        .with_columns(finding.alias("finding"))
    )
