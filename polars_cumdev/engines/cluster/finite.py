"""Finite-sample p-values of the cluster screen: the few rows the simulation reads.

The screen's statistics are combined on the driver from the range steps
(:func:`polars_cumdev.engines.cluster.steps.combine_ranges`); before the
significant groups are flagged for locating, the groups that may need
finite-sample p-values (:func:`polars_cumdev.engines.partitioned.finite.chosen`)
get them on the driver, as in-process, from two small gathers over the
workers' standardized rows:

1. :func:`pick_rows`: each batch's rows of those groups (a handful of groups
   with few effective events);
2. :func:`sum_intervals`: each batch's weight and weighted response summed
   between the midpoints of those groups' scores (one number pair per
   midpoint), added up on the driver (:func:`combine_ranges`).

Neither runs when no group may be simulated. An engine passes a function
mapping a per-batch function over its batches. The functions reading only a
few groups' rows come wrapped in :class:`OfGroups`, naming those groups: an
engine may leave the other rows out before they reach Python (Spark filters
them in the JVM, :func:`polars_cumdev.engines.cluster.spark_jobs.batches`);
the function selects its rows exactly either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.engines.partitioned import (
    Locating,
    Plan,
    RangeResult,
    aggregate,
    combine_cells,
    flag,
)
from polars_cumdev.engines.partitioned import finite as pf
from polars_cumdev.engines.partitioned.columns import WMAX
from polars_cumdev.engines.partitioned.locating import FID
from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_batch
from polars_cumdev.method import finite_groups as fg
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_batch import TESTS
from polars_cumdev.method.finite_groups import SIMULATED
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.summary_columns import SIGMA_B

__all__ = [
    "OTHER",
    "MapBatches",
    "OfGroups",
    "Points",
    "SumsAndPoints",
    "calibration_simulated",
    "combine_and_locate",
    "combine_ranges",
    "group_maxima",
    "pick_rows",
    "sum_intervals",
]

#: ``map_batches(function)``: ``function`` applied to every batch of standardized rows
#: (on the workers), the results gathered to the driver (a list, None for an empty batch).
MapBatches = Callable[[Callable[[pl.DataFrame], object]], list]


@dataclass(frozen=True)
class OfGroups:
    """A per-batch function that reads only the rows of the groups ``groups`` (their keys).

    Called as ``function`` itself; an engine may hand it a batch holding more
    rows than those groups' (it selects them), but never fewer.
    """

    function: Callable[[pl.DataFrame], object]
    groups: pl.DataFrame

    def __call__(self, rows: pl.DataFrame) -> object:
        return self.function(rows)


def pick_rows(rows: pl.DataFrame, keys: Sequence[str], picked: pl.DataFrame) -> pl.DataFrame:
    """A batch's standardized rows of the groups ``picked`` (a worker's task)."""
    return pf.select_rows(rows, keys, picked)


def sum_intervals(rows: pl.DataFrame, cut: np.ndarray) -> pl.DataFrame:
    """A batch's sums between the midpoints ``cut`` (a worker's task)."""
    return pf.interval_sums(rows, cut)


def combine_ranges(
    plan: Plan, results: Sequence[RangeResult | None], map_batches: MapBatches
) -> tuple[pl.DataFrame, Locating | None]:
    """:func:`polars_cumdev.engines.cluster.steps.combine_ranges` with the simulated columns.

    The statistics carry the finite-sample p-values (null where asymptotic)
    before the significant groups are flagged: the located stretch follows
    the same decision as in-process.
    """
    cells = combine_cells(plan, results)
    stats = aggregate(plan, cells)

    def fetch_sums(cut: np.ndarray) -> pl.DataFrame:
        return pf.merge_interval_sums(map_batches(lambda rows: sum_intervals(rows, cut)), cut)

    stats = _simulated(plan, stats, map_batches, fetch_sums)
    return stats, flag(plan, cells, stats)


#: ``points(locating)``: the second steps' outputs of the ranges holding ``locating``'s cells.
Points = Callable[[Locating], list]
#: ``sums_and_points(cut, locating)``: in one pass over the rows, every batch's
#: :func:`sum_intervals` at ``cut`` and the second steps' outputs for ``locating``.
SumsAndPoints = Callable[[np.ndarray, Locating | None], tuple[list, list]]


def combine_and_locate(
    plan: Plan,
    results: Sequence[RangeResult | None],
    map_batches: MapBatches,
    points: Points,
    sums_and_points: SumsAndPoints,
) -> tuple[pl.DataFrame, Locating | None, list]:
    """:func:`combine_ranges` and the second steps' outputs, the population's sums between
    the midpoints read in the same pass as the second steps.

    The groups to locate are known only once the simulated p-values are, and
    those need the sums. So the pass steps every group that could be flagged:
    those flagged when each group that may be simulated had a p-value of 0
    (the adjusted decision only gains groups when a p-value falls). The
    outputs of the groups then flagged are kept (each group's depend on its
    own cells alone); when one of them was not stepped (a decision that is
    not monotone), :func:`points` runs for them.
    """
    cells = combine_cells(plan, results)
    plain = aggregate(plan, cells)
    early: dict[str, object] = {}

    def fetch_sums(cut: np.ndarray) -> pl.DataFrame:
        superset = flag(plan, cells, _at_zero(plan, plain))
        parts, early["outputs"] = sums_and_points(cut, superset)
        early["superset"] = superset
        return pf.merge_interval_sums(parts, cut)

    stats = _simulated(plan, plain, map_batches, fetch_sums)
    locating = flag(plan, cells, stats)
    if locating is None:
        return stats, None, []
    if "outputs" in early:
        kept = _renumbered(early["outputs"], early["superset"], locating, list(plan.keys))
        if kept is not None:
            return stats, locating, kept
    return stats, locating, points(locating)


def _simulated(
    plan: Plan,
    stats: pl.DataFrame,
    map_batches: MapBatches,
    fetch_sums: Callable[[np.ndarray], pl.DataFrame],
) -> pl.DataFrame:
    """``stats`` with the simulated columns, the chosen groups' rows gathered by ``map_batches``."""
    keys = list(plan.keys)

    def fetch_rows(picked: pl.DataFrame) -> pl.DataFrame:
        picking = OfGroups(lambda rows: pick_rows(rows, keys, picked), picked.select(keys))
        found = [p for p in map_batches(picking) if p is not None]
        found = [p for p in found if p.height]
        if not found:
            return pl.DataFrame(schema={k: picked.schema[k] for k in keys})
        return pl.concat(found, how="vertical_relaxed")

    def fetch_population() -> pl.DataFrame:  # (responses not all 0/1, few rows: method.md)
        found = [p for p in map_batches(pf.population) if p is not None and p.height]
        if not found:
            return pf.population(pl.DataFrame(schema=dict.fromkeys(_FULL, pl.Float64)))
        return pl.concat(found, how="vertical_relaxed")

    return pf.with_simulation(plan, stats, fetch_rows, fetch_sums, fetch_population)


def _at_zero(plan: Plan, stats: pl.DataFrame) -> pl.DataFrame:
    """``stats`` with a simulated p-value of 0 for each group that may be simulated."""
    keys = list(plan.keys)
    picked = pf.chosen(plan, stats)
    if picked is None or not keys:
        return pf.without_simulation(stats)
    schema = pl.Schema({k: stats.schema[k] for k in keys})
    zero = picked.select(pl.col(k).cast(schema[k]) for k in keys).with_columns(
        pl.lit(0.0, dtype=pl.Float64).alias(c) for c in SIMULATED
    )
    return join_on_keys(stats.lazy(), zero.lazy(), keys, schema, maintain_order="left").collect()


_NEW = "__cd_new_fid"


def _renumbered(
    outputs: list, superset: Locating | None, locating: Locating, keys: list[str]
) -> list | None:
    """The second steps' ``outputs`` of ``superset``'s groups, kept for ``locating``'s and
    numbered as there; None when one of ``locating``'s groups is not in ``superset``."""
    if superset is None or not keys:
        return None
    schema = pl.Schema({k: locating.groups.schema[k] for k in keys})
    wanted = locating.groups.select(pl.col(FID).alias(_NEW), *keys).lazy()
    pairs = join_on_keys(wanted, superset.groups.select(FID, *keys).lazy(), keys, schema)
    pairs = pairs.select(FID, _NEW).collect()
    if pairs.get_column(FID).null_count():
        return None

    def renumber(frame: pl.DataFrame) -> pl.DataFrame:
        out = frame.join(pairs, on=FID, how="inner", maintain_order="left")
        return out.with_columns(pl.col(_NEW).cast(frame.schema[FID]).alias(FID)).select(
            frame.columns
        )

    return [(renumber(bests), renumber(found)) for bests, found in outputs]


# --------------------------------------------------------------------------
# Calibration per group: the null probabilities are the scores, so only the
# chosen groups' rows are needed (no population sums).
# --------------------------------------------------------------------------

_ALL = "__cd_all"
_FULL = (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
#: Per group, its rows whose response is neither 0 nor 1 (beside ``WMAX``, its largest weight).
OTHER = "__cd_other"


def _whole(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """``frame`` with a constant key when there is none (one group: the whole frame)."""
    return frame if keys else frame.with_columns(pl.lit(0, dtype=pl.Int8).alias(_ALL))


def group_maxima(rows: pl.DataFrame, keys: Sequence[str], picked: pl.DataFrame) -> pl.DataFrame:
    """A batch's largest weight and count of responses other than 0 and 1 per group of
    ``picked`` (a worker's task; both merge over batches exactly)."""
    on = list(keys) or [_ALL]
    rows = pf.select_rows(_whole(rows, keys), on, picked)
    r = pl.col(nm.RESPONSE)
    return rows.group_by(on).agg(
        pl.col(nm.WEIGHT).max().alias(WMAX),
        ((r != 0.0) & (r != 1.0)).sum().cast(pl.Int64).alias(OTHER),
    )


def calibration_simulated(
    stats: pl.DataFrame,
    keys: Sequence[str],
    level: float,
    map_batches: MapBatches,
    maxima: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The calibration statistics (:func:`~polars_cumdev.calibration.cumulative._summary_node`'s
    layout, every group) with the simulated p-value columns, as in-process.

    Candidates (asymptotic p at most the cutoff) whose effective events the range
    walks counted at the threshold or more (``EVENTS``,
    :func:`~polars_cumdev.method.finite_sample.set_aside`) are set aside at once; the
    others whose lower bound of the effective events, sigma_B W^2 / w_max^2
    (:mod:`polars_cumdev.engines.partitioned.finite`), is below the threshold send
    their rows to the driver, which decides exactly and
    simulates them (responses all 0 or 1) or bounds their p-values (soft labels,
    :mod:`polars_cumdev.method.finite_bound`), as in-process. Each group's w_max (and
    its count of responses other than 0 and 1) come from a pass over the rows
    (:func:`group_maxima`), or from ``maxima`` (the keys, ``WMAX`` and :data:`OTHER`
    of batches that together hold every row once) when the caller has them.
    """
    keys = list(keys)
    on = keys or [_ALL]
    table = _whole(stats, keys)
    candidates = table.with_columns(fg.tests_expr(False).alias(TESTS)).filter(
        fg.candidate(level, False)
    )
    candidates = fg.without_set_aside(candidates)  # (counted by the range walks)
    if not candidates.height:
        return pf.without_simulation(stats)
    chosen = candidates.select(*on, TESTS, "weight", SIGMA_B)
    if maxima is None:
        parts = map_batches(
            OfGroups(lambda rows: group_maxima(rows, keys, chosen), chosen.select(keys))
        )
    else:  # (the pass over the rows that made the statistics found them too)
        parts = [maxima]
    found = [p for p in parts if p is not None and p.height]
    if not found:
        return pf.without_simulation(stats)
    maxima = (
        pl.concat(found, how="vertical_relaxed")
        .group_by(on)
        .agg(pl.col(WMAX).max(), pl.col(OTHER).sum())
    )
    schema = pl.Schema({k: table.schema[k] for k in on})
    chosen = join_on_keys(chosen.lazy(), maxima.lazy(), on, schema).collect()
    bound = fs.events_floor(pl.col(SIGMA_B), pl.col("weight"), pl.col(WMAX))
    chosen = chosen.filter(bound < fs.MIN_EVENTS * pf.MARGIN)  # (soft labels too: bounded)
    if not chosen.height:
        return pf.without_simulation(stats)
    picked = chosen.select(*on, TESTS)
    picking = OfGroups(
        lambda rows: pf.select_rows(_whole(rows, keys), on, picked), picked.select(keys)
    )
    parts = map_batches(picking)
    rows = pl.concat([p for p in parts if p is not None and p.height], how="vertical_relaxed")
    tests = int(picked[TESTS][0])
    batch = rows.with_columns(pl.lit(tests, dtype=pl.Int64).alias(TESTS))
    simulated = finite_batch.simulate_groups(batch, on, level)
    simulated = simulated.with_columns(pl.col(k).cast(schema[k]) for k in on)
    out = join_on_keys(table.lazy(), simulated.lazy(), on, schema, maintain_order="left")
    out = out.collect()
    return out if keys else out.drop(_ALL)
