"""Paired samples: two responses per unit, compared at the same score (paired-and-covariates 1).

Every row carries a score S, a response Q of the first population and a
response R of the second, observed on the same unit (the same household
scored by two models, the same patient under two treatments). Rows sharing a
score merge as ties do (method.md 1.1): the merged point has weight W~ (the
sum), averages Q~ and R~ and tie factor f. With a_j = W~_j / sum W~ the
cumulative differences are

    C_k = sum_{j<=k} a_j (Q~_j - R~_j)        (label ``cumdiff`` of the paper)

so the result reads "first minus second", and the slope of C against A_k is
the local average difference of the two responses. Kuiper's D and
Kolmogorov-Smirnov's G are computed from C as elsewhere; the scale of a
driftless random walk (the paper's estimator after ``expectedvar``) is

* ``variance="empirical"`` (any real responses): sigma^2 = sum_j a_j^2 (Q~_j - R~_j)^2;
* ``variance="bernoulli"`` (responses are probabilities in [0, 1]):
  sigma^2 = sum_j a_j^2 f_j (Q~_j (1 - Q~_j) + R~_j (1 - R~_j)).

P-values, logarithms and Benjamini-Hochberg q-values follow method.md 4.
The statistics stages of the subpopulation screen are reused: only the
merging of two responses and the sigma terms are specific to pairs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import polars as pl

from polars_cumdev.covariates.ordering import resolve_score
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.accumulate import accumulate, check_fraction, zoom_check
from polars_cumdev.method.checks import Check
from polars_cumdev.method.curves import summed_sigma_curve
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.groups import selection_label
from polars_cumdev.method.masks import mask_checks, resolve_mask
from polars_cumdev.method.prepare import (
    FrameLike,
    Prepared,
    _range_check,
    _require_name,
    _require_numeric,
    _value_checks,
    as_lazy,
    prepare,
    schema_of,
)
from polars_cumdev.method.resolution import merged_error
from polars_cumdev.method.statistics import (
    MIN_SCORES,
    RMAX,
    STATISTIC_COLUMNS,
    normalize,
    summarize,
    with_location,
)
from polars_cumdev.method.ties import merge_ties, sort_by_score
from polars_cumdev.method.weights import rescale

__all__ = ["PAIRED_COLUMNS", "PAIRED_CURVE_COLUMNS", "PairedVariance", "paired", "paired_curve"]

PairedVariance = Literal["empirical", "bernoulli"]

#: Columns of :func:`paired` after the grouping keys (those of ``screen``).
PAIRED_COLUMNS = STATISTIC_COLUMNS
#: Columns of :func:`paired_curve`.
PAIRED_CURVE_COLUMNS = (
    "k",
    "a",
    "k_over_n",
    "score",
    "cumdiff",
    "first_mean",
    "second_mean",
    "weight",
    "sigma",
    "variance_share",
    "located",
)

# The second response travels as the reference column of the accumulation:
# C_k = sum a_j (RESPONSE_j - REFERENCE_j) is then "first minus second".
_SECOND = nm.REFERENCE
_GAP = f"{nm.PREFIX}gap"
_SIGMA_ZERO_PAIRED = {
    "empirical": "sigma is 0 (the two responses agree at every score): z undefined",
    "bernoulli": "sigma is 0 (every averaged response is exactly 0 or 1): z undefined",
}


def _check_variance(variance: str) -> str:
    if variance == "observed":  # the name before screen's "empirical" was adopted here too
        warnings.warn(
            "variance='observed' is now called variance='empirical' (as in screen); "
            "'observed' will be removed",
            DeprecationWarning,
            stacklevel=3,
        )
        return "empirical"
    if variance not in ("empirical", "bernoulli"):
        raise InvalidParameterError(
            f"`variance` must be 'empirical' or 'bernoulli' for paired samples, got {variance!r}"
        )
    return variance


def _prepare(
    frame: FrameLike,
    score: str,
    first: str,
    second: str,
    weight: str | None,
    by: str | Sequence[str] | None,
    variance: str,
    carry: Sequence[pl.Expr] = (),
) -> Prepared:
    """Checked, standardized rows: keys, score, weight, Q as RESPONSE and R as REFERENCE."""
    variance = _check_variance(variance)
    first = _require_name(first, "first")
    second = _require_name(second, "second")
    schema = schema_of(as_lazy(frame))
    # The first response's dtype is checked by ``prepare``; the second's here,
    # before it is cast.
    _require_numeric(schema, first, "first response", allow_bool=True)
    _require_numeric(schema, second, "second response", allow_bool=True)
    unit = (0.0, 1.0) if variance == "bernoulli" else None
    r = pl.col(second).cast(pl.Float64)
    prepared = prepare(
        frame,
        score=score,
        response=first,
        weight=weight,
        by=by,
        response_range=unit,
        reserved=PAIRED_COLUMNS,
        carry=[r.alias(_SECOND), *carry],
    )
    prepared.checks.extend(
        _value_checks(second, "second response", r, schema[second], positive=False)
    )
    if unit is not None:
        prepared.checks.append(_range_check(second, "second response", r, *unit))
        prepared.checks.append(_outcomes_check(first, second))
    return prepared


def _outcomes_check(first: str, second: str) -> Check:
    """Refuse ``variance="bernoulli"`` on responses that are all 0 or 1 (issue 36).

    The Bernoulli sigma reads Q and R as the probabilities of 0/1 outcomes
    (paired-and-covariates 1, step 4, the reference's ``expected_vals``). Fed
    the outcomes themselves, Q~ (1 - Q~) is 0 at every score held by one row
    and biased low by (m - 1) / m at a tie of m rows: sigma collapses and
    null comparisons are rejected far above the level (16% at 60 rows on 30
    scores, 40% on 60 scores, at 5%). Such data need ``variance="empirical"``.
    """
    q, r = pl.col(first).cast(pl.Float64), pl.col(second).cast(pl.Float64)
    outcomes = (q.is_in([0.0, 1.0]) & r.is_in([0.0, 1.0])).all()
    return Check(
        pl.when(outcomes).then(pl.len()).otherwise(0),
        f"variance='bernoulli' reads {first!r} and {second!r} as probabilities (expected "
        "values of Bernoulli outcomes), but all {count} rows hold only 0 and 1: observed "
        "outcomes, whose q (1 - q) is 0 for one row, so sigma collapses and null "
        "comparisons come out significant; use variance='empirical' for 0/1 outcomes",
        InvalidValuesError,
    )


def _sigma_term(variance: str) -> pl.Expr:
    """Each merged point's contribution to sigma^2 (paired-and-covariates 1, step 4)."""
    a = pl.col(nm.A_STEP)
    q, r = pl.col(nm.RESPONSE), pl.col(_SECOND)
    if variance == "empirical":
        return (a * (q - r)) ** 2
    return a * a * pl.col(nm.TIE) * (q * (1.0 - q) + r * (1.0 - r))


def _rounding(variance: str) -> tuple[pl.Expr, pl.Expr]:
    """Per point, bounds of the rounding errors of a_k (Q~_k - R~_k) and of its sigma^2 term.

    Both averages carry :func:`merged_error` (with ``RMAX``, the largest
    |response| of either column); the bounds go into :func:`summarize`, so
    :func:`polars_cumdev.method.resolution.resolved` applies the screen's rule.
    """
    a, f = pl.col(nm.A_STEP), pl.col(nm.TIE)
    q, r = pl.col(nm.RESPONSE), pl.col(_SECOND)
    delta = 2.0 * merged_error(pl.col(RMAX), exact=pl.col(_GAP) == 0.0)
    if variance == "empirical":
        spread = a * a * (2.0 * (q - r).abs() * delta + delta * delta)
    else:
        spread = a * a * f * ((2.0 + 2.0 * q.abs() + 2.0 * r.abs()) * delta + 2.0 * delta * delta)
    return a * delta, spread + 8.0 * 2.0**-52 * _sigma_term(variance).abs()


def _accumulated(prepared: Prepared, fraction: float = 1.0) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Merged, accumulated points of every group (A_k, C_k), and the weights' scale."""
    rows, scale = rescale(prepared.gated())
    # The mean |Q - R| of a tie is 0 when its rows agree pairwise: then both
    # averages are the same sums of the same values, and their difference is exact.
    rows = rows.with_columns((pl.col(nm.RESPONSE) - pl.col(_SECOND)).abs().alias(_GAP))
    points = merge_ties(sort_by_score(rows, [_SECOND]), prepared.keys, extra=[_SECOND, _GAP])
    return accumulate(points, prepared.keys, fraction=fraction), scale


@entry_point("score", "first", "second", "weight", "by")
def paired(
    frame: FrameLike,
    score: Column | Sequence[Column],
    first: Column,
    second: Column,
    weight: Column | None = None,
    *,
    by: Column | Sequence[Column] | None = None,
    variance: PairedVariance = "empirical",
    level: float = LEVEL,
) -> pl.LazyFrame:
    """Cumulative differences between paired samples: statistics overall or per group.

    Parameters
    ----------
    frame
        DataFrame or LazyFrame with one row per unit (pair of responses).
    score
        The covariate S the two responses are compared at; a list of
        covariates orders the pairs along a Hilbert curve through them
        (:mod:`polars_cumdev.covariates.ordering`: adds ``ordering`` and
        ``from_<covariate>`` / ``to_<covariate>``; on the curve, one column
        per covariate).
    first, second
        The responses Q (first population) and R (second population) of
        the same unit; numeric or boolean. Any real values with
        ``variance="empirical"``; in [0, 1] with ``"bernoulli"``.
    weight
        Optional positive weights W of the pairs.
    by
        Optional grouping column(s): one row per group, all computed in one
        query, with Benjamini-Hochberg q-values across the groups.
    variance
        ``"empirical"`` (default): sigma^2 = sum_j a_j^2 (Q~_j - R~_j)^2, the
        paper's unbiased estimator of the variance in ``expectedvar``, valid
        for any distribution of the responses. ``"bernoulli"``: the
        responses are expected values (probabilities) of Bernoulli variates
        and sigma^2 = sum_j a_j^2 f_j (Q~_j (1 - Q~_j) + R~_j (1 - R~_j)).
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): filled only where ``kuiper_q``
        (``kuiper_p`` without ``by``, the same number) is at most ``level``.

    Returns
    -------
    pl.LazyFrame
        One row (per group) with the keys and the columns of
        :func:`polars_cumdev.subpopulation.screen`: ``n``, ``n_scores``,
        ``weight``, ``kuiper`` (D = max C - min C over k = 0..m), ``ks``
        (G = max |C_k|), ``delta`` (C_m: the average of first minus second),
        ``sigma``, ``kuiper_z``, ``ks_z``, ``kuiper_p``, ``ks_p``,
        ``kuiper_log10p``, ``ks_log10p`` (method.md 4), ``kuiper_q``,
        ``ks_q``, the located stretch ``from_score``, ``to_score``,
        ``share``, ``deviation`` (the average of first minus second there),
        ``variance`` (``"empirical"`` or ``"bernoulli"``) and ``note``;
        sorted by ``kuiper_z``, largest first. A group with a single
        distinct score keeps its row, with null z and p and the reason in
        ``note``.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, InvalidParameterError
        At once, for a missing or non-numeric column or a bad argument.
    InvalidValuesError
        On collection, for nulls, NaN, infinities, non-positive weights or
        (with ``"bernoulli"``) responses outside [0, 1], naming the column.
    """
    variance = _check_variance(variance)
    frame, score, ordering = resolve_score(frame, score, weight)
    prepared = _prepare(frame, score, first, second, weight, by, variance)
    keys = prepared.keys
    accumulated, scale = _accumulated(prepared)
    largest = pl.max_horizontal(pl.col(nm.RESPONSE).abs().max(), pl.col(_SECOND).abs().max())
    binary = prepared.gated().select(pl.lit(True).alias(nm.BINARY), largest.alias(RMAX))
    accumulated = accumulated.join(
        binary.select(RMAX), how="cross", maintain_order="left"
    ).cache()  # read by the summary and by the location
    term = _sigma_term(variance)
    summary = summarize(
        accumulated, keys, empirical=False, bernoulli_term=term, errors=_rounding(variance)
    )
    stats = with_location(summary, accumulated, keys, binary)
    out = normalize(
        stats,
        keys,
        binary,
        min_scores=MIN_SCORES["paired"],
        scale=scale,
        labels=prepared.labels,
        sigma_zero=_SIGMA_ZERO_PAIRED[variance],
        level=level,
    )
    out = out.with_columns(pl.lit(variance).alias("variance"))
    out = prepared.guarded(out)
    return out if ordering is None else ordering.located(out)


@entry_point("score", "first", "second", "weight")
def paired_curve(
    frame: FrameLike,
    score: Column | Sequence[Column],
    first: Column,
    second: Column,
    weight: Column | None = None,
    *,
    subpop: pl.Expr | str | None = None,
    variance: PairedVariance = "empirical",
    fraction: float = 1.0,
    level: float = LEVEL,
) -> pl.LazyFrame:
    """Drill-down frame of the cumulative differences between paired samples.

    Same layout as :func:`polars_cumdev.subpopulation.curve`, so
    :func:`polars_cumdev.charts.cumulative` draws it (``kind="compare"``,
    with a title saying "first minus second").

    Parameters
    ----------
    frame, score, first, second, weight, variance
        As in :func:`paired`.
    subpop
        The rows of one group (a boolean expression or column), e.g. a row
        of ``paired(..., by=...)``; None for all rows. The group is selected
        after the covariates are ordered, so with several covariates the
        curve follows the Hilbert order of the whole frame, as
        :func:`paired` does (filtering the frame first would rank the
        covariates within the group and give another order).
    fraction
        Remark 3's zoom q in (0, 1] (method.md 1.7): keep the first
        floor(m q) merged scores and renormalize the weights over them.
    level
        Significance level of the located stretch: ``located`` flags points
        only when the curve's Kuiper p-value is at most ``level``.

    Returns
    -------
    pl.LazyFrame
        Origin row (k = 0) then one row per merged score: ``k``, ``a``
        (A_k), ``k_over_n``, ``score``, ``cumdiff`` (C_k, first minus
        second), ``first_mean`` (Q~_k), ``second_mean`` (R~_k), ``weight``
        (W~_k), ``sigma``, ``variance_share`` (share of sigma^2 from points
        1..k) and ``located`` (inside the located stretch).
    """
    variance = _check_variance(variance)
    fraction = check_fraction(fraction)
    frame, score, ordering = resolve_score(frame, score, weight)
    member: list[pl.Expr] = []
    if subpop is not None:
        mask = resolve_mask(as_lazy(frame), subpop)
        member = [mask.alias(nm.MEMBER)]
    prepared = _prepare(frame, score, first, second, weight, None, variance, carry=member)
    if subpop is not None:
        label = selection_label(subpop)
        prepared.checks.extend(mask_checks(mask, label))
        selected = prepared.frame.filter(pl.col(nm.MEMBER)).drop(nm.MEMBER)
        prepared = replace(prepared, frame=selected)
    if fraction < 1.0:
        scores = pl.col(score) if subpop is None else pl.col(score).filter(mask)
        selected_label = "the data" if subpop is None else label
        prepared.checks.append(zoom_check(scores, fraction, selected_label))
    accumulated, scale = _accumulated(prepared, fraction)
    term = _sigma_term(variance)
    points = summed_sigma_curve(
        accumulated, scale, term, prepared.labels, MIN_SCORES["paired"], level=level
    )
    points = points.rename({"response_mean": "first_mean", "full_mean": "second_mean"})
    points = prepared.guarded(points)
    points = points.select(PAIRED_CURVE_COLUMNS)
    return points if ordering is None else ordering.pointwise(points)
