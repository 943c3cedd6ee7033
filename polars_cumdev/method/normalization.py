"""When the normalized statistics are reported: one rule for the tables and the displays.

z = D / sigma (and G / sigma) is reported for a group when its curve has
enough points and sigma is positive. The tables
(:func:`polars_cumdev.method.statistics.normalize`), the located stretch of the
curve frames (:func:`polars_cumdev.method.location.flag_stretch`), the cumulative
chart (its subtitle, triangle and significance band) and the CLI's curve
summary all ask :func:`normalized`, so a group never has z in one place and
not in another.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import overload

import polars as pl

__all__ = ["MIN_SCORES", "normalized"]

#: Fewest merged scores (points of the curve) for which the normalized
#: statistics are reported, by kind of comparison: a subpopulation against
#: the full population, and paired samples, need two (one point says nothing
#: about a trend); calibration and the comparison of two subpopulations need
#: only sigma > 0 (method.md 2 and 3). The tables, the curve frames' located stretch, the
#: charts and the CLI all apply this one rule, through :func:`normalized`.
MIN_SCORES: Mapping[str, int] = MappingProxyType(
    {"subpopulation": 2, "calibration": 1, "compare": 1, "paired": 2}
)


@overload
def normalized(n_scores: pl.Expr, sigma: pl.Expr, min_scores: int) -> pl.Expr: ...
@overload
def normalized(n_scores: int, sigma: float | None, min_scores: int) -> bool: ...
def normalized(
    n_scores: pl.Expr | int, sigma: pl.Expr | float | None, min_scores: int
) -> pl.Expr | bool:
    """Whether z = D / sigma (and G / sigma) is defined: enough points and sigma > 0.

    The one rule shared by :func:`statistics.normalize` (the tables) and the displays
    (the chart's subtitle, triangle and band, the CLI's curve summary).
    That function further nulls z where rounding leaves a statistic
    unresolved (:func:`polars_cumdev.method.resolution.resolved`).

    Parameters
    ----------
    n_scores
        The number of merged scores (points beyond the origin): an
        expression, or a plain int.
    sigma
        The scale of random fluctuations (method.md 1.6, (31)-(32) of M. Tygert,
        "Cumulative deviation of a subpopulation from the full population"): an
        expression, or a plain float (``None`` for unknown).
    min_scores
        Fewest points required, :data:`MIN_SCORES` of the kind of comparison.

    Returns
    -------
    polars.Expr or bool
        An expression when either input is one (null sigma gives false),
        else a bool.
    """
    if isinstance(n_scores, pl.Expr) or isinstance(sigma, pl.Expr):
        count = n_scores if isinstance(n_scores, pl.Expr) else pl.lit(n_scores)
        scale = sigma if isinstance(sigma, pl.Expr) else pl.lit(sigma, dtype=pl.Float64)
        return ((count >= min_scores) & scale.is_finite() & (scale > 0.0)).fill_null(False)
    if sigma is None or not math.isfinite(sigma):
        return False
    return n_scores >= min_scores and sigma > 0.0
