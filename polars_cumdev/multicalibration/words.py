"""The worst segments of a multicalibration table, in plain words.

A sentence states a finding (where and by how much the responses exceed or
fall short of the scores) only for a segment significant family-wise
(``p_family <= level``, so its located stretch is set); every other segment
is said to be not significant.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from polars_cumdev.method.findings import decided

__all__ = ["conjunction", "describe", "sentences"]


def conjunction(row: dict[str, Any], features: list[str]) -> str:
    """ "a = x & b = 1" for a segment row; "everyone" for the empty conjunction."""
    parts = [f"{f} = {row[f]}" for f in features if row.get(f) is not None]
    return " & ".join(parts) if parts else "everyone"


def describe(
    row: dict[str, Any],
    features: list[str],
    level: float = 0.05,
    names: dict[str, str] | None = None,
) -> str:
    """One sentence about one segment row (``names``: condition -> conjunction)."""
    names = names or {}
    who = conjunction(row, features)
    z = row.get("ecce_r_z", row.get("kuiper_z"))
    p = row.get("p_family")
    if z is None or p is None:
        return f"{who}: no test ({row.get('note')})"
    if not decided(row):
        return f"{who}: not significant family-wise (z = {z:.2f}, p_family = {p:.2g})"
    reference = "the scores" if "ecce_r_z" in row else "the full population"
    size = f"{row['n']:,} rows"
    if row.get("from_score") is None:
        where = "no single stretch of scores carries it"
    else:
        direction = "exceed" if row["deviation"] > 0 else "fall short of"
        where = (
            f"responses {direction} {reference} by {abs(row['deviation']):.3g} on average "
            f"for scores {row['from_score']:.3g} to {row['to_score']:.3g} "
            f"({100 * row['share']:.0f}% of the segment's weight)"
        )
    kind = row.get("finding")
    origin = ""
    if kind == "inherited":
        parent = names.get(row["parent"], row["parent"])
        origin = f"; inherited from {parent} (z = {row['parent_z']:.2f})"
    elif kind == "broader":
        child = names.get(row["child"], row["child"])
        origin = f"; concentrated in {child} (z = {row['child_z']:.2f})"
    elif kind == "echo":
        other = names.get(row["overlap"], row["overlap"])
        rest = row.get("remainder_z")
        outside = f"z = {rest:.2f}" if rest is not None else "no rows"
        origin = f"; an echo of {other}, which overlaps it (its rows outside: {outside})"
    elif kind == "new":
        origin = "; stronger than its parents and children"
    return f"{who} ({size}): {where}; z = {z:.2f}, p_family = {p:.2g}{origin}"


def sentences(
    table: pl.DataFrame, features: list[str], top: int = 5, level: float = 0.05
) -> list[str]:
    """Sentences for the ``top`` strongest segments: new findings, broader views, the rest."""
    rank = {"new": 0, "broader": 1, "inherited": 2, "echo": 2}
    order = pl.col("finding").replace_strict(rank, default=3, return_dtype=pl.Int8)
    z = "ecce_r_z" if "ecce_r_z" in table.columns else "kuiper_z"
    ranked = table.with_columns(order.alias("_order")).sort(
        ["_order", z], descending=[False, True], nulls_last=True, maintain_order=True
    )
    names = {
        row["condition"]: conjunction(row, features)
        for row in table.select(*features, "condition").iter_rows(named=True)
    }
    return [describe(row, features, level, names) for row in ranked.head(top).iter_rows(named=True)]
