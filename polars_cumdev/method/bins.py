"""Stage 2b: midpoint bins in the full population (method.md 1.2-1.3; (6)-(7), (26), (33)).

Equation numbers are those of M. Tygert, "Cumulative deviation of a
subpopulation from the full population".

Each merged subpopulation score S'_k owns the bin of full-population rows with
B_{k-1} < S <= B_k, where B_k is the midpoint between S'_k and S'_{k+1}. The
bin sums are differences of compensated prefix sums over the full population
sorted by score (:mod:`polars_cumdev.method.sums`); the prefix at every midpoint of
every group is found by one as-of join against that single sorted order. No
loop over groups and no per-group pass over the full population.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.prefix_sums import (
    _CENTRE,
    _EPS,
    FLOAT_SUMS,
    MAXIMA,
    PREFIX_SCORE,
    SUMS,
    difference_error,
)
from polars_cumdev.method.sums import boundary

__all__ = ["BinMoments", "bin_moments", "locate_bins", "midpoint", "midpoints"]

_UPPER = f"{nm.PREFIX}upper"
#: Below this a sum of scores is exact and its half may fall between doubles.
SUBNORMAL_HALVES = 2.0**-1021
#: The spacing of doubles below 2^-1021 (the smallest subnormal).
SMALLEST_STEP = 2.0**-1074
_ROW = "_prow"


@dataclass(frozen=True)
class BinMoments:
    """What a bin gives the method, with bounds of the rounding errors in it.

    The expressions name columns that :meth:`on` adds to a frame, stage by
    stage (each stage reads the columns of the ones before, so no part of
    the formulas is evaluated twice). ``reference`` is Rt_k of (26) of M.
    Tygert, "Cumulative deviation of a subpopulation from the full population"
    and ``variance`` V_k of (33). ``reference_error`` bounds |error| of Rt_k,
    ``bernoulli_error`` that of Rt_k (1 - Rt_k) (the term of (31)) and
    ``variance_error`` that of V_k (the term of (32)); they are infinite when a
    sum is not resolved at all (a bin weight or the denominator of u_k lost in
    the rounding of the running totals), and 0 when no bound was asked for.
    ``overflow`` is true when a bin sum is not finite: with weights rescaled
    into (0, 1], only responses too large to be summed (or squared) do that.
    """

    stages: tuple[tuple[pl.Expr, ...], ...]
    scratch: tuple[str, ...]
    reference: pl.Expr
    variance: pl.Expr
    reference_error: pl.Expr
    bernoulli_error: pl.Expr
    variance_error: pl.Expr
    overflow: pl.Expr

    def on(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        """``frame`` with the columns the expressions name (drop :attr:`scratch` after)."""
        for stage in self.stages:
            frame = frame.with_columns(stage)
        return frame


def bin_moments(
    total: Callable[[str], pl.Expr],
    centre: pl.Expr,
    error: Callable[[str], pl.Expr] | None = None,
    name: str = "_bm",
) -> BinMoments:
    """Rt_k of equation (26) and V_k of (33), unbiased as in method.md 1.3, with error bounds.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    Parameters
    ----------
    total
        Gives, for a name in :data:`SUMS`, the expression of the bin's total
        of that running sum (a difference of two running sums).
    centre
        The centring of the responses used in the running sums.
    error
        Gives, for a name in :data:`FLOAT_SUMS`, a bound of the rounding
        error of the bin's total of that sum (:func:`difference_error`);
        ``None`` for no bounds.
    name
        Prefix of the intermediate columns (distinct for two bins of one row).

    Returns
    -------
    BinMoments
        A bin whose responses are all 0 (or all 1) gets exactly Rt = 0 (or
        1) and V = 0, as summing its rows directly would give, with zero
        error; V = 0 for a bin of one row (u_k = 0).

    Notes
    -----
    The bounds are first-order propagations of the sums' bounds through the
    formulas, each rounding counted at 2^-52 of the magnitude it acts on.
    The two that matter with very uneven weights: when one weight dominates
    a bin, Rt_k is within an ulp of 0 or 1 and Rt_k (1 - Rt_k) keeps no
    correct digit (its bound, 2^-52, then exceeds it), and the denominator
    of u_k, sum(W)^2 - sum(W^2), cancels.
    """
    scratch: list[str] = []

    def stage(**expressions: pl.Expr) -> tuple[tuple[pl.Expr, ...], dict[str, pl.Expr]]:
        named = {key: f"{name}_{key}" for key in expressions}
        scratch.extend(named.values())
        exprs = tuple(e.alias(named[k]) for k, e in expressions.items())
        return exprs, {k: pl.col(v) for k, v in named.items()}

    sums = {c: total(c) + total(f"{c}_err") for c in FLOAT_SUMS}
    bounds = {f"e{c}": error(c) for c in FLOAT_SUMS} if error is not None else {}
    first, c1 = stage(
        bw=sums["_pw"],
        bww=sums["_pww"],
        bwr=sums["_pwr"],
        bwrr=sums["_pwrr"],
        rows=total("_pn"),
        zeros=total("_pn0"),
        ones=total("_pn1"),
        **bounds,
    )
    bw, bww, bwr, bwrr, rows = c1["bw"], c1["bww"], c1["bwr"], c1["bwrr"], c1["rows"]
    zeros, ones = c1["zeros"], c1["ones"]
    second_stage, c2 = stage(
        mean_c=bwr / bw,
        second=bwrr / bw,
        square=bw * bw,
        pure=(ones == rows) | (zeros == rows),
        overflow=~pl.all_horizontal(s.is_finite() for s in (bw, bww, bwr, bwrr)),
    )
    mean_c, second, square, pure = c2["mean_c"], c2["second"], c2["square"], c2["pure"]
    third, c3 = stage(
        denominator=square - bww,
        reference=pl.when(ones == rows)
        .then(1.0)
        .when(zeros == rows)
        .then(0.0)
        .otherwise(centre + mean_c),
        spread=second - mean_c * mean_c,
    )
    denominator, reference = c3["denominator"], c3["reference"]
    unbias = pl.when(rows > 1).then(square / denominator).otherwise(0.0)
    fourth, c4 = stage(
        unbias=unbias,
        variance=pl.when(pure).then(0.0).otherwise(unbias * c3["spread"]),
    )
    stages = [first, second_stage, third, fourth]
    if error is None:
        zero = pl.lit(0.0)
        return BinMoments(
            tuple(stages),
            tuple(scratch),
            reference,
            c4["variance"],
            zero,
            zero,
            zero,
            c2["overflow"],
        )
    inf = float("inf")
    e_w, e_ww, e_wr, e_wrr = (c1[f"e{c}"] for c in FLOAT_SUMS)
    fifth, c5 = stage(
        e_mean=(e_wr + mean_c.abs() * e_w) / bw + _EPS * mean_c.abs(),
        e_denominator=2.0 * _EPS * (square + bww) + 2.0 * bw * e_w + e_w * e_w + e_ww,
    )
    e_mean, e_denominator = c5["e_mean"], c5["e_denominator"]
    sixth, c6 = stage(
        e_reference=pl.when(pure)
        .then(0.0)
        .when(e_w >= bw)
        .then(inf)
        .otherwise(e_mean + _EPS * reference.abs()),
        e_spread=(e_wrr + second.abs() * e_w) / bw
        + 2.0 * mean_c.abs() * e_mean
        + e_mean * e_mean
        + 2.0 * _EPS * (second.abs() + mean_c * mean_c),
        e_unbias=e_denominator / (denominator - e_denominator) + 2.0 * e_w / bw + 2.0 * _EPS,
    )
    e_reference = c6["e_reference"]
    variance = c4["variance"]
    product = reference * (1.0 - reference)
    seventh, c7 = stage(
        e_bernoulli=pl.when(pure)
        .then(0.0)
        .otherwise(e_reference * (1.0 + e_reference) + _EPS * (reference.abs() + product.abs())),
        e_variance=pl.when(pure | (rows <= 1))
        .then(0.0)
        .when((e_w >= bw) | (denominator <= e_denominator))
        .then(inf)
        .otherwise(
            c4["unbias"] * c6["e_spread"] + variance.abs() * c6["e_unbias"] + _EPS * variance.abs()
        ),
    )
    stages += [fifth, sixth, seventh]
    return BinMoments(
        tuple(stages),
        tuple(scratch),
        reference,
        variance,
        e_reference,
        c7["e_bernoulli"],
        c7["e_variance"],
        c2["overflow"],
    )


def midpoint(lower: pl.Expr, upper: pl.Expr) -> pl.Expr:
    """The bin boundary between two consecutive distinct scores, equation (7).

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    The midpoint (S'_k + S'_{k+1}) / 2 rounded to double precision, so that
    a full-population score S belongs to the lower bin when S <= B_k. Two
    guards keep the bins defined by the *order* of the scores: when the
    scores are adjacent doubles the rounded midpoint is one of them, and if
    it is the upper one the boundary is moved to the lower score (so the
    upper score's rows stay in its own bin); and when the sum overflows, the
    halves are added instead.

    Below 2^-1021 the sum is exact but its half may not be a double (doubles
    there are spaced 2^-1074 apart): rounded to even it could pass a score
    that lies above the true midpoint, so that scaling the scores by a power
    of two would move rows between bins. There the half is rounded down
    instead: for every double S, S <= (rounded-down half) exactly when
    S <= (true half), as at every other scale (issue 37, item 8).
    """
    total = lower + upper
    halfway = pl.when(total.is_finite()).then(total / 2.0).otherwise(lower / 2.0 + upper / 2.0)
    halfway = (
        pl.when((total.abs() < SUBNORMAL_HALVES) & (halfway * 2.0 > total))
        .then(halfway - SMALLEST_STEP)
        .otherwise(halfway)
    )
    return pl.when((halfway >= upper) | (halfway < lower)).then(lower).otherwise(halfway)


def midpoints(keys: Sequence[str] = ()) -> pl.Expr:
    """Expression for B_k, the upper bound of each point's bin (:func:`midpoint`).

    Evaluated on merged points with each group's rows contiguous and in
    increasing order of score (as :func:`polars_cumdev.method.ties.merge_ties`
    returns them); the last point of each group gets +inf.
    """
    score = pl.col(nm.SCORE)
    return (
        pl.when(boundary(keys, -1)).then(float("inf")).otherwise(midpoint(score, score.shift(-1)))
    )


def locate_bins(
    points: pl.LazyFrame, prefix: pl.LazyFrame, keys: Sequence[str] = ()
) -> pl.LazyFrame:
    """Attach to every merged point the full-population average and variance in its bin.

    Parameters
    ----------
    points
        Merged points from :func:`polars_cumdev.method.ties.merge_ties` (each
        group's points contiguous, in increasing order of score).
    prefix
        Output of :func:`full_population_prefix`.
    keys
        Grouping columns of ``points``.

    Returns
    -------
    pl.LazyFrame
        The points, in the same order, plus ``BIN_WEIGHT`` (sum W in the
        bin), ``BIN_ROWS``, ``REFERENCE`` (Rt_k, equation (26) of M. Tygert,
        "Cumulative deviation of a subpopulation from the full population") and
        ``BIN_VARIANCE`` (V_k of equation (33) with the unbiasing factor u_k of
        method.md 1.3; 0 for a bin of one row).

    Notes
    -----
    Only the upper midpoints are looked up: a bin's lower end is the previous
    point's upper end in the same group, one row up. The lookup sorts just
    the (midpoint, row) pairs, finds every prefix by one as-of join (a
    linear merge with the sorted full population), and puts the answers back
    in the points' order by the row number.
    """
    upper, diffs, moments, columns, scratch = _bin_columns(tuple(keys))
    points = points.with_columns(upper).with_row_index(_ROW).cache()
    at_upper = (
        points.select(_UPPER, _ROW)
        .sort(_UPPER)
        .join_asof(prefix, left_on=_UPPER, right_on=PREFIX_SCORE, strategy="backward")
        .sort(_ROW)
        .select(*SUMS, *MAXIMA, _CENTRE)
    )
    located = pl.concat([points, at_upper], how="horizontal").with_columns(diffs)
    return moments.on(located).with_columns(columns).drop(scratch)


@functools.lru_cache(maxsize=64)
def _bin_columns(
    keys: tuple[str, ...],
) -> tuple[pl.Expr, list[pl.Expr], BinMoments, list[pl.Expr], tuple[str, ...]]:
    """The expressions of :func:`locate_bins` for ``keys``, built once per key set.

    (They depend on the key names alone; building them anew cost a small
    screen about a millisecond of Python a call.)
    """
    first = boundary(keys, 1)
    diffs = [
        pl.when(first).then(pl.col(c)).otherwise(pl.col(c) - pl.col(c).shift(1)).alias(c)
        for c in SUMS
    ]
    error = difference_error(pl.col, lambda c: pl.col(f"{c}_lomax"))
    moments = bin_moments(pl.col, pl.col(_CENTRE), error)
    columns = [
        (pl.col("_pw") + pl.col("_pw_err")).alias(nm.BIN_WEIGHT),
        pl.col("_pn").alias(nm.BIN_ROWS),
        moments.reference.alias(nm.REFERENCE),
        moments.variance.alias(nm.BIN_VARIANCE),
        moments.reference_error.alias(nm.REFERENCE_ERROR),
        moments.bernoulli_error.alias(nm.BERNOULLI_ERROR),
        moments.variance_error.alias(nm.VARIANCE_ERROR),
        moments.overflow.alias(nm.OVERFLOW),
    ]
    scratch = (*SUMS, *MAXIMA, _CENTRE, _UPPER, _ROW, *moments.scratch)
    return midpoints(keys).alias(_UPPER), diffs, moments, columns, scratch
