"""Steps 1 and 2: per-(range, group) cell summaries, and the plan they give."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from polars_cumdev.engines.partitioned.columns import (
    HI,
    LO,
    MIDPOINT,
    NONBINARY,
    Q_HI,
    Q_LO,
    QUERY,
    RANGE,
    RHIGH,
    RLOW,
    RMAX,
    RSUM,
    WMAX,
)
from polars_cumdev.engines.partitioned.cuts import range_index
from polars_cumdev.method import _names as nm
from polars_cumdev.method.bins import midpoint
from polars_cumdev.method.findings import LEVEL, check_level
from polars_cumdev.method.prepare import FrameLike, Labels, as_lazy
from polars_cumdev.method.statistics import check_variance
from polars_cumdev.method.weights import scale_factor

__all__ = ["Plan", "cell_summaries", "merge_cell_summaries", "piece_cell_summaries", "plan_ranges"]


def cell_summaries(rows: FrameLike, keys: Sequence[str], cuts: Sequence[float]) -> pl.LazyFrame:
    """Per (range, group) cell: first/last score, rows, largest weight and |response|, sums.

    ``rows`` are standardized rows (:func:`polars_cumdev.method.prepare.prepare`) in
    any order and any batch: summaries of several batches merge with
    :func:`merge_cell_summaries`.
    """
    return (
        as_lazy(rows)
        .with_columns(range_index(cuts, pl.col(nm.SCORE)).alias(RANGE))
        .group_by([RANGE, *keys])
        .agg(_cell_columns())
    )


def _cell_columns() -> list[pl.Expr]:
    """The aggregations of a cell summary (its columns after ``RANGE`` and the keys)."""
    r = pl.col(nm.RESPONSE)
    return [
        pl.col(nm.SCORE).min().alias(LO),
        pl.col(nm.SCORE).max().alias(HI),
        pl.len().cast(pl.Int64).alias(nm.ROWS),
        pl.col(nm.WEIGHT).max().alias(WMAX),
        r.abs().max().alias(RMAX),
        r.min().alias(RLOW),
        r.max().alias(RHIGH),
        r.sum().alias(RSUM),
        ((r != 0.0) & (r != 1.0)).sum().cast(pl.Int64).alias(NONBINARY),
    ]


def piece_cell_summaries(
    pieces: Sequence[pl.DataFrame], keys: Sequence[str], cuts: Sequence[float]
) -> pl.DataFrame:
    """:func:`cell_summaries` of rows already split by range (``pieces[r]``: range r's rows).

    The same cells as :func:`cell_summaries` of the rows put together (in
    another row order), from one aggregation per piece: a batch that is split
    by range anyway is not grouped a second time by range (a million rows in
    32 ranges: 0.07-0.10 s against 0.36-0.59 s for the two-key aggregation).
    """
    keys = list(keys)
    dtype = pl.select(range_index(cuts, pl.lit(0.0))).to_series().dtype
    found = []
    for r, piece in enumerate(pieces):
        if not piece.height:
            continue
        cells = piece.group_by(keys).agg(_cell_columns()) if keys else piece.select(_cell_columns())
        found.append(cells.select(pl.lit(r, dtype=dtype).alias(RANGE), pl.all()))
    if not found:
        return cell_summaries(pieces[0], keys, cuts).collect()
    return pl.concat(found)


def merge_cell_summaries(parts: Sequence[FrameLike], keys: Sequence[str]) -> pl.LazyFrame:
    """Merge outputs of :func:`cell_summaries` computed on separate batches of rows."""
    return (
        pl.concat([as_lazy(p) for p in parts])
        .group_by([RANGE, *keys])
        .agg(
            pl.col(LO).min(),
            pl.col(HI).max(),
            pl.col(nm.ROWS).sum(),
            pl.col(WMAX).max(),
            pl.col(RMAX).max(),
            pl.col(RLOW).min(),
            pl.col(RHIGH).max(),
            pl.col(RSUM).sum(),
            pl.col(NONBINARY).sum(),
        )
    )


# --------------------------------------------------------------------------
# Step 2: the plan
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Everything the per-range step and the combination need, all small.

    Attributes
    ----------
    cuts
        The cut points c_1 < ... < c_{R-1}.
    keys
        Grouping columns.
    centre
        c = round(2 mean R) / 2 (R itself when every response is R), the centring
        of the responses in the prefix sums (as in
        :func:`polars_cumdev.method.prefix_sums.response_centre`).
    binary
        Whether the Bernoulli sigma (31) of M. Tygert, "Cumulative deviation of
        a subpopulation from the full population" applies.
    weight_scale
        The power of two the weights are multiplied by before any sum
        (:func:`polars_cumdev.method.weights.scale_factor` of the largest weight).
    response_scale
        The largest |R| (see :func:`polars_cumdev.method.statistics.resolved`).
    cells
        One row per non-empty (range, group): keys, ``RANGE``, ``Q_LO`` and
        ``Q_HI`` (query ids, null at the group's two ends), ``LO`` (the
        cell's first score) and ``WMAX`` (its largest weight).
    queries
        One row per query: ``QUERY`` (id), ``MIDPOINT`` B and ``RANGE`` (the
        range c_{r-1} < B <= c_r that answers it).
    range_rows
        Rows in each range (length R).
    labels
        How errors found in the combination name the weight and response
        columns.
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): only groups with q <= level
        are located (the second pass skips the others).
    """

    cuts: list[float]
    keys: list[str]
    centre: float
    binary: bool
    weight_scale: float
    response_scale: float
    cells: pl.DataFrame
    queries: pl.DataFrame
    range_rows: list[int]
    labels: Labels = field(default_factory=Labels)
    level: float = LEVEL
    #: Whether every response is 0 or 1 (the finite-sample p-values need it: .finite).
    zero_one: bool = False

    @property
    def ranges(self) -> int:
        """Number of ranges R."""
        return len(self.cuts) + 1

    def queries_for(self, r: int) -> pl.DataFrame:
        """The queries range ``r`` answers (``QUERY``, ``MIDPOINT``)."""
        return self.queries.filter(pl.col(RANGE) == r).select(QUERY, MIDPOINT)


def _centre(mean: float, cells: pl.DataFrame) -> float:
    """round(2 mean) / 2 with Polars' rounding, or the response when all are one value,
    as the one-pass screen does (:func:`~polars_cumdev.method.prefix_sums.response_centre`)."""
    if cells.height and cells.get_column(RLOW).min() == cells.get_column(RHIGH).max():
        return float(cells.get_column(RLOW).min())  # type: ignore[arg-type]
    return pl.select((pl.lit(mean, dtype=pl.Float64) * 2.0).round() / 2.0).item()


def plan_ranges(
    cells: pl.DataFrame,
    keys: Sequence[str],
    cuts: Sequence[float],
    variance: str,
    labels: Labels | None = None,
    level: float = LEVEL,
) -> Plan:
    """Route the cross-range midpoints and gather the global constants (step 2).

    For consecutive non-empty cells of a group, in ranges r1 < r2, the
    midpoint B of the last score in r1 and the first score in r2
    (:func:`polars_cumdev.method.bins.midpoint`) bounds the bins of both end points;
    it is answered by the range containing it.
    """
    keys = list(keys)
    cuts = list(cuts)
    variance = check_variance(variance)
    rows = int(cells.get_column(nm.ROWS).sum())
    mean = float(cells.get_column(RSUM).sum()) / rows if rows else 0.0
    if variance == "auto":
        binary = int(cells.get_column(NONBINARY).sum()) == 0
    else:
        binary = variance == "bernoulli"
    per_range = cells.group_by(RANGE).agg(pl.col(nm.ROWS).sum())
    counts = dict(zip(per_range[RANGE].to_list(), per_range[nm.ROWS].to_list(), strict=True))
    range_rows = [int(counts.get(r, 0)) for r in range(len(cuts) + 1)]

    ordered = cells.sort([*keys, RANGE], nulls_last=True)
    over = pl.col(HI).shift(1)
    if keys:
        over = over.over(keys)
    linked = ordered.with_columns(
        midpoint(over, pl.col(LO)).alias(MIDPOINT)  # lower midpoint of the cell's first point
    ).with_row_index(QUERY)
    # A query for every cell that has a predecessor in its group: its lower midpoint.
    has_query = pl.col(MIDPOINT).is_not_null()
    linked = linked.with_columns(pl.when(has_query).then(pl.col(QUERY)).alias(Q_LO))
    nxt = pl.col(Q_LO).shift(-1)
    if keys:
        nxt = nxt.over(keys)
    linked = linked.with_columns(nxt.alias(Q_HI))
    queries = linked.filter(has_query).select(
        pl.col(QUERY),
        pl.col(MIDPOINT),
        range_index(cuts, pl.col(MIDPOINT)).cast(pl.Int64).alias(RANGE),
    )
    largest = cells.get_column(WMAX).max() if cells.height else 1.0
    response_scale = float(cells.get_column(RMAX).max()) if cells.height else 0.0
    return Plan(
        cuts=cuts,
        keys=keys,
        centre=_centre(mean, cells),
        binary=binary,
        weight_scale=pl.select(scale_factor(pl.lit(largest, dtype=pl.Float64))).item(),
        response_scale=response_scale,
        cells=linked.select(*keys, pl.col(RANGE).cast(pl.Int64), Q_LO, Q_HI, LO, WMAX),
        queries=queries,
        range_rows=range_rows,
        labels=labels if labels is not None else Labels(),
        level=check_level(level),
        zero_one=int(cells.get_column(NONBINARY).sum()) == 0,
    )
