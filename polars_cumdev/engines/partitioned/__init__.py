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
   goes through :func:`polars_cumdev.method.statistics.normalize` like a screen's.
5. Only when some group has D > 2 sigma, its located stretch
   (:mod:`.locating`): :func:`flag` picks those groups from the combined
   cells, :func:`range_points` (a pure function of one range's rows and a
   small table, like :func:`range_step`) lays out their curves in each
   range holding them and keeps the range's best stretch and its
   candidate points, and :func:`stitch` searches the candidates of all
   ranges.

:func:`screen_partitioned` runs the steps on any DataFrame/LazyFrame (ranges
collected one at a time); :func:`screen_parquet` is the out-of-core adapter
reading the ranges one at a time from Parquet files. An adapter for another
engine (Spark or Dask over Arrow batches, :mod:`polars_cumdev.engines.cluster`) only
has to route rows to ranges and call :func:`range_step` (and, for the
flagged groups, :func:`range_points`) on each range.

The modules of this package follow those steps: :mod:`.columns` (internal
column names), :mod:`.cuts` (the ranges), :mod:`.cells` (steps 1 and 2),
:mod:`.step` (step 3), :mod:`.joining` (step 4), :mod:`.locating` and
:mod:`.points` (step 5) and :mod:`.drivers` (running the steps in one
process).

Calibration by group (method.md 2) uses the same cuts and is simpler: each
point is compared with its own score, so no bin reaches across ranges and a
range's step is the calibration kernel's walk over its rows
(:mod:`.calibration_step`); the driver chains each group's partial walks in
range order (:mod:`.calibration_ranges`) and :mod:`.calibration_drivers`
runs it in one process.
"""

from __future__ import annotations

from polars_cumdev.engines.partitioned.cells import (
    Plan,
    cell_summaries,
    merge_cell_summaries,
    plan_ranges,
)
from polars_cumdev.engines.partitioned.columns import RANGE, Engine
from polars_cumdev.engines.partitioned.cuts import SAMPLE_SIZE, cut_points, range_filter
from polars_cumdev.engines.partitioned.drivers import (
    ROWS_PER_RANGE,
    screen_parquet,
    screen_partitioned,
)
from polars_cumdev.engines.partitioned.joining import aggregate, combine, combine_cells, finish
from polars_cumdev.engines.partitioned.locating import Locating, flag, gather, stitch, with_located
from polars_cumdev.engines.partitioned.points import range_points
from polars_cumdev.engines.partitioned.step import RangeResult, range_step

__all__ = [
    "RANGE",
    "ROWS_PER_RANGE",
    "SAMPLE_SIZE",
    "Engine",
    "Locating",
    "Plan",
    "RangeResult",
    "aggregate",
    "cell_summaries",
    "combine",
    "combine_cells",
    "cut_points",
    "finish",
    "flag",
    "gather",
    "merge_cell_summaries",
    "plan_ranges",
    "range_filter",
    "range_points",
    "range_step",
    "screen_parquet",
    "screen_partitioned",
    "stitch",
    "with_located",
]
