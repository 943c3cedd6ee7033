"""Finite-sample p-values: where the asymptotic Kuiper tail is not trusted, the exact null.

The asymptotic p-values of :mod:`polars_cumdev.method.pvalues` treat the
normalized curve as a Brownian motion (Remark 2 of M. Tygert, "Cumulative
deviation of a subpopulation from the full population"). For 0/1 responses
that rests on many independent events of comparable weight; a group whose
deviation can hinge on a handful of rare events, or on a few heavy weights,
has a tail far heavier than the Brownian one (docs/method.md, "Valid at every
size"). The criterion is the group's *effective number of events*, from the
skewness and the excess kurtosis of the null sum of w_i (R_i - p_i),

    E = min( (sum w^2 v)^3 / (sum w^3 v |1 - 2p|)^2,  (sum w^2 v)^2 / sum w^4 v (1 - 6v)^+ ),

v_i = p_i (1 - p_i), p_i the null probability of a 1 (the score for
calibration): unweighted and with a rare outcome, both are about the expected
number of events n p; concentrated weights shrink them; scores near 1/2 (no
skewness, tails lighter than normal) do not count against a group.
A group with E below :data:`MIN_EVENTS` whose asymptotic p-value (Kuiper or
Kolmogorov-Smirnov) is at most :func:`cutoff` gets its p-values from
redraws of its own responses under the null
(:func:`polars_cumdev.kernel.finite_sample.simulated_pvalues`). Every other
row keeps the asymptotic value: under Benjamini-Hochberg or Holm at level
alpha no row with p above alpha enters a decision, whatever the other rows'
p-values, so the decisions at any level up to the cutoff rest only on
simulated p-values wherever the criterion fails.

The most redraws of a group: ``FACTOR * tests / level``, so that a p-value
can reach the smallest threshold of BH or Holm over ``tests`` rows (level /
tests) with room to spare, capped by :data:`WORK` row-redraws per group (a
p-value of (1 + G) / (B + 1) is valid for every B: a cap only costs power,
on groups with many rows and few events). Most groups stop long before
(Besag and Clifford's rule, :data:`STOP` exceedances).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.findings import check_level

__all__ = [
    "EXACT_ROWS",
    "FACTOR",
    "MARGIN",
    "MIN_EVENTS",
    "P_METHOD",
    "SIM_KS",
    "SIM_KUIPER",
    "STOP",
    "WORK",
    "counted_events",
    "cutoff",
    "effective_events",
    "effective_rows",
    "event_terms",
    "events_floor",
    "exact",
    "flip",
    "may_have_few_events",
    "method_column",
    "redraws",
    "set_aside",
    "simulate",
    "size_ranks",
]

#: Groups with fewer effective events than this are simulated (where it could matter).
MIN_EVENTS = 200.0
#: Room above :data:`MIN_EVENTS` for the rounding of a lower bound of the effective events
#: (sigma_B (W / w_max)^2) that sets groups aside before the exact criterion is computed.
MARGIN = 1.0 + 1e-6
#: Room above :data:`MIN_EVENTS` for a count summed another way (:func:`set_aside`).
WALK_MARGIN = 1.01
_REAL = "__cd_real"
# may_have_few_events' columns of its bound, dropped before it returns
_TOP, _SUM, _FIRST, _FOURTH, _BOUND = (
    f"__cd_{name}" for name in ("top", "sum", "first", "fourth", "bound")
)
#: Real-valued responses (predicted means and quantiles): groups with fewer
#: effective rows, (sum w)^2 / sum w^2, than this are simulated too.
MIN_ROWS = 200.0
#: Groups of at most this many rows (a mean's or a quantile's) get exact p-values:
#: every one of their 2^rows outcomes is listed instead of drawn.
EXACT_ROWS = 12
#: Most redraws: FACTOR * tests / level (the smallest threshold of BH/Holm is level / tests).
FACTOR = 2.0
#: Fewest most-redraws of a group, whatever its size.
FLOOR = 999
#: Row-redraws allowed per group (size times redraws).
WORK = 20_000_000
#: Besag and Clifford's stopping number of exceedances.
STOP = 10
#: Asymptotic p-values above this (or above the level, if larger) are kept.
CUTOFF = 0.1

#: Internal columns carrying a simulated p-value (null where asymptotic) to :func:`normalize`.
SIM_KUIPER = "_sim_kuiper_p"
SIM_KS = "_sim_ks_p"
#: The output column saying how each row's p-values were obtained.
P_METHOD = "p_method"


def cutoff(level: float) -> float:
    """Asymptotic p-values at most this are simulated where the criterion fails."""
    return max(CUTOFF, check_level(level))  # a bad level is refused here first


def event_terms(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per row, the terms whose per-group sums give :func:`effective_events` (3 x rows):
    w^2 v, w^3 v |1 - 2p| and w^4 v max(1 - 6v, 0), v = p (1 - p).

    The weights are first scaled by a power of two (exactly) so that the
    largest is in [0.5, 1): E3 and E4 do not depend on the weights' scale, and
    w^4 neither overflows nor underflows at weights near 1e100 or 1e-100."""
    top = float(np.max(np.abs(w))) if w.size else 0.0
    if 0.0 < top < np.inf:
        w = np.ldexp(w, -int(np.frexp(top)[1]))
    v = p * (1.0 - p)
    w2v = w * w * v
    return np.stack(
        [w2v, w2v * w * np.abs(1.0 - 2.0 * p), w2v * w * w * np.maximum(1.0 - 6.0 * v, 0.0)]
    )


def counted_events(second: np.ndarray, third: np.ndarray, fourth: np.ndarray) -> np.ndarray:
    """:func:`effective_events` of sums counted elsewhere (the compiled walks, the range
    engines' cells), NaN where any of them is NaN (not known): :func:`set_aside` then
    leaves the group to the step."""
    sums = np.stack([second, third, fourth]).astype(np.float64)
    return np.where(np.isnan(sums).any(axis=0), np.nan, effective_events(sums))


def effective_events(sums: np.ndarray) -> np.ndarray:
    """min(E3, E4) per group from the per-group sums of :func:`event_terms` (3 x groups).

    E3 = (sum w^2 v)^3 / (sum w^3 v |1 - 2p|)^2 and E4 = (sum w^2 v)^2 /
    sum w^4 v max(1 - 6v, 0): the sizes at which the sum's skewness and excess
    kurtosis would be those of n p events of a rare outcome (1 / sqrt(E3) and
    1 / E4). A symmetric or light-tailed group gets +inf (nothing to correct);
    a group without variance gets 0.
    """
    second, third, fourth = sums
    with np.errstate(invalid="ignore", divide="ignore"):
        e3 = np.where(third > 0.0, second**3 / third**2, np.inf)
        e4 = np.where(fourth > 0.0, second**2 / fourth, np.inf)
    return np.where(second > 0.0, np.minimum(e3, e4), 0.0)


def redraws(sizes: np.ndarray, tests: int, level: float) -> np.ndarray:
    """The most redraws of each group (see the module docstring)."""
    target = math.ceil(FACTOR * max(tests, 1) / level)
    allowed = WORK // np.maximum(sizes, 1)
    return np.maximum(np.minimum(target, allowed), FLOOR).astype(np.int64)


def simulate(
    starts: np.ndarray,
    s: np.ndarray,
    w: np.ndarray,
    p: np.ndarray,
    r: np.ndarray,
    tests: int,
    level: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulated (Kuiper p, KS p, redraws) of groups laid out as the kernel reads them.

    The rows of each group must be sorted by score, weight and response.
    """
    if starts.shape[0] <= 1:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64)
    from polars_cumdev.kernel.finite_sample import simulated_pvalues  # only when needed

    draws = redraws(np.diff(starts), tests, level)
    as_float = [np.ascontiguousarray(a, dtype=np.float64) for a in (s, w, p, r)]
    return simulated_pvalues(starts.astype(np.int64), *as_float, draws, STOP)


def flip(
    starts: np.ndarray, s: np.ndarray, w: np.ndarray, e: np.ndarray, tests: int, level: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sign-flip (Kuiper p, KS p, redraws) of the residuals ``e`` of groups laid out as
    :func:`simulate` takes them (a predicted mean's null, symmetric errors); the
    draws are seeded by the scores and by each row's rank of |e| in its group."""
    if starts.shape[0] <= 1:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64)
    from polars_cumdev.kernel.finite_sample import flipped_pvalues  # only when needed

    draws = redraws(np.diff(starts), tests, level)
    key = size_ranks(starts, e)
    as_float = [np.ascontiguousarray(a, dtype=np.float64) for a in (s, w, e, key)]
    return flipped_pvalues(starts.astype(np.int64), *as_float, draws, STOP)


def exact(
    starts: np.ndarray, s: np.ndarray, w: np.ndarray, p: np.ndarray, r: np.ndarray, flip: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Kuiper p, KS p) of groups of at most :data:`EXACT_ROWS` rows, laid out as
    :func:`simulate` takes them (``flip``: ``r`` are a mean's residuals, ``p`` unused)."""
    if starts.shape[0] <= 1:
        return np.zeros(0), np.zeros(0)
    from polars_cumdev.kernel.finite_sample import exact_pvalues  # only when needed

    as_float = [np.ascontiguousarray(a, dtype=np.float64) for a in (s, w, p, r)]
    return exact_pvalues(starts.astype(np.int64), *as_float, flip)


def size_ranks(starts: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Each row's rank of |e| within its group (0, 1, ...; equal sizes by the rows' places),
    as float64: the sign-flip draws' seed, which must not see the residuals' signs."""
    sizes = np.diff(starts)
    group = np.repeat(np.arange(sizes.shape[0]), sizes)
    order = np.lexsort((np.arange(e.shape[0]), np.abs(e), group))
    key = np.empty(e.shape[0])
    key[order] = np.arange(e.shape[0]) - np.repeat(starts[:-1], sizes)
    return key


def effective_rows(group: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """(sum w)^2 / sum w^2 per group numbered 0..groups-1 (weights scaled first, as in
    :func:`event_terms`: the ratio does not depend on their scale)."""
    top = float(np.max(np.abs(w))) if w.size else 0.0
    if 0.0 < top < np.inf:
        w = np.ldexp(w, -int(np.frexp(top)[1]))
    first = np.bincount(group, weights=w, minlength=groups)
    second = np.bincount(group, weights=w * w, minlength=groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(second > 0.0, first * first / second, 0.0)


def grouped(
    group: np.ndarray, s: np.ndarray, w: np.ndarray, r: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The order putting rows by group, then score, weight, response; and the groups' starts.

    ``group`` numbers the groups 0..G-1; the result's starts have G + 1 entries.
    """
    order = np.lexsort((r, w, s, group))
    counts = np.bincount(group, minlength=int(group.max(initial=-1)) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return order, starts


def method_column(
    simulated: pl.Expr, resampled: pl.Expr | None = None, bound: pl.Expr | None = None
) -> pl.Expr:
    """``p_method``: "resampled" where ``resampled`` is true (a screen's real responses
    redrawn within the bins, :mod:`.finite_resampled`), "bound" where ``bound`` is (soft
    labels' conservative bound, :mod:`.finite_bound`), "simulated" where ``simulated``
    is, else "asymptotic"."""
    found = pl.when(pl.lit(False)).then(pl.lit(None, dtype=pl.String))
    for flag, name in ((resampled, "resampled"), (bound, "bound")):
        if flag is not None:
            found = found.when(simulated & flag.fill_null(False)).then(pl.lit(name))
    found = found.when(simulated).then(pl.lit("simulated"))
    return found.otherwise(pl.lit("asymptotic")).alias(P_METHOD)


def events_floor(sigma_b: pl.Expr, total: pl.Expr, top: pl.Expr) -> pl.Expr:
    """sigma_B (W / w_max)^2: a lower bound of each of E3 and E4 (:func:`effective_events`).

    ``sigma_b`` is a group's Bernoulli sigma squared ((31) of M. Tygert, "Cumulative
    deviation of a subpopulation from the full population"), ``total`` its weight W and
    ``top`` its largest weight, in the same units: sum w^2 v = sigma_B W^2, and each of
    sum w^3 v |1 - 2p| and sum w^4 v (1 - 6v)+ is at most w_max^2 sum w^2 v. A group whose
    floor reaches :data:`MIN_EVENTS` (times :data:`MARGIN`, for its rounding) is not
    simulated, so every engine sets it aside before its rows are brought together.
    """
    return sigma_b * (total / top) ** 2


def set_aside(events: pl.Expr) -> pl.Expr:
    """Whether a group's effective number of events, as the compiled screen's walk sums it
    (``events``; null or NaN where not known), puts it surely above the criterion.

    The walk sums E's three terms (:func:`event_terms`) point by point, with each tie's
    powers of the weights summed first and the bin means of the walk's compensated sums;
    the finite-sample step sums them row by row, with the bin means of
    :func:`~polars_cumdev.method.finite_bins.bin_means`. The two agree to rounding
    (``tests/method/test_walk_events.py`` measures how closely), far inside the
    :data:`WALK_MARGIN` (1%) asked here, so a group set aside would not have been
    simulated: the p-values are those the step gives every candidate itself. A group
    within the margin goes on to that step, which decides.
    """
    return events.fill_nan(None).fill_null(0.0) >= MIN_EVENTS * WALK_MARGIN


def may_have_few_events(
    picked: pl.LazyFrame, keys: Sequence[str], sigma_b: str, population: pl.LazyFrame | None
) -> pl.LazyFrame:
    """The candidates' rows (``picked``, with their group's Bernoulli sigma squared in the
    column ``sigma_b``) less the groups whose effective events are surely at least
    :data:`MIN_EVENTS`.

    Each of E3 and E4 (:func:`effective_events`) is at least sum w^2 v / w_max^2 and at
    least (sum w^2 v)^2 / sum w^4 v (Cauchy-Schwarz), which is at least (sum w^2 v)^2 /
    (sum w^4 / 4); sum w^2 v is the square of sigma (31) of M. Tygert, "Cumulative
    deviation of a subpopulation from the full population", times W^2: a group where
    either bound reaches the threshold (with room for rounding) would not be
    simulated, so its rows, and for the screen the whole population's bin means, need not
    be worked out (the range and cluster engines set the same groups aside before bringing
    rows to the driver). The screen of a population with responses other than 0 and 1
    takes another criterion (the resampled null): there, nothing is set aside.
    """
    w = pl.col(nm.WEIGHT)
    # Each window once, in a column of its own: written into the bound, which the
    # filter reads three times, the plan worked out every window again (about 24
    # times; 1.3 s on 5.6 million candidate rows at 1e7, against 0.1 s each).
    picked = picked.with_columns(w.max().over(keys).alias(_TOP), w.sum().over(keys).alias(_SUM))
    top = pl.col(_TOP)
    picked = picked.with_columns(
        events_floor(pl.col(sigma_b), pl.col(_SUM), top).alias(_FIRST),
        # (and min(E3, E4) >= (sum w^2 v)^2 / sum w^4 v >= (sum w^2 v)^2 / (sum w^4 / 4), by
        # Cauchy and Schwarz and v <= 1/4; with u = w / w_max, sum u^4 >= 1: no underflow)
        (0.25 * ((w / top) ** 4).sum().over(keys)).alias(_FOURTH),
    )
    first = pl.col(_FIRST)
    bound = pl.max_horizontal(first, first * first / pl.col(_FOURTH)).alias(_BOUND)
    picked = picked.with_columns(bound)
    bound = pl.col(_BOUND)
    keep = (bound < MIN_EVENTS * MARGIN) | bound.is_null() | bound.is_nan()
    internal = [_TOP, _SUM, _FIRST, _FOURTH, _BOUND]
    if population is None:
        return picked.filter(keep).drop(internal)
    real = (~pl.col(nm.RESPONSE).is_in([0.0, 1.0])).any().alias(_REAL)
    picked = picked.join(population.select(real), how="cross")
    return picked.filter(keep | pl.col(_REAL)).drop(_REAL, *internal)
