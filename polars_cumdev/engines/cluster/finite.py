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
mapping a per-batch function over its batches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
from polars_cumdev.method import _names as nm
from polars_cumdev.method import finite_batch
from polars_cumdev.method import finite_groups as fg
from polars_cumdev.method import finite_sample as fs
from polars_cumdev.method.finite_batch import TESTS
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.summary_columns import SIGMA_B

__all__ = [
    "MapBatches",
    "calibration_simulated",
    "combine_ranges",
    "group_maxima",
    "pick_rows",
    "sum_intervals",
]

#: ``map_batches(function)``: ``function`` applied to every batch of standardized rows
#: (on the workers), the results gathered to the driver (a list, None for an empty batch).
MapBatches = Callable[[Callable[[pl.DataFrame], object]], list]


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
    keys = list(plan.keys)
    cells = combine_cells(plan, results)
    stats = aggregate(plan, cells)

    def fetch_rows(picked: pl.DataFrame) -> pl.DataFrame:
        found = [
            p for p in map_batches(lambda rows: pick_rows(rows, keys, picked)) if p is not None
        ]
        found = [p for p in found if p.height]
        if not found:
            return pl.DataFrame(schema={k: picked.schema[k] for k in keys})
        return pl.concat(found, how="vertical_relaxed")

    def fetch_sums(cut: np.ndarray) -> pl.DataFrame:
        return pf.merge_interval_sums(map_batches(lambda rows: sum_intervals(rows, cut)), cut)

    def fetch_population() -> pl.DataFrame:  # (responses not all 0/1, few rows: method.md)
        found = [p for p in map_batches(pf.population) if p is not None and p.height]
        if not found:
            return pf.population(pl.DataFrame(schema=dict.fromkeys(_FULL, pl.Float64)))
        return pl.concat(found, how="vertical_relaxed")

    stats = pf.with_simulation(plan, stats, fetch_rows, fetch_sums, fetch_population)
    return stats, flag(plan, cells, stats)


# --------------------------------------------------------------------------
# Calibration per group: the null probabilities are the scores, so only the
# chosen groups' rows are needed (no population sums).
# --------------------------------------------------------------------------

_ALL = "__cd_all"
_FULL = (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
_OTHER = "__cd_other"


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
        ((r != 0.0) & (r != 1.0)).sum().cast(pl.Int64).alias(_OTHER),
    )


def calibration_simulated(
    stats: pl.DataFrame, keys: Sequence[str], level: float, map_batches: MapBatches
) -> pl.DataFrame:
    """The calibration statistics (:func:`~polars_cumdev.calibration.cumulative._summary_node`'s
    layout, every group) with the simulated p-value columns, as in-process.

    The candidates (asymptotic p at most the cutoff) whose lower bound of the
    effective events, sigma_B W^2 / w_max^2 (:mod:`polars_cumdev.engines.partitioned.finite`),
    is below the threshold send their rows to the driver, which decides exactly and
    simulates them (responses all 0 or 1) or bounds their p-values (soft labels,
    :mod:`polars_cumdev.method.finite_bound`), as in-process.
    """
    keys = list(keys)
    on = keys or [_ALL]
    table = _whole(stats, keys)
    candidates = table.with_columns(fg.tests_expr(False).alias(TESTS)).filter(
        fg.candidate(level, False)
    )
    if not candidates.height:
        return pf.without_simulation(stats)
    chosen = candidates.select(*on, TESTS, "weight", SIGMA_B)
    parts = map_batches(lambda rows: group_maxima(rows, keys, chosen))
    found = [p for p in parts if p is not None and p.height]
    if not found:
        return pf.without_simulation(stats)
    maxima = (
        pl.concat(found, how="vertical_relaxed")
        .group_by(on)
        .agg(pl.col(WMAX).max(), pl.col(_OTHER).sum())
    )
    schema = pl.Schema({k: table.schema[k] for k in on})
    chosen = join_on_keys(chosen.lazy(), maxima.lazy(), on, schema).collect()
    bound = fs.events_floor(pl.col(SIGMA_B), pl.col("weight"), pl.col(WMAX))
    chosen = chosen.filter(bound < fs.MIN_EVENTS * pf.MARGIN)  # (soft labels too: bounded)
    if not chosen.height:
        return pf.without_simulation(stats)
    picked = chosen.select(*on, TESTS)
    parts = map_batches(lambda rows: pf.select_rows(_whole(rows, keys), on, picked))
    rows = pl.concat([p for p in parts if p is not None and p.height], how="vertical_relaxed")
    tests = int(picked[TESTS][0])
    batch = rows.with_columns(pl.lit(tests, dtype=pl.Int64).alias(TESTS))
    simulated = finite_batch.simulate_groups(batch, on, level)
    simulated = simulated.with_columns(pl.col(k).cast(schema[k]) for k in on)
    out = join_on_keys(table.lazy(), simulated.lazy(), on, schema, maintain_order="left")
    out = out.collect()
    return out if keys else out.drop(_ALL)
