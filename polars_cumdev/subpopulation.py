"""Subpopulation versus full population: the screen and the drill-down curve.

These two functions compose the pipeline stages (prepare -> ties -> bins ->
accumulate -> statistics) into one lazy query each; the stages themselves,
run by Polars or by the compiled node, are in
:mod:`polars_cumdev.subpopulation_stages`. The ``cumdev`` namespace on frames
delegates here.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import polars as pl

from polars_cumdev.covariates.ordering import resolve_score
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled
from polars_cumdev.method.accumulate import accumulate, check_fraction, zoom_check
from polars_cumdev.method.curves import curve_frame, variance_share
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.finite_groups import SIMULATED, with_simulated
from polars_cumdev.method.groups import selection_label
from polars_cumdev.method.keys import Key, coded
from polars_cumdev.method.location import flag_stretch
from polars_cumdev.method.masks import mask_checks, resolve_mask
from polars_cumdev.method.prepare import FrameLike, Prepared, as_lazy, prepare
from polars_cumdev.method.sigma_terms import chosen_sigma, error_terms, sigma_terms
from polars_cumdev.method.statistics import (
    MIN_SCORES,
    OVERFLOWS,
    RMAX,
    STATISTIC_COLUMNS,
    check_variance,
    is_binary,
    normalize,
    resolved,
    verdict,
)
from polars_cumdev.method.sums import ordered_sum
from polars_cumdev.method.ties import sort_by_score
from polars_cumdev.method.weights import SCALE, rescale
from polars_cumdev.subpopulation_stages import (
    POINT_SCHEMA,
    points_node,
    polars_points,
    polars_summary,
    summary_node,
)

# POINT_SCHEMA lives in polars_cumdev.subpopulation_stages; it is named here too, where the
# public first found it.
__all__ = [
    "CURVE_COLUMNS",
    "POINT_SCHEMA",
    "curve",
    "prepare_screen",
    "screen",
]

_RESOLVED = f"{nm.PREFIX}resolved"

CURVE_COLUMNS = (
    "k",
    "a",
    "k_over_n",
    "score",
    "cumdiff",
    "full_mean",
    "response_mean",
    "weight",
    "sigma",
    "variance_share",
    "located",
)


def _prepare(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None,
    variance: str,
    **kwargs: object,
) -> Prepared:
    check_variance(variance)
    response_range = (0.0, 1.0) if variance == "bernoulli" else None
    return prepare(
        frame,
        score=score,
        response=response,
        weight=weight,
        response_range=response_range,
        **kwargs,  # type: ignore[arg-type]
    )


def prepare_screen(
    frame: FrameLike,
    by: Key | Sequence[Key],
    score: str,
    response: str,
    weight: str | None,
    variance: str,
) -> Prepared:
    """Validate a screen's arguments and standardize its input (see :func:`screen`)."""
    if by is None:
        raise InvalidParameterError("`by` is required: name the column(s) defining the groups")
    return _prepare(frame, score, response, weight, variance, by=by, reserved=STATISTIC_COLUMNS)


@entry_point("by", "score", "response", "weight")
def screen(
    frame: FrameLike,
    by: Column | Sequence[Column],
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    variance: str = "auto",
    engine: str = "auto",
    level: float = LEVEL,
    _finite_sample: bool = True,
) -> pl.LazyFrame:
    """Screen every subpopulation ``by`` defines against the full population.

    Equation and remark numbers are those of M. Tygert, "Cumulative deviation
    of a subpopulation from the full population" (J. Big Data 8, 2021);
    method.md is the repository's account of the method (docs/method.md).
    Each group is compared with all rows of ``frame``: its tied scores are
    merged (method.md 1.1), each merged score gets the midpoint bin of
    equations (6)-(7) in the full population, the weighted cumulative
    differences (25)-(28) are accumulated, and the Kuiper (13) and
    Kolmogorov-Smirnov (12) statistics are divided by sigma, (31) or (32).
    All groups are handled in one lazy query.

    Parameters
    ----------
    frame
        The full population: a Polars DataFrame or LazyFrame, or a pandas
        DataFrame or PyArrow Table (converted once; the result is then an
        eager Polars DataFrame, see :mod:`polars_cumdev.method.frames`).
    by
        Column(s) defining the subpopulations: names, or expressions such as
        ``pl.col("ts").dt.truncate("1w")`` (one group per week), each named
        by its output name (:mod:`polars_cumdev.method.keys`); or a family of
        segments from :func:`polars_cumdev.segments`: every intersection is
        screened, with family-wise p-values
        (:mod:`polars_cumdev.multicalibration.screens`).
    score, response, weight
        Column names of S, R and W; ``weight=None`` weights rows equally.
        A list of covariates as ``score`` orders the rows along a Hilbert
        curve through them (:mod:`polars_cumdev.covariates.ordering`): the result
        then has a column ``ordering``, ``from_score`` / ``to_score`` are
        Hilbert ranks and ``from_<covariate>`` / ``to_<covariate>`` give the
        covariate values at both ends of the located stretch.
    variance
        ``"bernoulli"`` (31), ``"empirical"`` (32) or ``"auto"``: Bernoulli
        when every response is 0 or 1.
    engine
        ``"polars"`` (the lazy Polars plan), ``"kernel"`` (the compiled
        kernel of :mod:`polars_cumdev.kernel` after Polars' sort) or
        ``"auto"`` (the kernel from :data:`polars_cumdev.method.compiled.KERNEL_ROWS`
        rows on; see :mod:`polars_cumdev.method.compiled`). The results agree to
        1e-12.
    level
        Significance level of the located stretch
        (:mod:`polars_cumdev.method.findings`): the stretch columns are filled
        only for groups whose ``kuiper_q`` is at most ``level``; the others
        keep their statistics, with ``note`` saying "not significant: q = ...".

    Returns
    -------
    pl.LazyFrame
        One row per group: the ``by`` columns, then ``n``, ``n_scores``,
        ``weight``, ``kuiper``, ``ks``, ``delta`` (C_n), ``sigma``,
        ``kuiper_z``, ``ks_z``, ``kuiper_p``, ``ks_p`` (method.md 4),
        ``kuiper_log10p``, ``ks_log10p`` (finite where p underflows),
        ``kuiper_q``, ``ks_q`` (Benjamini-Hochberg over the groups), the
        located stretch ``from_score``, ``to_score``, ``share``,
        ``deviation`` (:mod:`polars_cumdev.method.location`; null when D <= 2
        sigma or when the group is not significant at ``level``), ``variance``
        and ``note`` (why a statistic or the stretch is null), ``p_method``
        (``"asymptotic"``; ``"simulated"``: 0/1 responses redrawn, or
        ``"resampled"``: other responses redrawn within the bins, where the
        asymptotic tail is not trusted; docs/method.md, "Valid at every size").
        Sorted by ``kuiper_z``, largest first.
    """
    # Segments exist only once their module is loaded: else no import of that package.
    family = sys.modules.get("polars_cumdev.multicalibration.family")
    if family is not None and isinstance(by, family.Segments):  # every intersection
        from polars_cumdev.multicalibration.screens import screen_segments

        if not isinstance(score, str):
            raise InvalidParameterError("`by=segments(...)` needs a score column, not covariates")
        compiled.check_engine(engine)
        return screen_segments(frame, by, score, response, weight, variance=variance, level=level)
    frame, score, ordering = resolve_score(frame, score, weight)
    prepared = prepare_screen(frame, by, score, response, weight, variance)
    keys = prepared.keys
    choice = compiled.choose(engine, frame)
    finite = {"labels": prepared.labels, "level": level, "simulated": True}
    if choice != "polars":
        summary = summary_node(prepared, choice, variance, level)
        summary = _finite(summary, prepared, _finite_sample, level)
        stats = normalize(summary, keys, None, **finite)
    else:
        binary = is_binary(prepared.frame, variance)
        rows, scale = rescale(prepared.gated())
        rows, texts = coded(rows, prepared.key_types)
        summary = polars_summary(sort_by_score(rows), keys, binary, prepared.key_types, texts)
        summary = _finite(summary, prepared, _finite_sample, level)
        stats = normalize(summary, keys, binary, scale=scale, **finite)
        stats = prepared.guarded(stats)
    return stats if ordering is None else ordering.located(stats)


def _finite(summary: pl.LazyFrame, prepared: Prepared, on: bool, level: float) -> pl.LazyFrame:
    """The summary with the finite-sample p-values of :mod:`~polars_cumdev.method.finite_groups`
    (null columns when ``on`` is false: the asymptotic values alone)."""
    if not on:
        return summary.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in SIMULATED)
    keys, types = prepared.keys, prepared.key_types
    return with_simulated(summary, prepared.frame, keys, types, level, screen=True)


@entry_point("score", "response", "weight")
def curve(
    frame: FrameLike,
    subpop: pl.Expr | str,
    score: Column | Sequence[Column],
    response: Column,
    weight: Column | None = None,
    *,
    variance: str = "auto",
    fraction: float = 1.0,
    engine: str = "auto",
    level: float = LEVEL,
) -> pl.LazyFrame:
    """The drill-down: cumulative differences of one subpopulation, point by point.

    Equation and remark numbers are those of M. Tygert, "Cumulative deviation
    of a subpopulation from the full population" (as in :func:`screen`).

    Parameters
    ----------
    frame
        The full population, as in :func:`screen` (Polars, pandas or PyArrow).
    subpop
        Boolean expression, or name of a boolean column, selecting the
        subpopulation.
    score, response, weight
        Column names of S, R and W. With a list of covariates as ``score``
        (Hilbert order, as in :func:`screen`) ``score`` is the Hilbert rank
        and the curve also has ``ordering`` and one column per covariate
        (its value at the point; null at the origin).
    variance
        As in :func:`screen`.
    fraction
        Remark 3's zoom q in (0, 1]: keep the first floor(n q) merged scores
        and renormalize (method.md 1.7).
    engine
        As in :func:`screen`: which engine merges the ties and finds the bins.
    level
        Significance level of the located stretch: ``located`` flags points
        only when the curve's own Kuiper p-value is at most ``level``
        (:mod:`polars_cumdev.method.findings`).

    Returns
    -------
    pl.LazyFrame
        An origin row (k = 0) and one row per merged score: ``k``, ``a``
        (A_k, equation (28)), ``k_over_n``, ``score`` (S'_k; null at the
        origin), ``cumdiff`` (C_k = F_k - Ft_k), ``full_mean`` (Rt_k, (26)),
        ``response_mean`` (R'_k), ``weight`` (W'_k) and ``sigma`` (the same
        on every row), ``variance_share`` (the share of sigma^2 accumulated
        by point k, 0 at the origin and 1 at the last point; see
        :func:`variance_share`) and ``located`` (whether the point lies in
        the screen's located stretch, :func:`polars_cumdev.method.location.flag_stretch`).
    """
    fraction = check_fraction(fraction)
    frame, score, ordering = resolve_score(frame, score, weight)
    lazy = as_lazy(frame)
    mask = resolve_mask(lazy, subpop)
    prepared = _prepare(lazy, score, response, weight, variance, carry=[mask.alias(nm.MEMBER)])
    label = selection_label(subpop)
    prepared.checks += mask_checks(mask, label)
    if fraction < 1.0:
        scores = pl.col(score).filter(mask)
        prepared.checks.append(zoom_check(scores, fraction, label))
    choice = compiled.choose(engine, frame)
    if choice == "polars":
        rows, scale = rescale(prepared.gated())
        points = polars_points(sort_by_score(rows)).join(scale, how="cross", maintain_order="left")
    else:
        points = points_node(prepared, choice, mask)
    accumulated = accumulate(points, [], fraction=fraction)
    bern, emp = sigma_terms()
    c_error, bern_error, emp_error = error_terms()
    c = pl.col(nm.CUMDIFF)
    binary = pl.col(nm.BINARY)
    with_sigma = accumulated.join(
        is_binary(prepared.frame, variance), how="cross", maintain_order="left"
    ).with_columns(
        chosen_sigma(ordered_sum(bern), ordered_sum(emp)).alias("sigma"),
        pl.col(nm.WEIGHT) / pl.col(SCALE),
        pl.col(nm.OVERFLOW).sum().alias(OVERFLOWS),
        variance_share(pl.when(binary).then(bern).otherwise(emp)),
    )
    flags = resolved(
        c.max().clip(lower_bound=0.0) - c.min().clip(upper_bound=0.0),
        c.abs().max(),
        pl.col("sigma"),
        ordered_sum(c_error),
        pl.when(binary).then(ordered_sum(bern_error)).otherwise(ordered_sum(emp_error)),
        pl.col(RMAX),
    )
    flagged = with_sigma.with_columns(
        flags.c_floor.alias(_RESOLVED), pl.when(flags.sigma).then(pl.col("sigma")).alias("sigma")
    )
    points = curve_frame(flagged, extra=(_RESOLVED, OVERFLOWS))
    checked = verdict(
        ("cumdiff", "sigma", "weight"),
        [],
        prepared.labels,
        resolved=_RESOLVED,
        overflows=OVERFLOWS,
    )
    points = flag_stretch(
        points.filter(checked), min_scores=MIN_SCORES["subpopulation"], level=level
    )
    points = points.select(CURVE_COLUMNS)
    points = prepared.guarded(points) if choice == "polars" else points
    return points if ordering is None else ordering.pointwise(points)
