"""Stage 3: weighted accumulation of the differences (method.md 1.4 and 1.7; equations (25)-(28)).

Equation numbers are those of M. Tygert, "Cumulative deviation of a
subpopulation from the full population".

The same accumulation serves every comparison in the library: a merged point
carries its weight W'_k, its observed response R'_k and a *reference* value
(the full-population average Rt_k for a subpopulation, the score itself for
calibration); the cumulative difference is C_k = sum_{j<=k} a_j (R'_j - ref_j)
with a_j = W'_j / sum W'.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check
from polars_cumdev.method.sums import ordered_sum

__all__ = ["accumulate", "check_fraction", "per_group", "zoom_check"]


def check_fraction(fraction: float) -> float:
    """Validate Remark 3's zoom fraction q, 0 < q <= 1."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise InvalidParameterError(f"`fraction` must be a number in (0, 1], got {fraction!r}")
    if not 0.0 < float(fraction) <= 1.0:
        raise InvalidParameterError(f"`fraction` must lie in (0, 1], got {fraction!r}")
    return float(fraction)


def zoom_check(scores: pl.Expr, fraction: float, label: str) -> Check:
    """Lazy check that Remark 3's zoom keeps at least one point: floor(n q) >= 1.

    ``scores`` evaluates to the scores of the selection being drawn; n is the
    number of distinct ones (merged points, method.md 1.1).
    """
    n = scores.n_unique()
    return Check(
        pl.when((n.cast(pl.Float64) * fraction).floor() < 1).then(n).otherwise(0),
        f"`fraction`={fraction:g} keeps no point of {label}: it has {{count}} distinct "
        "score(s) and the zoom keeps floor(n * fraction) of them; use a larger fraction",
        InvalidParameterError,
    )


def per_group(expr: pl.Expr, keys: Sequence[str]) -> pl.Expr:
    """``expr`` evaluated within each group of ``keys`` (over the whole frame without keys)."""
    return expr.over(keys) if keys else expr


def accumulate(
    points: pl.LazyFrame,
    keys: Sequence[str] = (),
    *,
    reference: str = nm.REFERENCE,
    fraction: float = 1.0,
) -> pl.LazyFrame:
    """Cumulative weights A_k and cumulative differences C_k within each group.

    Parameters
    ----------
    points
        Merged points sorted by keys and score, with ``WEIGHT`` (W'_k),
        ``RESPONSE`` (R'_k) and the ``reference`` column.
    keys
        Grouping columns.
    reference
        Column subtracted from the response: ``REFERENCE`` (Rt_k, equation (26)
        of M. Tygert, "Cumulative deviation of a subpopulation from the full
        population") or ``SCORE`` (calibration, method.md 2).
    fraction
        Remark 3's zoom q: keep the first floor(n q) points of each group and
        renormalize the weights over them (method.md 1.7). Groups left with
        no point are dropped here; callers report them.

    Returns
    -------
    pl.LazyFrame
        ``points`` restricted to the zoomed domain, plus ``K`` (1..n), ``N``
        (points in the domain), ``A_STEP`` (a_k), ``A`` (A_k) and ``CUMDIFF``
        (C_k).
    """
    fraction = check_fraction(fraction)
    k = per_group(pl.int_range(1, pl.len() + 1, dtype=pl.Int64), keys)
    out = points.with_columns(k.alias(nm.K))
    if fraction < 1.0:
        total = per_group(pl.len(), keys)
        out = out.filter(pl.col(nm.K) <= (total.cast(pl.Float64) * fraction).floor())
    total = per_group(ordered_sum(pl.col(nm.WEIGHT)), keys)
    step = pl.col(nm.WEIGHT) / total
    out = out.with_columns(step.alias(nm.A_STEP), per_group(pl.len(), keys).alias(nm.N))
    diff = pl.col(nm.A_STEP) * (pl.col(nm.RESPONSE) - pl.col(reference))
    # A_k as (sum of W'_j up to k) / W: exact for integer weights (as in the
    # kernel), so equal shares of equal-weight stretches compare equal.
    return out.with_columns(
        (per_group(pl.col(nm.WEIGHT).cum_sum(), keys) / total).alias(nm.A),
        per_group(diff.cum_sum(), keys).alias(nm.CUMDIFF),
    )
