"""The screen's row-level work in compiled passes (Numba).

The lazy Polars plan of :mod:`polars_cumdev.subpopulation` spends its time in
row-level stages: a second sort by group, window sums for the ties, running
sums over the whole population, an as-of join for the bins. Here the same
arithmetic runs as loops compiled by Numba over the rows already sorted by
score, in two passes:

1. :func:`prefix_table` -- the full population's compensated running sums
   (TwoSum, as :mod:`polars_cumdev.method.sums`) of W, W^2, W r, W r^2 (r = R - c),
   the exact counts of rows, of R = 0 and of R = 1, and the running maxima of
   the error sums, kept at the last row of each distinct score
   (:func:`polars_cumdev.method.bins.full_population_prefix`);
2. :func:`screen_groups` -- one walk over the rows in score order carrying
   every group's open tie (method.md 1.1: W', R', f summed directly over the
   tie), closing it when the group's next distinct score arrives: its upper
   midpoint B_k (6)-(7) of M. Tygert, "Cumulative deviation of a subpopulation
   from the full population", found in the prefix table by binary search, gives
   the bin's sums as a difference of two prefix rows, then Rt_k (26), V_k (33)
   and their error bounds (:func:`polars_cumdev.method.bins.bin_moments`), and
   the point's contributions to the group's C_k (25)-(28), its extremes
   (12)-(13), sigma^2 (31)-(32) and their error bounds
   (:func:`polars_cumdev.method.sigma_terms.error_terms`). The caller computes
   the table once and passes it, so that :func:`group_curves` (the same walk for
   the groups whose deviation is to be located) reuses it.

The screen itself runs :func:`screen_events`
(:mod:`polars_cumdev.kernel.events`), the same arithmetic without the
table: a first pass files each tie's closing under the row where its bin
ends, and one walk carrying the running sums closes the ties there and keeps
every group's curve for the located stretch (no second walk). On continuous
scores the table holds a row (15 doubles) per row of input; the events need
two 32-bit integers per row and two doubles per merged point (the scores
of the points a stretch ends at come from :func:`tie_scores`). Same bits
as :func:`screen_groups` (``tests/kernel/test_events.py``).

Numba counts references to an array (atomic operations) when a compiled
function reads it inside a branch, on every call: the helpers called per
point read their arrays unconditionally and let the case choose among the
values (:func:`polars_cumdev.kernel.prefix.bin_totals`: the screen's closing of
a point went from 114 to about 60 ns).

From 2^20 rows the large passes use both cores (:mod:`polars_cumdev.kernel.split`):
a group's points are closed from its own state only, so the groups are split
between two threads, each keeping its groups' additions in the same order
(the screen's :mod:`polars_cumdev.kernel.boundaries` pass and the closing of
its bins, each thread carrying its own copy of the running sums;
calibration's walk, :func:`calibration_walk`; the located stretches,
:func:`split_stretches`): the same bits as on one thread.
The rows reach the kernel sorted by score alone; :mod:`polars_cumdev.kernel.tieorder`
puts each run of equal scores in the canonical order (weight, then response),
the two threads taking stretches of whole runs in turn.

:func:`group_points` is the same walk for one subpopulation, returning its
points with their bins (for the drill-down curve); :func:`calibration_groups`
the walk without bins (method.md 2), :func:`calibration_curves` the same
keeping every group's curve (``calibration(by=...)``). The glue to Polars is in
:mod:`polars_cumdev.method.compiled`; the kernel and the plan agree to 1e-12
(``tests/kernel/test_kernel.py``), differing only in the order of some additions.

Division follows IEEE 754 (``error_model="numpy"``: x / 0 is inf or NaN,
as in Polars, never a Python exception), and no fast-math reordering is
allowed: the compensated sums depend on every rounding happening as written.
Functions are compiled on first use and cached on disk (``cache=True``:
beside this file, or in Numba's user-wide cache directory when that is not
writable; ``NUMBA_CACHE_DIR`` overrides both). With neither writable, a private
temporary directory is used, said in one line on stderr, and cache files cut short
are compiled again rather than failing every call (:mod:`polars_cumdev.kernel._cache`).
A compilation (a cache miss, not a load from the cache) is said once per process
(:mod:`polars_cumdev.kernel._announce`: one message to the ``polars_cumdev`` logger,
on stderr unless logging is configured otherwise).
"""

from polars_cumdev.kernel import bound as _bound
from polars_cumdev.kernel import boundaries as _boundaries
from polars_cumdev.kernel import bucketsort, curve, gather, keysort, radix, ranks, tieorder
from polars_cumdev.kernel import cells as _cells
from polars_cumdev.kernel import curves as _curves
from polars_cumdev.kernel import events as _events
from polars_cumdev.kernel import finite_sample as _finite_sample
from polars_cumdev.kernel import levels as _levels
from polars_cumdev.kernel import location as _location
from polars_cumdev.kernel import permutation as _permutation
from polars_cumdev.kernel import pieces as _pieces
from polars_cumdev.kernel import points as _points
from polars_cumdev.kernel import prefix as _prefix
from polars_cumdev.kernel import ranges as _ranges
from polars_cumdev.kernel import resampled as _resampled
from polars_cumdev.kernel import segments as _segments
from polars_cumdev.kernel import split as _split
from polars_cumdev.kernel import walks as _walks
from polars_cumdev.kernel._announce import SECONDS as _SECONDS  # noqa: F401  (says when it compiles)
from polars_cumdev.kernel._cache import tolerate_damage
from polars_cumdev.kernel.curves import calibration_curves, group_curves, tie_scores
from polars_cumdev.kernel.events import screen_events
from polars_cumdev.kernel.location import stretches, stretches_from
from polars_cumdev.kernel.pieces import calibration_pieces, curve_pieces
from polars_cumdev.kernel.points import (
    P_BIN_WEIGHT,
    P_E_BERNOULLI,
    P_E_REFERENCE,
    P_E_VARIANCE,
    P_REFERENCE,
    P_RESPONSE,
    P_SCORE,
    P_TIE,
    P_VARIANCE,
    P_WEIGHT,
    group_points,
)
from polars_cumdev.kernel.prefix import TABLE_COLUMNS, prefix_table, response_facts
from polars_cumdev.kernel.ranges import range_cells
from polars_cumdev.kernel.split import (
    TWO_THREADS,
    calibration_walk,
    split_stretches,
    split_tie_scores,
)
from polars_cumdev.kernel.walks import (
    C_LAST,
    C_MAX,
    C_MIN,
    ERR_B,
    ERR_C,
    ERR_E,
    EVENTS_3,
    EVENTS_4,
    N_ROWS,
    N_SCORES,
    OVERFLOWS,
    SIGMA_B,
    SIGMA_E,
    WEIGHT,
    calibration_groups,
    screen_groups,
    tie_counts,
)

tolerate_damage(
    bucketsort,
    curve,
    gather,
    keysort,
    radix,
    ranks,
    tieorder,
    _boundaries,
    _bound,
    _cells,
    _curves,
    _events,
    _finite_sample,
    _levels,
    _location,
    _permutation,
    _pieces,
    _points,
    _prefix,
    _ranges,
    _resampled,
    _segments,
    _split,
    _walks,
)

__all__ = [
    "C_LAST",
    "C_MAX",
    "C_MIN",
    "ERR_B",
    "ERR_C",
    "ERR_E",
    "EVENTS_3",
    "EVENTS_4",
    "N_ROWS",
    "N_SCORES",
    "OVERFLOWS",
    "P_BIN_WEIGHT",
    "P_E_BERNOULLI",
    "P_E_REFERENCE",
    "P_E_VARIANCE",
    "P_REFERENCE",
    "P_RESPONSE",
    "P_SCORE",
    "P_TIE",
    "P_VARIANCE",
    "P_WEIGHT",
    "SIGMA_B",
    "SIGMA_E",
    "TABLE_COLUMNS",
    "TWO_THREADS",
    "WEIGHT",
    "bucketsort",
    "calibration_curves",
    "calibration_groups",
    "calibration_pieces",
    "calibration_walk",
    "curve",
    "curve_pieces",
    "gather",
    "group_curves",
    "group_points",
    "keysort",
    "prefix_table",
    "radix",
    "range_cells",
    "ranks",
    "response_facts",
    "screen_events",
    "screen_groups",
    "split_stretches",
    "split_tie_scores",
    "stretches",
    "stretches_from",
    "tie_counts",
    "tie_scores",
    "tieorder",
]
