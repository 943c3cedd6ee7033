"""The located stretch by ranges: a second pass over the ranges, for the groups with D > 2 sigma.

The located stretch (:mod:`polars_cumdev.method.location`) is the shortest stretch
(in A) between points i < j of a group's curve, the origin included, whose
signed rise sign (C_j - C_i) reaches T = D - 2 sigma; the sign is +1 when the
curve's first minimum comes before its first maximum. No range holds a whole
curve, and T and the sign are known only once the first pass is combined,
so the ranges are read again, only when some group has T > 0 and only for
those groups (the *flagged* ones):

1. :func:`flag` -- from :func:`~polars_cumdev.engines.partitioned.joining.combine_cells`:
   per flagged group T and the sign (the first maximum and minimum of C are
   found from the cells' extremes and the positions of their interior
   extremes), and per flagged (range, group) cell what the range needs to
   lay out the group's curve there: C before the cell and at its first
   point, the last point's term, the weight and points before it, and the
   first score of the group's next cell.
2. :func:`polars_cumdev.engines.partitioned.points.range_points` -- per range, the
   group's points with their absolute C and A: the best stretch whose end
   lies in the range and whose start is the point before the range's first
   one or later, and the *candidates* for stretches that cross ranges.
3. :func:`stitch` -- per group, the candidates of all ranges in order after
   the origin are searched as one curve, and the result is compared with the
   ranges' own bests by (share, end).

Why the candidates suffice. Let (i, j) be the located stretch and write
v = sign C. Every k with i < k <= j has v_k > v_i (else k would be a later,
valid start for j, and the search takes the latest one), and every k with
i <= k < j has v_k < v_j (else (i, k) or a shorter stretch ending at k would
be valid and end earlier, and ties in length go to the earliest end). If i
and j lie in different ranges, i is thus a strict suffix minimum of the
group's points of its range and j a strict prefix maximum of the points of
its range (after the point before that range), and v_i <= max v - T,
v_j >= min v + T. Searching the candidates finds, for j, that same start i
(no candidate between them is a valid start), and for any other end a
start no later than its own, so a stretch no shorter: the minimum over the
candidates and the ranges' bests is the located stretch. For a random walk
a range of m points has O(sqrt m) such records, and the level band keeps
few of them when the drift is strong.

Rounding. C and A are those of the partitioned sums, equal to the one-pass
screen's to rounding (A is a cumulative weight over the total weight, exact
for integer weights); stretches whose rise is within rounding of T, or whose
lengths differ by rounding only, may be resolved differently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.cells import Plan
from polars_cumdev.engines.partitioned.columns import LO, RANGE, TOTAL_WEIGHT
from polars_cumdev.engines.partitioned.joining import finish
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled
from polars_cumdev.method.accumulate import per_group
from polars_cumdev.method.findings import significant
from polars_cumdev.method.location import (
    LOCATION_COLUMNS,
    numpy_search,
    stretches_numpy,
    threshold,
)
from polars_cumdev.method.statistics import SIGMA_B, SIGMA_E

__all__ = ["FID", "Locating", "flag", "search", "stitch", "with_located"]

FID = f"{nm.PREFIX}fid"  # number of a flagged group
SIGN = f"{nm.PREFIX}sign"
LIMIT = f"{nm.PREFIX}limit"  # T
# Relative margin of the level bands (candidates beyond it cannot start or end the stretch).
SLACK = 1e-9


@dataclass(frozen=True)
class Locating:
    """What the second pass needs (all small).

    Attributes
    ----------
    groups
        One row per flagged group: ``FID``, the keys, ``SIGN`` (+1 or -1),
        ``LIMIT`` (T) and ``LO`` (its first score).
    cells
        One row per flagged (range, group) cell: ``FID``, the keys,
        ``RANGE``, ``SIGN``, ``LIMIT``, ``c_base`` (C at the point before
        the cell; 0 at the origin), ``c_first`` (C at its first point),
        ``tl`` (the last point's term), ``TOTAL_WEIGHT``, ``prior_w`` and
        ``prior_n`` (the group's weight and points before the cell),
        ``next_score`` (the first score of the group's next cell),
        ``lo_level`` and ``hi_level`` (the level bands of the candidates,
        in signed C).
    """

    groups: pl.DataFrame
    cells: pl.DataFrame

    def for_range(self, r: int) -> pl.DataFrame:
        """The flagged cells of range ``r``."""
        return self.cells.filter(pl.col(RANGE) == r).drop(RANGE)

    @property
    def ranges(self) -> set[int]:
        """The ranges holding at least one flagged cell."""
        return set(self.cells.get_column(RANGE).unique().to_list())


def _first_extreme(value: str, at: str, larger: bool) -> pl.Expr:
    """In-cell position of the first maximum (or minimum) of C over a cell's points.

    The cell's first point is C_f; its interior points C_f + q_k (extreme
    ``value`` at position ``at``); its last point C_f + q_sum + tl.
    """
    fill = -np.inf if larger else np.inf
    q = pl.col(value).fill_null(fill)
    end = pl.when(pl.col("n_scores") > 1).then(pl.col("q_sum") + pl.col("_tl")).otherwise(fill)
    if larger:
        first, inner = (q <= 0.0) & (end <= 0.0), q >= end
    else:
        first, inner = (q >= 0.0) & (end >= 0.0), q <= end
    last = pl.col("n_scores") - 1
    return pl.when(first).then(0).when(inner).then(pl.col(at)).otherwise(last).cast(pl.Int64)


def flag(plan: Plan, cells: pl.DataFrame, stats: pl.DataFrame) -> Locating | None:
    """The flagged groups and their cells; None when there is none.

    A group is flagged when it has T > 0, two points or more, and is
    significant at ``plan.level`` (its q-value over the groups, computed from
    ``stats`` by :func:`~polars_cumdev.engines.partitioned.joining.finish`;
    :mod:`polars_cumdev.method.findings`): the stretch of any other group
    would be nulled, so it is not searched. ``cells`` is
    :func:`~polars_cumdev.engines.partitioned.joining.combine_cells`' output
    and ``stats`` :func:`~polars_cumdev.engines.partitioned.joining.aggregate`'s.
    """
    keys = plan.keys
    sigma2 = pl.col(SIGMA_B if plan.binary else SIGMA_E)
    candidates = stats.select(*keys, threshold(pl.col("kuiper"), sigma2).alias(LIMIT), "n_scores")
    candidates = candidates.filter((pl.col(LIMIT) > 0.0) & (pl.col("n_scores") >= 2))
    if not candidates.height:
        return None
    judged = finish(plan, stats).filter(significant(plan.level))
    if keys:
        candidates = candidates.join(
            judged.select(keys), on=keys, how="semi", nulls_equal=True, maintain_order="left"
        )
    elif not judged.height:
        return None
    flagged = (
        candidates.drop("n_scores").with_row_index(FID).with_columns(pl.col(FID).cast(pl.Int64))
    )
    if not flagged.height:
        return None
    if keys:
        mine = cells.join(flagged, on=keys, how="inner", nulls_equal=True, maintain_order="left")
    else:
        mine = cells.join(flagged, how="cross")
    step = pl.col("_step")
    base = per_group(step.cum_sum(), [FID]) - step
    prior_n = per_group(pl.col("n_scores").cum_sum(), [FID]) - pl.col("n_scores")
    mine = mine.with_columns(
        base.alias("c_base"),
        (base + pl.col("_tf")).alias("c_first"),
        prior_n.alias("prior_n"),
        (per_group(pl.col("weight").cum_sum(), [FID]) - pl.col("weight")).alias("prior_w"),
        per_group(pl.col(LO).shift(-1), [FID]).alias("next_score"),
        (prior_n + 1 + _first_extreme("q_max", "q_at_max", True)).alias("_at_max"),
        (prior_n + 1 + _first_extreme("q_min", "q_at_min", False)).alias("_at_min"),
    )
    # The first maximum: the origin (position 0) unless some C_k > 0, else the
    # first cell reaching the group's maximum; likewise the minimum.
    top, bottom = pl.col("_max").max(), pl.col("_min").min()
    at_top = pl.col("_at_max").filter(pl.col("_max") == top).min()
    at_bottom = pl.col("_at_min").filter(pl.col("_min") == bottom).min()
    signs = mine.group_by(FID).agg(
        top.clip(lower_bound=0.0).alias("_top"),
        bottom.clip(upper_bound=0.0).alias("_bottom"),
        pl.when(top > 0.0).then(at_top).otherwise(0).alias("_first_top"),
        pl.when(bottom < 0.0).then(at_bottom).otherwise(0).alias("_first_bottom"),
    )
    sign = pl.when(pl.col("_first_bottom") < pl.col("_first_top")).then(1.0).otherwise(-1.0)
    signs = signs.with_columns(sign.alias(SIGN))
    high = pl.when(pl.col(SIGN) > 0).then(pl.col("_top")).otherwise(-pl.col("_bottom"))
    low = pl.when(pl.col(SIGN) > 0).then(pl.col("_bottom")).otherwise(-pl.col("_top"))
    slack = SLACK * (pl.col("_top") - pl.col("_bottom"))
    signs = signs.with_columns(high.alias("_high"), low.alias("_low"), slack.alias("_slack"))
    mine = mine.join(signs, on=FID, how="left").with_columns(
        (pl.col("_high") - pl.col(LIMIT) + pl.col("_slack")).alias("lo_level"),
        (pl.col("_low") + pl.col(LIMIT) - pl.col("_slack")).alias("hi_level"),
    )
    columns = ["c_base", "c_first", "_tl", TOTAL_WEIGHT, "prior_w", "prior_n", "next_score"]
    out_cells = mine.select(
        FID, *keys, RANGE, SIGN, LIMIT, *columns, "lo_level", "hi_level"
    ).rename({"_tl": "tl"})
    firsts = mine.group_by(FID).agg(pl.col(LO).first(), pl.col(SIGN).first())
    groups = flagged.join(firsts, on=FID, how="left").sort(FID)
    return Locating(groups=groups, cells=out_cells)


def search(
    starts: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    origins: tuple[np.ndarray, np.ndarray, np.ndarray],
    thresholds: np.ndarray,
    compiled_search: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`polars_cumdev.kernel.stretches_from`, in NumPy for small searches.

    ``compiled_search``: the caller has run the kernel already, so the search
    is compiled whatever its size (:func:`~polars_cumdev.method.location.numpy_search`;
    NumPy's took 40 ms a range of 160,000 points, the compiled one about 2).
    """
    arrays = (
        np.ascontiguousarray(starts, dtype=np.int64),
        np.ascontiguousarray(a, dtype=np.float64),
        np.ascontiguousarray(c, dtype=np.float64),
    )
    limits = np.ascontiguousarray(thresholds, dtype=np.float64)
    origin = tuple(np.ascontiguousarray(o, dtype=np.float64) for o in origins)
    if numpy_search(a.size, compiled_search):
        return stretches_numpy(*arrays, limits, origin)
    return compiled.kernel().stretches_from(*arrays, *origin, limits)


def stretch_columns(
    starts: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    values: dict[str, np.ndarray],
    origins: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """The located columns (and ``end``) of the found stretches (NaN where there is none).

    ``values`` per point and ``origins`` per group (the start point, index
    -1) hold ``a``, ``c``, ``next`` (the score of the point after it) and
    ``position`` (its index on the group's whole curve, 0 at the origin);
    ``values`` also ``score``.
    """
    found = upper >= 0
    head = starts[:-1]
    hi = np.where(found, head + upper, 0)
    lo = np.where(found & (lower >= 0), head + lower, 0)
    start_point = lower < 0

    def at_lo(name: str) -> np.ndarray:
        return np.where(start_point, origins[name], values[name][lo] if values[name].size else 0.0)

    def at_hi(name: str) -> np.ndarray:
        return values[name][hi] if values[name].size else np.zeros(found.size)

    share = at_hi("a") - at_lo("a")
    with np.errstate(invalid="ignore", divide="ignore"):
        deviation = (at_hi("c") - at_lo("c")) / share
    columns = {
        "from_score": at_lo("next"),
        "to_score": at_hi("score"),
        "share": share,
        "deviation": deviation,
        "end": at_hi("position").astype(np.float64),
    }
    return {name: np.where(found, column, np.nan) for name, column in columns.items()}


def stitch(locating: Locating, bests: pl.DataFrame, candidates: pl.DataFrame) -> pl.DataFrame:
    """Each flagged group's located stretch: keys and :data:`LOCATION_COLUMNS`.

    ``bests`` and ``candidates`` are the ranges' outputs of
    :func:`polars_cumdev.engines.partitioned.points.range_points`, concatenated.
    """
    groups = locating.groups
    count = groups.height
    candidates = candidates.sort(FID, "position")
    fid = candidates.get_column(FID).to_numpy()
    starts = np.searchsorted(fid, np.arange(count + 1), side="left").astype(np.int64)
    values = {
        name: candidates.get_column(name).cast(pl.Float64).to_numpy()
        for name in ("a", "c", "next", "score", "position")
    }
    lower, upper = search(
        starts,
        values["a"],
        values["c"],
        (np.zeros(count), np.zeros(count), groups.get_column(SIGN).to_numpy()),
        groups.get_column(LIMIT).to_numpy(),
    )
    zeros = np.zeros(count)
    origins = {"a": zeros, "c": zeros, "position": zeros, "next": groups.get_column(LO).to_numpy()}
    crossing = pl.DataFrame(
        {
            FID: np.arange(count, dtype=np.int64),
            **stretch_columns(starts, lower, upper, values, origins),
        }
    ).fill_nan(None)
    every = pl.concat([bests.select(crossing.columns), crossing], how="vertical_relaxed")
    best = (
        every.drop_nulls("share")
        .sort(FID, "share", "end")
        .group_by(FID, maintain_order=True)
        .first()
    )
    return (
        groups.select(FID, *[k for k in groups.columns if k not in (FID, SIGN, LIMIT, LO)])
        .join(best, on=FID, how="left")
        .drop(FID, "end")
    )


def with_located(plan: Plan, stats: pl.DataFrame, found: pl.DataFrame) -> pl.DataFrame:
    """``stats`` with the location columns of ``found`` (null for the groups not in it)."""
    keys = plan.keys
    rest = stats.drop(LOCATION_COLUMNS)
    if keys:
        out = rest.join(found, on=keys, how="left", nulls_equal=True, maintain_order="left")
    else:
        out = rest.join(found, how="cross") if found.height else stats
    return out.select(stats.columns)


def empty_outputs() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Schemas of ``bests`` and ``candidates`` with no row."""
    floats = {c: pl.Float64 for c in (*LOCATION_COLUMNS, "end")}
    bests = pl.DataFrame(schema={FID: pl.Int64, **floats})
    candidates = pl.DataFrame(
        schema={
            FID: pl.Int64,
            "position": pl.Int64,
            **{c: pl.Float64 for c in ("a", "c", "score", "next")},
        }
    )
    return bests, candidates


def gather(
    outputs: Sequence[tuple[pl.DataFrame, pl.DataFrame] | None],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ranges' ``(bests, candidates)`` concatenated (``None`` for a range not read)."""
    bests, candidates = empty_outputs()
    parts = [o for o in outputs if o is not None]
    return (
        pl.concat([bests, *[b for b, _ in parts]], how="vertical_relaxed"),
        pl.concat([candidates, *[c for _, c in parts]], how="vertical_relaxed"),
    )
