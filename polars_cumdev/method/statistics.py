"""Stage 4: scalar statistics per group (method.md 1.5-1.6 and 4; equations (12)-(13), (31)-(32)).

Equation numbers are those of M. Tygert, "Cumulative deviation of a
subpopulation from the full population".

From the accumulated points of :func:`polars_cumdev.method.accumulate.accumulate`
this stage computes, for every group at once, the Kuiper range D, the
Kolmogorov-Smirnov maximum G, the overall deviation C_n and the sums of the
scale sigma of random fluctuations (:func:`summarize`), and each group's
located stretch (:func:`with_location`). The second half, from those to z,
p- and q-values, notes and the decision, is
:mod:`polars_cumdev.method.normalizing` (:func:`normalize`, importable from
here too, as are the columns and notes the analyses read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.keys import join_on_keys
from polars_cumdev.method.location import (
    THRESHOLD,
    locate,
    threshold,
)
from polars_cumdev.method.normalization import MIN_SCORES, normalized
from polars_cumdev.method.normalizing import (
    NOT_LOCATED,
    SIGMA_ZERO,
    TOO_SMALL,
    UNOPTIMIZED,
    normalize,
)
from polars_cumdev.method.prepare import schema_of
from polars_cumdev.method.resolution import (
    FLOOR,
    RESOLUTION,
    Resolved,
    resolved,
    verdict,
)
from polars_cumdev.method.sigma_terms import error_terms, sigma_terms
from polars_cumdev.method.significance import benjamini_hochberg, pvalue, pvalue_columns
from polars_cumdev.method.summary_columns import (
    C_ERROR,
    FACTS_SCHEMA,
    OVERFLOWS,
    RMAX,
    SIGMA_B,
    SIGMA_B_ERROR,
    SIGMA_E,
    SIGMA_E_ERROR,
    STATISTIC_COLUMNS,
    SUMMARY_SCHEMA,
)
from polars_cumdev.method.sums import ordered_sum

__all__ = [
    "C_ERROR",
    "FACTS_SCHEMA",
    "FLOOR",
    "MIN_SCORES",
    "NOT_LOCATED",
    "OVERFLOWS",
    "RESOLUTION",
    "RMAX",
    "SIGMA_B",
    "SIGMA_B_ERROR",
    "SIGMA_E",
    "SIGMA_E_ERROR",
    "SIGMA_ZERO",
    "STATISTIC_COLUMNS",
    "SUMMARY_SCHEMA",
    "TOO_SMALL",
    "UNOPTIMIZED",
    "Resolved",
    "Variance",
    "benjamini_hochberg",
    "check_variance",
    "is_binary",
    "normalize",
    "normalized",
    "pvalue",
    "pvalue_columns",
    "resolved",
    "summarize",
    "verdict",
    "with_location",
]

Variance = Literal["auto", "bernoulli", "empirical"]


def check_variance(variance: str) -> str:
    """Validate the ``variance`` argument ("auto", "bernoulli" or "empirical")."""
    if variance not in ("auto", "bernoulli", "empirical"):
        raise InvalidParameterError(
            f"`variance` must be 'auto', 'bernoulli' or 'empirical', got {variance!r}"
        )
    return variance


def is_binary(full: pl.LazyFrame, variance: str) -> pl.LazyFrame:
    """One-row frame: whether the Bernoulli formula (31) applies, and the responses' scale.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    "auto" chooses Bernoulli when every response of the full population is
    0 or 1. The column ``RMAX`` holds the largest |R|, the scale against
    which :func:`resolved` judges an absolute error of C.
    """
    r = pl.col(nm.RESPONSE)
    if variance == "auto":
        flag = ((r == 0.0) | (r == 1.0)).all()
    else:
        flag = pl.lit(variance == "bernoulli")
    return full.select(flag.alias(nm.BINARY), r.abs().max().alias(RMAX))


def summarize(
    accumulated: pl.LazyFrame,
    keys: Sequence[str],
    *,
    reference: str = nm.REFERENCE,
    empirical: bool = True,
    bernoulli_term: pl.Expr | None = None,
    errors: tuple[pl.Expr, pl.Expr] | None = None,
) -> pl.LazyFrame:
    """Per-group Kuiper D (13), Kolmogorov-Smirnov G (12), C_n and both sigma candidates.

    Equation numbers are those of M. Tygert, "Cumulative deviation of a
    subpopulation from the full population".

    Parameters
    ----------
    accumulated
        Output of :func:`polars_cumdev.method.accumulate.accumulate`.
    keys
        Grouping columns; one output row per group.
    reference
        Column used in the Bernoulli variance p(1 - p): Rt_k, or the score for
        calibration.
    empirical
        Whether the points carry ``BIN_VARIANCE`` for (32); calibration has
        only the Bernoulli form (method.md 2).
    bernoulli_term
        Each point's term of the sigma^2 that :func:`normalize` takes for
        binary responses; by default (31)'s, from :func:`sigma_terms`.
        Paired samples pass theirs (paired-and-covariates 1, step 4).
    errors
        Without bins (``empirical`` false): each point's terms whose sums
        bound the rounding errors of C and of the sigma^2 of
        ``bernoulli_term`` (:func:`polars_cumdev.method.resolution.merged_error`),
        so that :func:`resolved` judges these analyses as it judges the screen;
        none: bounds of 0 (the point's sums are exact).

    Returns
    -------
    pl.LazyFrame
        Keys, ``n`` (rows), ``n_scores`` (merged points), ``weight`` (total
        weight, in the units of the weights given), ``kuiper``, ``ks``,
        ``delta`` and internal columns holding sigma^2 under (31) and under
        (32) (chosen by :func:`normalize`) and the bounds of their rounding
        errors (:func:`error_terms`; zero without bins).
    """
    c = pl.col(nm.CUMDIFF)
    bern, emp = sigma_terms(reference)
    if bernoulli_term is not None:
        bern = bernoulli_term
    if empirical:
        errors = [ordered_sum(t) for t in error_terms()]
        overflows = pl.col(nm.OVERFLOW).sum()
    else:
        given = [ordered_sum(e) for e in errors] if errors else [pl.lit(0.0)] * 2
        errors = [*given, pl.lit(0.0)]
        overflows = pl.lit(0)
    bounds = [
        e.alias(n) for e, n in zip(errors, (C_ERROR, SIGMA_B_ERROR, SIGMA_E_ERROR), strict=True)
    ]
    aggs = [
        pl.col(nm.ROWS).sum().cast(pl.Int64).alias("n"),
        pl.len().cast(pl.Int64).alias("n_scores"),
        ordered_sum(pl.col(nm.WEIGHT)).alias("weight"),
        (c.max().clip(lower_bound=0.0) - c.min().clip(upper_bound=0.0)).alias("kuiper"),
        c.abs().max().alias("ks"),
        c.get(pl.col(nm.K).arg_max()).alias("delta"),
        ordered_sum(bern).alias(SIGMA_B),
        (ordered_sum(emp) if empirical else pl.lit(None, dtype=pl.Float64)).alias(SIGMA_E),
        *bounds,
        overflows.cast(pl.Int64).alias(OVERFLOWS),
    ]
    if keys:
        return accumulated.group_by(keys).agg(aggs)
    return accumulated.select(aggs)


def with_location(
    summary: pl.LazyFrame,
    points: pl.LazyFrame,
    keys: Sequence[str],
    binary: pl.LazyFrame,
    types: Mapping[str, pl.DataType] | None = None,
) -> pl.LazyFrame:
    """:func:`summarize`'s output with each group's located stretch (:mod:`location`).

    ``points`` are the accumulated points ``summary`` was computed from;
    ``binary`` the output of :func:`is_binary` (which sigma sets T = D - 2 sigma);
    ``types`` the keys' dtypes in ``points``, when the caller knows them.
    """
    summary, points = summary.cache(), points.cache()
    sigma2 = pl.when(pl.col(nm.BINARY)).then(pl.col(SIGMA_B)).otherwise(pl.col(SIGMA_E))
    thresholds = summary.join(binary, how="cross", maintain_order="left").select(
        *keys, threshold(pl.col("kuiper"), sigma2).alias(THRESHOLD)
    )
    # (the keys' types, as in the summary: one look-up for both, or none)
    schema = pl.Schema(types) if types is not None else schema_of(points)
    found = locate(points, keys, thresholds, schema)
    if keys:
        return join_on_keys(summary, found, keys, schema)
    return summary.join(found, how="cross")
