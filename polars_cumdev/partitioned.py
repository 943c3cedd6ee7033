"""Range-partitioned screening: the screen of :mod:`polars_cumdev.subpopulation`, by score ranges.

The one-pass :func:`polars_cumdev.subpopulation.screen` sorts the whole
population by score. Here the score axis is cut into R ranges
(c_0 = -inf < c_1 < ... < c_R = +inf; range r holds the rows with
c_{r-1} < S <= c_r, so tied scores never straddle two ranges) and the screen
is rebuilt from per-range pieces, so that only one range has to be in memory
at a time and the ranges could be handled by different workers.

Why it decomposes (method.md 1.2-1.6). Write P(x) for the vector of
full-population sums (W, W^2, W r, W r^2, rows) over the rows with S <= x.
Every bin is P(B_k) - P(B_{k-1}) for two midpoints of one group. A midpoint B
lying in range r'' has P(B) = T_{<r''} + P_{r''}(B): the totals of all
earlier ranges plus the prefix *inside* range r''. Within one (range, group)
*cell* holding the group's merged points k = f..l, the midpoints B_f..B_{l-1}
fall inside the range, so the bins of the interior points f < k < l need the
range's rows only. Only the two end points of a cell have a bin reaching a
midpoint B_{f-1} or B_l shared with another cell; that midpoint is a small
*query* sent to whichever range contains it. The cumulative differences
C_k of a group are sums of per-point terms, so a cell reports the partial
sums of its interior terms (their total, running maximum and minimum, and the
sigma sums) and the end points' raw ingredients; a per-group scan over the
cells (offsets of C carried from range to range) then gives D, G, C_n and
sigma exactly as the one-pass screen does, up to rounding.

Rounding. A bin inside one range is a difference of running sums restarted
at the start of that range, and a bin across ranges is (the rest of its
first range) + (whole ranges in between) + (running sum in its last range).
The rounding error of a bin sum therefore grows with the size of a range,
not with the whole population as in the one-pass screen, and the
partitioned result is usually the more accurate of the two (see
``benchmarks/compensated_sum.py``).

The work is split in four steps, all plain Polars on small inputs except
the per-range step:

1. :func:`cell_summaries` -- one aggregation over any batch of rows (its
   outputs merge with :func:`merge_cell_summaries`): per (range, group) the
   first and last distinct score, rows, weight; per range the response sums
   that fix the centring and the Bernoulli test.
2. :func:`plan_ranges` -- from the cells: the centre, each group's total
   weight, the queries (the midpoints between consecutive cells of a group)
   routed to the range containing them.
3. :func:`range_step` -- a pure function of one range's rows (a Polars
   frame) plus the small plan: sorts that range by score (running sums),
   then stably by group (so that ties merge as runs and every group's points
   are contiguous), finds each midpoint's running sums by binary search, and
   returns its cell summaries, its query answers and its totals
   (:class:`RangeResult`).
4. :func:`combine` -- the per-group scan over the range results; its output
   goes through :func:`polars_cumdev.statistics.normalize` like a screen's.

:func:`screen_partitioned` runs the steps on any DataFrame/LazyFrame (ranges
collected one at a time); :func:`screen_parquet` is the out-of-core adapter
reading the ranges one at a time from Parquet files. An adapter for another
engine (Spark or Dask over Arrow batches) only has to route rows to ranges
and call :func:`range_step` on each range.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

from polars_cumdev import _names as nm
from polars_cumdev.accumulate import per_group
from polars_cumdev.bins import (
    COUNT_SUMS,
    PREFIX_SCORE,
    SUMS,
    bin_moments,
    full_population_prefix,
    midpoints,
)
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.prepare import FrameLike, Prepared, as_lazy
from polars_cumdev.statistics import (
    _SIGMA_B,
    _SIGMA_E,
    check_variance,
    normalize,
)
from polars_cumdev.subpopulation import prepare_screen
from polars_cumdev.sums import boundary
from polars_cumdev.ties import merge_ties

__all__ = [
    "Plan",
    "RangeResult",
    "cell_summaries",
    "combine",
    "cut_points",
    "merge_cell_summaries",
    "plan_ranges",
    "range_filter",
    "range_step",
    "screen_parquet",
    "screen_partitioned",
]

Engine = Literal["auto", "in-memory", "streaming"]

# Column names of the partitioned pipeline (all internal).
RANGE = f"{nm.PREFIX}range"
QUERY = f"{nm.PREFIX}query"
MIDPOINT = f"{nm.PREFIX}midpoint"
TOTAL_WEIGHT = f"{nm.PREFIX}total_weight"
_LO = f"{nm.PREFIX}lo"  # first distinct score of a cell
_HI = f"{nm.PREFIX}hi"  # last distinct score of a cell
_RSUM = f"{nm.PREFIX}rsum"
_NONBINARY = f"{nm.PREFIX}nonbinary"
_Q_LO = f"{nm.PREFIX}q_lo"  # query answering the lower midpoint of a cell's first point
_Q_HI = f"{nm.PREFIX}q_hi"  # query answering the upper midpoint of a cell's last point

_GID = f"{nm.PREFIX}gid"  # group number inside one range

# Default target of rows per range for the Parquet adapter.
ROWS_PER_RANGE = 4_000_000
# Size of the systematic sample the quantile cut points are drawn from.
SAMPLE_SIZE = 1_000_000


# --------------------------------------------------------------------------
# Ranges
# --------------------------------------------------------------------------


def range_filter(cuts: Sequence[float], r: int, column: str = nm.SCORE) -> pl.Expr:
    """Predicate selecting range ``r`` of ``cuts``: c_{r-1} < S <= c_r."""
    s = pl.col(column)
    parts = []
    if r > 0:
        parts.append(s > cuts[r - 1])
    if r < len(cuts):
        parts.append(s <= cuts[r])
    if not parts:
        return pl.lit(True)
    return pl.all_horizontal(parts) if len(parts) > 1 else parts[0]


def _range_index(cuts: Sequence[float], expr: pl.Expr) -> pl.Expr:
    """Index r of the range holding each value: the number of cuts strictly below it.

    ``bin_intervals`` with explicit breakpoints is elementwise, so it streams;
    a ``search_sorted`` of the column in a literal would make the streaming
    engine materialize the whole column (measured: 2.4 GiB for 2e8 rows).
    """
    if not cuts:
        return pl.lit(0, dtype=pl.UInt32)
    if hasattr(pl.Expr, "bin_intervals"):  # Polars >= 2.0 (experimental there)
        return expr.bin_intervals(list(cuts), labels=False, right_closed=True)
    return pl.sum_horizontal([(expr > c).cast(pl.UInt32) for c in cuts])


def _clean_cuts(cuts: Sequence[float]) -> list[float]:
    values = [float(c) for c in cuts]
    if not all(math.isfinite(c) for c in values):
        raise InvalidParameterError(f"cut points must be finite numbers, got {list(cuts)!r}")
    return sorted(set(values))


def cut_points(
    frame: pl.LazyFrame,
    ranges: int | Sequence[float],
    *,
    column: str = nm.SCORE,
    engine: Engine = "streaming",
) -> list[float]:
    """Cut points c_1 < ... < c_{R-1} for ``ranges`` score ranges.

    An integer R asks for R ranges of about equal row counts: the cuts are the
    (i / R)-quantiles (lower) of a systematic sample of at most
    :data:`SAMPLE_SIZE` scores; repeated quantiles (heavily tied scores) are
    merged, so fewer ranges can result. A sequence is taken as the cut points
    themselves. Any cuts give the same result; balanced ranges only keep the
    largest range small.
    """
    if not isinstance(ranges, int | np.integer) or isinstance(ranges, bool):
        if isinstance(ranges, str | bytes) or not isinstance(ranges, Sequence | np.ndarray):
            raise InvalidParameterError(
                f"`ranges` must be a positive int or a sequence of cut points, got {ranges!r}"
            )
        return _clean_cuts(ranges)
    count = int(ranges)
    if count < 1:
        raise InvalidParameterError(f"`ranges` must be at least 1, got {ranges!r}")
    if count == 1:
        return []
    rows = frame.select(pl.len()).collect(engine=engine).item()
    step = max(1, rows // SAMPLE_SIZE)
    sample = frame.select(pl.col(column)).gather_every(step).collect(engine=engine)
    values = sample.get_column(column).drop_nulls().drop_nans().to_numpy()
    if values.size == 0:
        return []
    levels = np.arange(1, count) / count
    quantiles = np.quantile(values, levels, method="lower")
    cuts = np.unique(quantiles)
    return _clean_cuts(cuts[cuts < values.max()].tolist())


# --------------------------------------------------------------------------
# Step 1: cells (mergeable over any batches)
# --------------------------------------------------------------------------


def cell_summaries(rows: FrameLike, keys: Sequence[str], cuts: Sequence[float]) -> pl.LazyFrame:
    """Per (range, group) cell: first/last distinct score, rows, weight and response sums.

    ``rows`` are standardized rows (:func:`polars_cumdev.prepare.prepare`) in
    any order and any batch: summaries of several batches merge with
    :func:`merge_cell_summaries`.
    """
    r = pl.col(nm.RESPONSE)
    return (
        as_lazy(rows)
        .with_columns(_range_index(cuts, pl.col(nm.SCORE)).alias(RANGE))
        .group_by([RANGE, *keys])
        .agg(
            pl.col(nm.SCORE).min().alias(_LO),
            pl.col(nm.SCORE).max().alias(_HI),
            pl.len().cast(pl.Int64).alias(nm.ROWS),
            pl.col(nm.WEIGHT).sum().alias(nm.WEIGHT),
            r.sum().alias(_RSUM),
            ((r != 0.0) & (r != 1.0)).sum().cast(pl.Int64).alias(_NONBINARY),
        )
    )


def merge_cell_summaries(parts: Sequence[FrameLike], keys: Sequence[str]) -> pl.LazyFrame:
    """Merge outputs of :func:`cell_summaries` computed on separate batches of rows."""
    return (
        pl.concat([as_lazy(p) for p in parts])
        .group_by([RANGE, *keys])
        .agg(
            pl.col(_LO).min(),
            pl.col(_HI).max(),
            pl.col(nm.ROWS).sum(),
            pl.col(nm.WEIGHT).sum(),
            pl.col(_RSUM).sum(),
            pl.col(_NONBINARY).sum(),
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
        c = round(2 mean R) / 2, the centring of the responses in the prefix
        sums (as in :func:`polars_cumdev.bins.full_population_prefix`).
    binary
        Whether the Bernoulli sigma (31) applies.
    group_weight
        One row per group: keys and ``TOTAL_WEIGHT`` (sum W of the group).
    cells
        One row per non-empty (range, group): keys, ``RANGE``, ``_Q_LO`` and
        ``_Q_HI`` (query ids, null at the group's two ends).
    queries
        One row per query: ``QUERY`` (id), ``MIDPOINT`` B and ``RANGE`` (the
        range c_{r-1} < B <= c_r that answers it).
    range_rows
        Rows in each range (length R).
    """

    cuts: list[float]
    keys: list[str]
    centre: float
    binary: bool
    group_weight: pl.DataFrame
    cells: pl.DataFrame
    queries: pl.DataFrame
    range_rows: list[int]

    @property
    def ranges(self) -> int:
        """Number of ranges R."""
        return len(self.cuts) + 1

    def queries_for(self, r: int) -> pl.DataFrame:
        """The queries range ``r`` answers (``QUERY``, ``MIDPOINT``)."""
        return self.queries.filter(pl.col(RANGE) == r).select(QUERY, MIDPOINT)


def _centre(mean: float) -> float:
    """round(2 mean) / 2 with Polars' rounding, as the one-pass screen does."""
    return pl.select((pl.lit(mean, dtype=pl.Float64) * 2.0).round() / 2.0).item()


def plan_ranges(
    cells: pl.DataFrame, keys: Sequence[str], cuts: Sequence[float], variance: str
) -> Plan:
    """Route the cross-range midpoints and gather the global constants (step 2).

    For consecutive non-empty cells of a group, in ranges r1 < r2, the
    midpoint B = (last score in r1 + first score in r2) / 2 bounds the bins of
    both end points; it is answered by the range containing it.
    """
    keys = list(keys)
    cuts = list(cuts)
    variance = check_variance(variance)
    rows = int(cells.get_column(nm.ROWS).sum())
    mean = float(cells.get_column(_RSUM).sum()) / rows if rows else 0.0
    if variance == "auto":
        binary = int(cells.get_column(_NONBINARY).sum()) == 0
    else:
        binary = variance == "bernoulli"
    per_range = cells.group_by(RANGE).agg(pl.col(nm.ROWS).sum())
    counts = dict(zip(per_range[RANGE].to_list(), per_range[nm.ROWS].to_list(), strict=True))
    range_rows = [int(counts.get(r, 0)) for r in range(len(cuts) + 1)]

    ordered = cells.sort([*keys, RANGE], nulls_last=True)
    over = pl.col(_HI).shift(1)
    if keys:
        over = over.over(keys)
    linked = ordered.with_columns(
        ((over + pl.col(_LO)) / 2.0).alias(MIDPOINT)  # lower midpoint of the cell's first point
    ).with_row_index(QUERY)
    # A query for every cell that has a predecessor in its group: its lower midpoint.
    has_query = pl.col(MIDPOINT).is_not_null()
    linked = linked.with_columns(pl.when(has_query).then(pl.col(QUERY)).alias(_Q_LO))
    nxt = pl.col(_Q_LO).shift(-1)
    if keys:
        nxt = nxt.over(keys)
    linked = linked.with_columns(nxt.alias(_Q_HI))
    queries = linked.filter(has_query).select(
        pl.col(QUERY),
        pl.col(MIDPOINT),
        _range_index(cuts, pl.col(MIDPOINT)).cast(pl.Int64).alias(RANGE),
    )
    group_weight = cells.group_by(keys).agg(pl.col(nm.WEIGHT).sum().alias(TOTAL_WEIGHT))
    return Plan(
        cuts=cuts,
        keys=keys,
        centre=_centre(mean),
        binary=binary,
        group_weight=group_weight,
        cells=linked.select(*keys, pl.col(RANGE).cast(pl.Int64), _Q_LO, _Q_HI),
        queries=queries,
        range_rows=range_rows,
    )


# --------------------------------------------------------------------------
# Step 3: one range (a pure function of its rows and the small plan)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RangeResult:
    """What one range contributes.

    Attributes
    ----------
    cells
        One row per group present in the range (see :func:`range_step`).
    answers
        ``QUERY`` and the local running sums (:data:`polars_cumdev.bins.SUMS`)
        at the query's midpoint.
    totals
        One row: the running sums over the whole range.
    """

    cells: pl.DataFrame
    answers: pl.DataFrame
    totals: pl.DataFrame


def _zero_sums() -> list[pl.Expr]:
    return [pl.lit(0, dtype=pl.Int64 if c in COUNT_SUMS else pl.Float64).alias(c) for c in SUMS]


def range_step(
    rows: FrameLike,
    keys: Sequence[str],
    *,
    centre: float,
    group_weight: pl.DataFrame,
    queries: pl.DataFrame,
    engine: Engine = "in-memory",
) -> RangeResult:
    """Everything one range contributes to the screen (step 3).

    Parameters
    ----------
    rows
        The standardized rows of one range (keys, ``SCORE``, ``RESPONSE``,
        ``WEIGHT``), in any order; the function sorts them.
    keys
        Grouping columns.
    centre
        The global centre c of :class:`Plan`.
    group_weight
        Keys and ``TOTAL_WEIGHT`` (at least for the groups in this range).
    queries
        ``QUERY`` and ``MIDPOINT``: the midpoints routed to this range.
    engine
        Polars engine for this range's query.

    Returns
    -------
    RangeResult
        ``cells``: per group in the range, ``n``, ``n_scores``, ``weight``,
        the first point (``f_w``, ``f_r``, ``f_tie`` and, when the cell has
        two or more points, the local prefix at its upper midpoint
        ``f_up*``), the last point (``l_w``, ``l_r``, ``l_tie`` and the local
        prefix at its lower midpoint ``l_lo*``), and for the interior points
        (neither first nor last of the cell) the sum, running maximum and
        minimum of a_k (R'_k - Rt_k) and the two sigma sums.
        ``answers``: local prefix sums at each query midpoint.
        ``totals``: the range's running sums.
    """
    keys = list(keys)
    ordered = as_lazy(rows).sort(nm.SCORE).collect(engine=engine)
    prefix = full_population_prefix(ordered.lazy(), pl.lit(centre)).collect(engine=engine)
    # A fresh one-row frame: a slice of `prefix` would keep its buffers alive.
    totals = (
        pl.DataFrame({c: [prefix.get_column(c)[-1]] for c in SUMS})
        if prefix.height
        else pl.select(_zero_sums())
    )
    points = _merged_by_group(ordered, keys, engine)
    del ordered

    # Points are contiguous per group (``_GID`` increasing), in increasing
    # score inside each group: neighbours are plain shifts, masked at the
    # group boundaries.
    points = points.with_columns(
        midpoints([_GID]).alias(MIDPOINT),
        boundary([_GID], -1).alias("_last"),
        boundary([_GID], 1).alias("_first"),
    )
    located = _lookup(points, prefix, MIDPOINT)
    below = [pl.when(~pl.col("_first")).then(pl.col(c).shift(1)).alias(f"{c}_lo") for c in SUMS]
    located = located.with_columns(below)
    interior = ~pl.col("_first") & ~pl.col("_last")
    ref, var = bin_moments(lambda c: pl.col(c) - pl.col(f"{c}_lo"), pl.lit(centre))
    # Terms with W'_k in place of a_k = W'_k / W_total: the group's total weight
    # is a constant of the cell, divided out after the aggregation.
    w = pl.col(nm.WEIGHT)
    w2f = w * w * pl.col(nm.TIE)
    located = located.with_columns(
        pl.when(interior).then(w * (pl.col(nm.RESPONSE) - ref)).otherwise(0.0).alias("_d"),
        pl.when(interior).then(w2f * ref * (1.0 - ref)).otherwise(0.0).alias("_sb"),
        pl.when(interior).then(w2f * var).otherwise(0.0).alias("_se"),
    ).with_columns(pl.col("_d").cum_sum().over(_GID).alias("_q"))
    q_interior = pl.col("_q").filter(interior)
    aggs = [
        *[pl.col(k).first() for k in keys],
        pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
        pl.len().cast(pl.Int64).alias("n_scores"),
        w.sum().alias("weight"),
        w.first().alias("f_w"),
        pl.col(nm.RESPONSE).first().alias("f_r"),
        pl.col(nm.TIE).first().alias("f_tie"),
        *[pl.col(c).first().alias(f"f_up{c}") for c in SUMS],
        w.last().alias("l_w"),
        pl.col(nm.RESPONSE).last().alias("l_r"),
        pl.col(nm.TIE).last().alias("l_tie"),
        *[pl.col(f"{c}_lo").last().alias(f"l_lo{c}") for c in SUMS],
        pl.col("_d").sum().alias("q_sum"),
        q_interior.max().alias("q_max"),
        q_interior.min().alias("q_min"),
        pl.col("_sb").sum().alias("s_b"),
        pl.col("_se").sum().alias("s_e"),
    ]
    cells = located.group_by(_GID, maintain_order=True).agg(aggs).drop(_GID)
    cells = (
        cells.join(group_weight.lazy(), on=keys, how="left", nulls_equal=True)
        if keys
        else cells.join(group_weight.lazy(), how="cross")
    )
    total = pl.col(TOTAL_WEIGHT)
    cells = cells.with_columns(
        *[(pl.col(c) / total) for c in ("q_sum", "q_max", "q_min")],
        *[(pl.col(c) / (total * total)) for c in ("s_b", "s_e")],
    )
    answers = _lookup(queries.lazy().select(QUERY, MIDPOINT), prefix, MIDPOINT).drop(MIDPOINT)
    cells_df, answers_df = pl.collect_all([cells, answers], engine=engine)
    return RangeResult(cells=cells_df, answers=answers_df, totals=totals)


def _lookup(frame: pl.LazyFrame, prefix: pl.DataFrame, at: str) -> pl.LazyFrame:
    """Add the running sums at the last score <= column ``at`` (0 below the first).

    One binary search per row of ``frame`` into the prefix scores, then one
    gather per sum from the prefix table with a row of zeros in front.
    """
    index = "_index"
    zero = pl.DataFrame({c: [0] for c in SUMS}, schema={c: prefix.schema[c] for c in SUMS})
    table = pl.concat([zero, prefix.select(SUMS)])
    scores = prefix.get_column(PREFIX_SCORE)
    return (
        frame.with_columns(pl.lit(scores).search_sorted(pl.col(at), side="right").alias(index))
        .with_columns(pl.lit(table.get_column(c)).gather(pl.col(index)).alias(c) for c in SUMS)
        .drop(index)
    )


def _merged_by_group(ordered: pl.DataFrame, keys: Sequence[str], engine: Engine) -> pl.LazyFrame:
    """Merged points (method.md 1.1) of score-sorted rows, grouped contiguously.

    The screen's own tie merge (:func:`polars_cumdev.ties.merge_ties`), plus
    ``_GID``, a group number increasing with the (contiguous) groups.
    """
    keys = list(keys)
    if keys:
        group_id = pl.struct(keys).rle_id() if len(keys) > 1 else pl.col(keys[0]).rle_id()
    else:
        group_id = pl.lit(0, dtype=pl.UInt32)
    merged = merge_ties(ordered.lazy(), keys).with_columns(group_id.set_sorted().alias(_GID))
    return merged.collect(engine=engine).lazy()


# --------------------------------------------------------------------------
# Step 4: combine the ranges (a small per-group scan)
# --------------------------------------------------------------------------


def _range_table(plan: Plan, results: Sequence[RangeResult | None]) -> pl.DataFrame:
    """Per range r: its totals T_r (``T*``), T_{<r} (``X*``) and T_{<=r} (``I*``)."""
    rows = []
    for r in range(plan.ranges):
        res = results[r] if r < len(results) else None
        frame = res.totals if res is not None else pl.select(_zero_sums())
        rows.append(frame.with_columns(pl.lit(r, dtype=pl.Int64).alias(RANGE)))
    totals = pl.concat(rows).sort(RANGE)
    inclusive = [pl.col(c).cum_sum() for c in SUMS]
    return totals.select(
        pl.col(RANGE),
        *[pl.col(c).alias(f"T{c}") for c in SUMS],
        *[s.alias(f"I{c}") for c, s in zip(SUMS, inclusive, strict=True)],
        *[s.shift(1, fill_value=0).alias(f"X{c}") for c, s in zip(SUMS, inclusive, strict=True)],
    )


def _span(
    lo_range: pl.Expr,
    lo: Sequence[pl.Expr],
    lo_total: Sequence[pl.Expr],
    lo_through: Sequence[pl.Expr],
    hi_range: pl.Expr,
    hi: Sequence[pl.Expr],
    hi_before: Sequence[pl.Expr],
) -> list[pl.Expr]:
    """The running sums over the rows with B_lo < S <= B_hi, from range-local prefixes.

    Each end is a range index and the local prefix there. In one range the
    sums are a difference of local prefixes; across ranges they are the rest
    of the lower range (T_lo - local_lo), the whole ranges in between
    (T_{<hi} - T_{<=lo}) and the local prefix of the upper range. Rounding
    then scales with the sums of a range, not of the whole population.
    """
    same = lo_range == hi_range
    return [
        pl.when(same).then(h - low).otherwise((tot - low) + (before - through) + h)
        for low, tot, through, h, before in zip(
            lo, lo_total, lo_through, hi, hi_before, strict=True
        )
    ]


def combine(plan: Plan, results: Sequence[RangeResult | None]) -> pl.DataFrame:
    """Per-group statistics in the layout of :func:`polars_cumdev.statistics.summarize`.

    ``results[r]`` is the :class:`RangeResult` of range r (``None`` for a
    range with no row). The end points of every cell get their bins from the
    range totals and the query answers, and the offsets of C are carried
    across each group's cells: the maximum of C over a cell is its offset
    plus the cell's partial maximum, and so on.
    """
    keys = plan.keys
    last_range = plan.ranges - 1
    table = _range_table(plan, results)
    answers = pl.concat(
        [res.answers for res in results if res is not None and res.answers.height]
        or [
            pl.DataFrame(
                schema={
                    QUERY: pl.UInt32,
                    **{c: pl.Int64 if c in COUNT_SUMS else pl.Float64 for c in SUMS},
                }
            )
        ],
        how="vertical_relaxed",
    )
    answered = plan.queries.join(answers, on=QUERY, how="left").select(
        pl.col(QUERY), pl.col(RANGE), *[pl.col(c).fill_null(0) for c in SUMS]
    )

    def side(name: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Query answers and range table with columns prefixed by ``name``."""
        a = answered.rename({QUERY: f"{name}_q", RANGE: f"{name}_r"})
        a = a.rename({c: f"{name}{c}" for c in SUMS})
        return a, table.rename(lambda c, n=name: f"{n}_r" if c == RANGE else f"{n}{c}")

    cell_frames = [
        res.cells.with_columns(pl.lit(r, dtype=pl.Int64).alias(RANGE))
        for r, res in enumerate(results)
        if res is not None and res.cells.height
    ]
    cells = pl.concat(cell_frames, how="vertical_relaxed")
    on = [*keys, RANGE]
    cells = cells.join(plan.cells, on=on, how="left", nulls_equal=True)
    lo_answers, lo_table = side("lo")
    hi_answers, hi_table = side("hi")
    _, own_table = side("own")
    # The lower end of a cell (its first point's lower midpoint): a query, or -inf
    # (range 0, local prefix 0); the upper end: a query, or +inf (last range, its total).
    cells = (
        cells.join(lo_answers, left_on=_Q_LO, right_on="lo_q", how="left")
        .join(hi_answers, left_on=_Q_HI, right_on="hi_q", how="left")
        .with_columns(
            pl.col("lo_r").fill_null(0),
            pl.col("hi_r").fill_null(last_range),
            *[pl.col(f"lo{c}").fill_null(0) for c in SUMS],
        )
        .join(lo_table, on="lo_r", how="left")
        .join(hi_table, on="hi_r", how="left")
        .join(own_table, left_on=RANGE, right_on="own_r", how="left")
        .with_columns(
            pl.when(pl.col(_Q_HI).is_null())
            .then(pl.col(f"hiT{c}"))
            .otherwise(pl.col(f"hi{c}"))
            .alias(f"hi{c}")
            for c in SUMS
        )
    )
    multi = pl.col("n_scores") > 1
    own = pl.col(RANGE)
    lo_r, hi_r = pl.col("lo_r"), pl.col("hi_r")
    first = _span(
        lo_r,
        [pl.col(f"lo{c}") for c in SUMS],
        [pl.col(f"loT{c}") for c in SUMS],
        [pl.col(f"loI{c}") for c in SUMS],
        pl.when(multi).then(own).otherwise(hi_r),
        [pl.when(multi).then(pl.col(f"f_up{c}")).otherwise(pl.col(f"hi{c}")) for c in SUMS],
        [pl.when(multi).then(pl.col(f"ownX{c}")).otherwise(pl.col(f"hiX{c}")) for c in SUMS],
    )
    last = _span(
        own,
        [pl.col(f"l_lo{c}") for c in SUMS],
        [pl.col(f"ownT{c}") for c in SUMS],
        [pl.col(f"ownI{c}") for c in SUMS],
        hi_r,
        [pl.col(f"hi{c}") for c in SUMS],
        [pl.col(f"hiX{c}") for c in SUMS],
    )
    centre = pl.lit(plan.centre)
    f_ref, f_var = bin_moments(dict(zip(SUMS, first, strict=True)).__getitem__, centre)
    l_ref, l_var = bin_moments(dict(zip(SUMS, last, strict=True)).__getitem__, centre)
    f_a = pl.col("f_w") / pl.col(TOTAL_WEIGHT)
    l_a = pl.col("l_w") / pl.col(TOTAL_WEIGHT)
    cells = cells.with_columns(
        (f_a * (pl.col("f_r") - f_ref)).alias("_tf"),
        pl.when(multi).then(l_a * (pl.col("l_r") - l_ref)).otherwise(0.0).alias("_tl"),
        (f_a * f_a * pl.col("f_tie") * f_ref * (1.0 - f_ref)).alias("_fb"),
        (f_a * f_a * pl.col("f_tie") * f_var).alias("_fv"),
        pl.when(multi)
        .then(l_a * l_a * pl.col("l_tie") * l_ref * (1.0 - l_ref))
        .otherwise(0.0)
        .alias("_lb"),
        pl.when(multi).then(l_a * l_a * pl.col("l_tie") * l_var).otherwise(0.0).alias("_lv"),
    )
    # Inside a cell: C_f = off + tf; C_j = off + tf + Q_j; C_l = off + tf + Q_sum + tl.
    end = pl.when(multi).then(pl.col("q_sum") + pl.col("_tl"))
    cells = cells.sort(on, nulls_last=True).with_columns(
        (pl.col("_tf") + pl.col("q_sum") + pl.col("_tl")).alias("_step"),
        pl.max_horizontal(pl.lit(0.0), pl.col("q_max"), end).alias("_cmax"),
        pl.min_horizontal(pl.lit(0.0), pl.col("q_min"), end).alias("_cmin"),
    )
    offset = per_group(pl.col("_step").cum_sum(), keys) - pl.col("_step") + pl.col("_tf")
    cells = cells.with_columns(
        (offset + pl.col("_cmax")).alias("_max"),
        (offset + pl.col("_cmin")).alias("_min"),
    )
    aggs = [
        pl.col("n").sum().cast(pl.Int64),
        pl.col("n_scores").sum().cast(pl.Int64),
        pl.col("weight").sum(),
        (
            pl.col("_max").max().clip(lower_bound=0.0) - pl.col("_min").min().clip(upper_bound=0.0)
        ).alias("kuiper"),
        pl.max_horizontal(pl.col("_max").max().abs(), pl.col("_min").min().abs()).alias("ks"),
        pl.col("_step").sum().alias("delta"),
        (pl.col("s_b").sum() + pl.col("_fb").sum() + pl.col("_lb").sum()).alias(_SIGMA_B),
        (pl.col("s_e").sum() + pl.col("_fv").sum() + pl.col("_lv").sum()).alias(_SIGMA_E),
    ]
    if keys:
        return cells.group_by(keys, maintain_order=True).agg(aggs)
    return cells.select(aggs)


def _finish(plan: Plan, stats: pl.DataFrame) -> pl.DataFrame:
    binary = pl.LazyFrame({nm.BINARY: [plan.binary]})
    return normalize(stats.lazy(), plan.keys, binary).collect(engine="in-memory")


# --------------------------------------------------------------------------
# Drivers
# --------------------------------------------------------------------------


def _run(
    prepared: Prepared,
    ranges: int | Sequence[float],
    variance: str,
    *,
    scan_engine: Engine,
    range_engine: Engine,
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    keys = prepared.keys
    frame = prepared.frame
    clock = time.perf_counter()

    def note(message: str) -> None:
        if log is not None:
            log(f"{time.perf_counter() - clock:8.2f} s  {message}")

    # Validate every value before any range is read (one scan of the source).
    prepared.guarded(pl.LazyFrame({f"{nm.PREFIX}probe": [True]})).collect(engine=scan_engine)
    note("values checked")
    cuts = cut_points(frame, ranges, engine=scan_engine)
    note(f"{len(cuts) + 1} ranges")
    cells = cell_summaries(frame, keys, cuts).collect(engine=scan_engine)
    plan = plan_ranges(cells, keys, cuts, variance)
    note(f"pass 1: {cells.height} cells, {plan.queries.height} queries")
    results: list[RangeResult | None] = []
    for r in range(plan.ranges):
        if plan.range_rows[r] == 0:
            results.append(None)
            continue
        # The range is read (and sorted) inside the step: only it is in memory.
        results.append(
            range_step(
                frame.filter(range_filter(plan.cuts, r)),
                keys,
                centre=plan.centre,
                group_weight=plan.group_weight,
                queries=plan.queries_for(r),
                engine=range_engine,
            )
        )
        note(f"range {r + 1}/{plan.ranges}: {plan.range_rows[r]} rows")
    out = _finish(plan, combine(plan, results))
    note("combined")
    return out


def screen_partitioned(
    frame: FrameLike,
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    ranges: int | Sequence[float] = 8,
    variance: str = "auto",
    engine: Engine = "in-memory",
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """:func:`polars_cumdev.subpopulation.screen`, computed range by range.

    Parameters
    ----------
    frame
        The full population (DataFrame or LazyFrame). Each range is collected
        on its own, so a LazyFrame over files is never held whole in memory.
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    ranges
        Number R of score ranges (quantile cut points), or the cut points.
    engine
        Polars engine for the scans of ``frame`` and for each range.
    log
        Called with a line of progress (elapsed time and step) after each
        step, e.g. ``print``.

    Returns
    -------
    pl.DataFrame
        The same columns, rows and order as ``screen(...).collect()``, equal
        up to rounding.
    """
    prepared = prepare_screen(frame, by, score, response, weight, variance)
    return _run(prepared, ranges, variance, scan_engine=engine, range_engine=engine, log=log)


def screen_parquet(
    path_or_glob: str | Path | Sequence[str | Path],
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    ranges: int | Sequence[float] | None = None,
    variance: str = "auto",
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """Screen Parquet data that need not fit in memory, one score range at a time.

    The files are scanned lazily (:func:`polars.scan_parquet`): one streaming
    pass checks the values and summarizes the cells, then each range is read
    on its own with a score filter pushed into the scan, sorted and reduced
    to small summaries. Peak memory is about that of screening the largest
    range in memory.

    Parameters
    ----------
    path_or_glob
        A Parquet file, a glob such as ``"data/*.parquet"``, or a list of them.
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    ranges
        Number of score ranges or the cut points; by default about one range
        per :data:`ROWS_PER_RANGE` rows.
    log
        As in :func:`screen_partitioned`.

    Returns
    -------
    pl.DataFrame
        The screen's output.
    """
    source = (
        pl.scan_parquet([str(p) for p in path_or_glob])
        if isinstance(path_or_glob, Sequence) and not isinstance(path_or_glob, str)
        else pl.scan_parquet(str(path_or_glob))
    )
    prepared = prepare_screen(source, by, score, response, weight, variance)
    if ranges is None:
        rows = source.select(pl.len()).collect(engine="streaming").item()
        ranges = max(1, math.ceil(rows / ROWS_PER_RANGE))
    return _run(
        prepared, ranges, variance, scan_engine="streaming", range_engine="in-memory", log=log
    )
