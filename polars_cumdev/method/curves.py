"""The drill-down frame: accumulated points as the tidy curve a chart draws.

Every ``*_curve`` function ends the same way: each point carries sigma (the
scale of the whole curve) and ``variance_share`` (the share of sigma^2
accumulated by then, for the noise envelope), the internal columns get their
public names, and the origin row (k = 0, A_0 = C_0 = 0) goes first
(:func:`curve_frame`). :func:`bernoulli_curve` is that ending for curves
whose sigma^2 is one sum of per-point terms (calibration, paired samples).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.location import flag_stretch
from polars_cumdev.method.prepare import Labels
from polars_cumdev.method.statistics import verdict
from polars_cumdev.method.sums import ordered_sum
from polars_cumdev.method.weights import SCALE

__all__ = ["curve_frame", "summed_sigma_curve", "variance_share"]


def variance_share(term: pl.Expr) -> pl.Expr:
    """``variance_share``: the share of sigma^2 that points 1..k contribute, at every point k.

    ``term`` is each point's contribution to sigma^2 (a null counts as 0),
    in the order of the points of one curve. Under the null hypothesis C_k
    has variance sigma^2 times this share, so plus and minus two sigma times
    its square root is the pointwise envelope of pure noise. Null where
    sigma is 0.
    """
    running = term.fill_null(0.0).cum_sum()
    total = running.last()
    # The last point holds all of sigma^2 by definition: 1 exactly, even when
    # an engine evaluates the running sum and its last value in other orders.
    last = pl.int_range(pl.len()) == pl.len() - 1
    # Multiplied by the reciprocal, written out: Polars divides a column by a
    # broadcast scalar either exactly or through a reciprocal depending on how
    # the rows are chunked, which changed the last bit with the thread count.
    ratio = pl.when(last).then(pl.lit(1.0)).otherwise((running * (1.0 / total)).clip(0.0, 1.0))
    share = pl.when(total > 0.0).then(ratio)
    return share.otherwise(None).alias("variance_share")


def curve_frame(accumulated: pl.LazyFrame, extra: Sequence[str] = ()) -> pl.LazyFrame:
    """Tidy drill-down frame from accumulated points carrying ``sigma`` and ``variance_share``.

    Renames the internal columns to the public ones of :data:`CURVE_COLUMNS`
    and puts the origin row (k = 0, A_0 = C_0 = 0) first. Columns named in
    ``extra`` are kept as they are (the origin row repeats their first value).
    """
    body = accumulated.select(
        pl.col(nm.K).alias("k"),
        pl.col(nm.A).alias("a"),
        (pl.col(nm.K) / pl.col(nm.N)).alias("k_over_n"),
        pl.col(nm.SCORE).alias("score"),
        pl.col(nm.CUMDIFF).alias("cumdiff"),
        pl.col(nm.REFERENCE).alias("full_mean"),
        pl.col(nm.RESPONSE).alias("response_mean"),
        pl.col(nm.WEIGHT).alias("weight"),
        pl.col("sigma"),
        pl.col("variance_share"),
        *extra,
    )
    origin = body.select(
        pl.lit(0, dtype=pl.Int64).alias("k"),
        pl.lit(0.0).alias("a"),
        pl.lit(0.0).alias("k_over_n"),
        pl.lit(None, dtype=pl.Float64).alias("score"),
        pl.lit(0.0).alias("cumdiff"),
        pl.lit(None, dtype=pl.Float64).alias("full_mean"),
        pl.lit(None, dtype=pl.Float64).alias("response_mean"),
        pl.lit(None, dtype=pl.Float64).alias("weight"),
        pl.col("sigma").first(),
        pl.lit(0.0).alias("variance_share"),
        *[pl.col(c).first() for c in extra],
    )
    return pl.concat([origin, body]).sort("k")


def summed_sigma_curve(
    accumulated: pl.LazyFrame,
    scale: pl.LazyFrame,
    term: pl.Expr,
    labels: Labels,
    min_scores: int,
    *,
    reference: pl.Expr | None = None,
    level: float = LEVEL,
) -> pl.LazyFrame:
    """The curve of points whose sigma^2 is the sum of ``term`` over the points.

    Parameters
    ----------
    accumulated
        One curve's accumulated points (:func:`polars_cumdev.method.accumulate.accumulate`),
        weights in the units of ``scale`` (:func:`polars_cumdev.method.weights.rescale`).
    scale
        The one-row frame of the weights' scale: ``weight`` is reported in
        the user's units.
    term
        Each point's contribution to sigma^2 ((31)-(32) of M. Tygert,
        "Cumulative deviation of a subpopulation from the full population", or
        its (50) for calibration; the paired estimator of ``paired-and-covariates.md``
        section 1).
    labels
        How a statistic found not finite names the columns.
    min_scores
        Fewest points for which the located stretch is flagged
        (:data:`polars_cumdev.method.normalization.MIN_SCORES`).
    reference
        What ``full_mean`` reports, when the accumulation left no reference
        column (calibration: the score itself).
    level
        Significance level of the located stretch (:func:`flag_stretch`).
    """
    extra = [] if reference is None else [reference.alias(nm.REFERENCE)]
    with_sigma = accumulated.join(scale, how="cross", maintain_order="left").with_columns(
        ordered_sum(term).clip(lower_bound=0.0).sqrt().alias("sigma"),
        *extra,
        pl.col(nm.WEIGHT) / pl.col(SCALE),
        variance_share(term),
    )
    checked = verdict(("cumdiff", "sigma", "weight"), [], labels)
    return flag_stretch(curve_frame(with_sigma).filter(checked), min_scores=min_scores, level=level)
