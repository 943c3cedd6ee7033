"""Finite-sample p-values of the range-partitioned screen (method.finite_groups).

The in-process screen simulates a group whose asymptotic p-value could matter
(:func:`~polars_cumdev.method.finite_groups.candidate`) and whose effective
number of events is below :data:`~polars_cumdev.method.finite_sample.MIN_EVENTS`,
when every response is 0 or 1. The simulation conditions on the scores: it
reads the group's own rows (score, response, weight) and, per merged point of
the group, the full population's weighted mean response over the bin between
the midpoints to the group's neighbouring distinct scores. So only two small
things reach the driver, both after the per-range steps:

1. the rows of the groups that may meet the criterion (:func:`chosen`): the
   candidates whose lower bound of the effective events, sigma_B W^2 / w_max^2
   (each of E3 and E4 is at least sum w^2 v / w_max^2, and sum w^2 v is
   sigma (31) of M. Tygert, "Cumulative deviation of a subpopulation from the
   full population", times W^2), is below the threshold; the driver computes the
   exact criterion on them, as in-process;
2. the full population's weight and weighted response summed between the
   groups' midpoints (:func:`interval_sums`, mergeable over batches by
   addition), from which :func:`simulated` rebuilds each bin mean
   (:func:`~polars_cumdev.method.finite_bins.prefix_means`).

The draws are seeded by the group's scores alone, so they are those of the
in-process call; the bin means agree with it up to rounding (the population
is summed in another order), so a simulated p-value differs only when a redraw
lands within that rounding of the observed statistic (no such case in the
tests: they compare the p-values exactly).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned.cells import Plan
from polars_cumdev.engines.partitioned.columns import WMAX
from polars_cumdev.engines.partitioned.cuts import range_index
from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_batch
from polars_cumdev.method import finite_bins as fb
from polars_cumdev.method import finite_groups as fg
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_batch import TESTS
from polars_cumdev.method.finite_groups import SIMULATED
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.summary_columns import SIGMA_B

__all__ = [
    "WEIGHT_SUM",
    "WR_SUM",
    "chosen",
    "edges",
    "interval_sums",
    "lazy_interval_sums",
    "merge_interval_sums",
    "population",
    "resampled",
    "select_rows",
    "simulated",
    "with_simulation",
    "without_simulation",
]

#: Columns of :func:`interval_sums`.
INTERVAL = "__cd_interval"
WEIGHT_SUM = "__cd_w"
WR_SUM = "__cd_wr"
#: Most rows of a population whose responses are not all 0 or 1 that the engines bring
#: to the driver for the resampling null (docs/method.md); above it, asymptotic p-values.
RESAMPLE_ROWS = 2_000_000
#: Room above the threshold for the bound's rounding (the driver decides exactly).
MARGIN = fs.MARGIN


def without_simulation(stats: pl.DataFrame) -> pl.DataFrame:
    """``stats`` with null simulated columns (every p-value asymptotic)."""
    return stats.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in SIMULATED)


def chosen(plan: Plan, stats: pl.DataFrame) -> pl.DataFrame | None:
    """The keys (and number of tests) of the groups whose rows the simulation may need.

    ``stats`` is :func:`~polars_cumdev.engines.partitioned.joining.aggregate`'s
    output; None when no group may be simulated. Responses not all 0 or 1: every
    candidate (the driver applies the exact criterion), or None above
    :data:`RESAMPLE_ROWS` rows.
    """
    keys = plan.keys
    if not plan.zero_one:
        if sum(plan.range_rows) > RESAMPLE_ROWS:
            return None
        tests = fg.tests_expr(True).alias(TESTS)
        found = stats.with_columns(tests).filter(fg.candidate(plan.level, True))
        return found.select(*keys, TESTS) if found.height else None
    wmax = (
        plan.cells.group_by(keys).agg(pl.col(WMAX).max())
        if keys
        else plan.cells.select(pl.col(WMAX).max())
    )
    found = stats.with_columns(fg.tests_expr(False).alias(TESTS)).filter(
        fg.candidate(plan.level, True)
    )
    found = fg.without_set_aside(found)  # (counted by the compiled range steps)
    if not found.height:
        return None
    if keys:
        found = join_on_keys(found.lazy(), wmax.lazy(), keys, pl.Schema(stats.schema)).collect()
    else:
        found = found.with_columns(pl.lit(wmax.item()).alias(WMAX))
    units = pl.col("weight") / plan.weight_scale  # the step's weights are scaled
    bound = fs.events_floor(pl.col(SIGMA_B), units, pl.col(WMAX))
    found = found.filter(bound < fs.MIN_EVENTS * MARGIN).select(*keys, TESTS)
    return found if found.height else None


def population(rows: pl.LazyFrame | pl.DataFrame):
    """Every row's score, response and weight (standardized), for the resampling null."""
    return rows.select(nm.SCORE, nm.RESPONSE, nm.WEIGHT)


def select_rows(rows: pl.LazyFrame | pl.DataFrame, keys: Sequence[str], picked: pl.DataFrame):
    """The standardized ``rows`` of the groups ``picked`` (keys, score, response, weight)."""
    columns = [*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT]
    if not keys:
        return rows.select(columns)
    lazy = rows.lazy() if isinstance(rows, pl.DataFrame) else rows
    tagged = picked.select(keys).with_columns(pl.lit(True).alias("__cd_pick")).lazy()
    schema = pl.Schema({k: picked.schema[k] for k in keys})
    out = join_on_keys(lazy.select(columns), tagged, keys, schema)
    out = out.filter(pl.col("__cd_pick")).drop("__cd_pick")
    return out.collect() if isinstance(rows, pl.DataFrame) else out


def _sorted(rows: pl.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, ...]:
    """The rows' scores and group numbers sorted by group, then score, and the groups' starts.

    The scores in the order of :func:`~polars_cumdev.method.finite_batch.simulate_groups`
    (which sorts by weight and response too: rows of one score tie): the
    midpoints need no more (a stable sort by score, then by group: 0.33-0.44 s
    against 0.91-1.11 s for that four-key sort of 934,000 rows).
    """
    if keys:
        group = rows.select(pl.struct(keys).rank("dense") - 1).to_series().to_numpy()
    else:
        group = np.zeros(rows.height, dtype=np.int64)
    group = group.astype(np.int64)
    s = rows[nm.SCORE].to_numpy()
    order = np.argsort(s, kind="stable")
    order = order[np.argsort(group[order], kind="stable")]
    counts = np.bincount(group, minlength=int(group.max(initial=-1)) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return s[order], group[order], starts


def edges(rows: pl.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """The sorted distinct finite midpoints between the chosen groups' consecutive scores."""
    s, group, starts = _sorted(rows, keys)
    _, _, upper = fb.midpoints(s, group, starts)
    return np.unique(upper[np.isfinite(upper)])


def interval_sums(rows: pl.DataFrame, cut: np.ndarray) -> pl.DataFrame:
    """Per interval j (edges[j-1] < S <= edges[j]; the last one above every edge): the sums
    of the weights and the weighted responses of ``rows`` (standardized) in it.

    Only the intervals from the one of the smallest score to the one of the
    largest are listed (``INTERVAL``: j): a batch of one score range (a
    cluster's) sends a slice of the edges, not two sums per edge, and looks
    its scores up among that slice's edges alone.
    """
    s = rows[nm.SCORE].to_numpy()
    w = rows[nm.WEIGHT].to_numpy()
    if not s.shape[0]:
        return pl.DataFrame(schema={INTERVAL: pl.Int64, WEIGHT_SUM: pl.Float64, WR_SUM: pl.Float64})
    # (The edges below the smallest score are below every score; those from the
    # largest score's place on are at or above every score.)
    lo = int(np.searchsorted(cut, s.min(), side="left"))
    hi = int(np.searchsorted(cut, s.max(), side="left"))
    at = np.searchsorted(cut[lo:hi], s, side="left")
    size = hi - lo + 1
    return pl.DataFrame(
        {
            INTERVAL: np.arange(lo, hi + 1, dtype=np.int64),
            WEIGHT_SUM: np.bincount(at, weights=w, minlength=size),
            WR_SUM: np.bincount(at, weights=w * rows[nm.RESPONSE].to_numpy(), minlength=size),
        }
    )


def merge_interval_sums(parts: Iterable[pl.DataFrame | None], cut: np.ndarray) -> pl.DataFrame:
    """The sum of several batches' :func:`interval_sums` (None for a batch without rows),
    over every interval."""
    total_w = np.zeros(cut.shape[0] + 1)
    total_wr = np.zeros(cut.shape[0] + 1)
    for part in parts:
        if part is not None and part.height:
            at = part[INTERVAL].to_numpy()
            total_w[at] += part[WEIGHT_SUM].to_numpy()
            total_wr[at] += part[WR_SUM].to_numpy()
    return pl.DataFrame({WEIGHT_SUM: total_w, WR_SUM: total_wr})


def simulated(
    plan: Plan,
    stats: pl.DataFrame,
    picked: pl.DataFrame,
    rows: pl.DataFrame,
    cut: np.ndarray,
    sums: pl.DataFrame,
) -> pl.DataFrame:
    """``stats`` with the simulated p-value columns (null where asymptotic).

    ``picked`` is :func:`chosen`'s output, ``rows`` those groups' rows
    (:func:`select_rows`), ``sums`` the population's :func:`interval_sums`
    at :func:`edges` ``cut`` of those rows.
    """
    keys = list(plan.keys)
    scores = np.append(cut, np.inf)
    cw = np.cumsum(sums[WEIGHT_SUM].to_numpy())
    cwr = np.cumsum(sums[WR_SUM].to_numpy())

    def means(s: np.ndarray, group: np.ndarray, starts: np.ndarray) -> np.ndarray:
        return fb.prefix_means(scores, cw, cwr, s, group, starts)

    tests = int(picked[TESTS][0])
    batch = rows.with_columns(pl.lit(tests, dtype=pl.Int64).alias(TESTS))
    return _joined(stats, finite_batch.simulate_groups(batch, keys, plan.level, means), keys)


def resampled(
    plan: Plan, stats: pl.DataFrame, picked: pl.DataFrame, rows: pl.DataFrame, full: pl.DataFrame
) -> pl.DataFrame:
    """``stats`` with the resampled p-value columns of a population whose responses are
    not all 0 or 1 (``full``: its score, response and weight; ``rows``: the groups
    ``picked``), as in-process (:func:`~polars_cumdev.method.finite_batch.resample_groups`)."""
    keys = list(plan.keys)
    batch = rows.with_columns(pl.lit(int(picked[TESTS][0]), dtype=pl.Int64).alias(TESTS))
    return _joined(stats, finite_batch.resample_groups(batch, keys, plan.level, full), keys)


def _joined(stats: pl.DataFrame, found: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``stats`` with ``found``'s simulated columns (null for the groups it lacks)."""
    if not keys:
        if not found.height:
            return without_simulation(stats)
        return stats.with_columns(pl.lit(found[c].item()).alias(c) for c in SIMULATED)
    schema = pl.Schema({k: stats.schema[k] for k in keys})
    found = found.with_columns(pl.col(k).cast(schema[k]) for k in keys)
    return join_on_keys(stats.lazy(), found.lazy(), keys, schema, maintain_order="left").collect()


def with_simulation(
    plan: Plan,
    stats: pl.DataFrame,
    fetch_rows: Callable[[pl.DataFrame], pl.DataFrame],
    fetch_sums: Callable[[np.ndarray], pl.DataFrame],
    fetch_population: Callable[[], pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """``stats`` with the simulated columns, fetched through the engine's callbacks.

    ``fetch_rows(picked)`` returns the standardized rows of the groups
    ``picked`` (:func:`select_rows` on each batch); ``fetch_sums(cut)`` the
    whole population's :func:`interval_sums` at ``cut``, merged;
    ``fetch_population()`` every row's score, response and weight (the
    resampling null of responses other than 0/1 draws from the bins' rows; at
    most :data:`RESAMPLE_ROWS`). None is called when no group may be simulated.
    """
    picked = chosen(plan, stats)
    if picked is None or (not plan.zero_one and fetch_population is None):
        return without_simulation(stats)
    rows = fetch_rows(picked)
    if not rows.height:
        return without_simulation(stats)
    if not plan.zero_one:
        return resampled(plan, stats, picked, rows, fetch_population())
    cut = edges(rows, plan.keys)
    return simulated(plan, stats, picked, rows, cut, fetch_sums(cut))


def lazy_interval_sums(frame: pl.LazyFrame, cut: np.ndarray, engine: str) -> pl.DataFrame:
    """:func:`interval_sums` of a whole (lazy) population in one streaming aggregation."""
    at = range_index(cut.tolist(), pl.col(nm.SCORE)).cast(pl.Int64).alias(INTERVAL)
    w = pl.col(nm.WEIGHT)
    found = (
        frame.group_by(at)
        .agg(w.sum().alias(WEIGHT_SUM), (w * pl.col(nm.RESPONSE)).sum().alias(WR_SUM))
        .collect(engine=engine)
    )
    size = cut.shape[0] + 1
    total_w, total_wr = np.zeros(size), np.zeros(size)
    index = found[INTERVAL].to_numpy()
    total_w[index] = found[WEIGHT_SUM].to_numpy()
    total_wr[index] = found[WR_SUM].to_numpy()
    return pl.DataFrame({WEIGHT_SUM: total_w, WR_SUM: total_wr})
