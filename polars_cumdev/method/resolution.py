"""Rounding: which statistics double precision resolves, and the finiteness check.

The statistics layers carry, beside every sum, a bound of its rounding error
(:func:`polars_cumdev.method.sigma_terms.error_terms`). This module turns those
bounds into decisions: :func:`resolved` says whether C (hence D, G and C_n)
and sigma are known well enough to report, and :func:`verdict` raises a
clear error, naming the column to blame, when a statistic is not finite.
The notes explaining a null statistic are here too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import polars as pl

from polars_cumdev.errors import InvalidValuesError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.prepare import Labels

__all__ = [
    "FLOOR",
    "RESOLUTION",
    "ROUNDING_LEVEL",
    "Resolved",
    "merged_error",
    "resolved",
    "uneven_means",
    "unresolved_sigma",
    "verdict",
    "verdict_check",
]

#: A statistic is reported only when its proven error bound is below this
#: share of its scale: 2^-20, about 1e-6. The bound is a worst case (every
#: rounding adding up the same way); on ordinary data the statistics agree
#: with exact arithmetic to about 1e-15, and a bound near 1e-6 arises only
#: when the weights or responses leave double precision little to spare.
RESOLUTION = 2.0**-20
#: ... or, for C, below this share of the largest |response| (all of D, G,
#: C_n and sigma then being at the level of rounding, z is not reported).
FLOOR = 2.0**-40
_VERDICT = f"{nm.PREFIX}verdict"


def verdict(
    columns: Sequence[str],
    keys: Sequence[str],
    labels: Labels,
    *,
    resolved: str | None = None,
    overflows: str | None = None,
) -> pl.Expr:
    """A column that is true on every row, or raises when a statistic is not finite.

    Evaluated on a small frame (one row per group, or the points of one
    curve) seen whole. It raises :class:`~polars_cumdev.errors.InvalidValuesError`
    when one of ``columns`` holds NaN or an infinity where it is not null. A
    column whose name ends in ``weight`` is blamed on the weights, the others
    on the responses: after the exact rescaling of the weights
    (:mod:`polars_cumdev.method.weights`), only values too large to be summed can
    make a statistic non-finite.

    Parameters
    ----------
    columns
        Float columns that must be finite.
    keys
        Columns naming the group of a row in the message.
    labels
        How the message names the weight and response columns.
    resolved
        For a drill-down curve, whose cumulative differences are all or
        nothing: a boolean column (the first result of :func:`resolved`
        over the curve) that must be true, else the error says the weights
        are too uneven (checked after ``overflows``, before ``columns``).
    overflows
        A column counting bins whose sums overflowed: any is blamed on the
        responses (checked first).
    """
    extra = [c for c in (resolved, overflows) if c]
    check = verdict_check(columns, keys, labels, resolved=resolved, overflows=overflows)

    def checked(batch: pl.Series) -> pl.Series:
        check(batch.struct.unnest())
        return pl.Series(_VERDICT, [True] * batch.len(), dtype=pl.Boolean)

    return (
        pl.struct([*keys, *columns, *extra])
        .map_batches(checked, return_dtype=pl.Boolean)
        .alias(_VERDICT)
    )


def verdict_check(
    columns: Sequence[str],
    keys: Sequence[str],
    labels: Labels,
    *,
    resolved: str | None = None,
    overflows: str | None = None,
) -> Callable[[pl.DataFrame], None]:
    """The function :func:`verdict`'s column runs on the frame it sees whole: it raises
    as :func:`verdict` says, or returns None. Called directly on a frame in memory
    (one small table: no query around it), it is the same check."""

    def check(rows: pl.DataFrame) -> None:
        if overflows and (rows.get_column(overflows).sum() or 0) > 0:
            bad = rows.get_column(overflows).fill_null(0) > 0
            first = ", ".join(f"{k} = {rows.filter(bad).get_column(k)[0]!r}" for k in keys)
            raise InvalidValuesError(
                f"{labels.response}: its values are too large for the sums of the bins (and "
                f"of their squares) in double precision{f' (first: {first})' if first else ''}; "
                "rescale the column"
            )
        if resolved and not rows.get_column(resolved).fill_null(True).all():
            raise InvalidValuesError(
                f"{labels.weight}: the weights are too uneven for double precision to resolve "
                "this curve's bin averages (bins of few light rows behind running totals of "
                "much heavier ones)"
            )
        # Read by NumPy, no query (a null reads as NaN: told apart only where there are
        # nulls); the failing column is named below.
        flagged = [_not_finite(rows.get_column(n)) for n in columns]
        for name, any_bad in zip(columns, flagged, strict=True):
            if not any_bad:
                continue
            column = rows.get_column(name)
            bad = column.is_not_null() & ~column.is_finite()
            if bad.any():
                what = labels.weight if name.endswith("weight") else labels.response
                first = ", ".join(f"{k} = {rows.filter(bad).get_column(k)[0]!r}" for k in keys)
                raise InvalidValuesError(
                    f"{what}: {name} is not a finite double in {int(bad.sum())} row(s) of the "
                    f"result{f' (first: {first})' if first else ''}; its values are too large "
                    "to be summed in double precision: rescale the column"
                )

    return check


def _not_finite(column: pl.Series) -> bool:
    """Whether ``column`` holds NaN or an infinity where it is not null."""
    bad = ~np.isfinite(column.cast(pl.Float64).to_numpy())
    if column.null_count():
        bad &= ~column.is_null().to_numpy()
    return bool(bad.any())


class Resolved(NamedTuple):
    """Which statistics of a group double precision resolves (see :func:`resolved`)."""

    c: pl.Expr  # D, G and C_n are right to RESOLUTION of the scale z is read on
    c_floor: pl.Expr  # ... or at least to FLOOR of the largest |response|
    sigma: pl.Expr  # sigma is right to RESOLUTION


def resolved(
    kuiper: pl.Expr,
    ks: pl.Expr,
    sigma: pl.Expr,
    c_error: pl.Expr,
    sigma2_error: pl.Expr,
    rmax: pl.Expr,
) -> Resolved:
    """Whether C (hence D, G, C_n) and sigma are known well enough to report.

    C is resolved when twice the bound of its error is below
    :data:`RESOLUTION` times the largest of D, G and sigma (the scale z is
    read on); failing that, it is still right in absolute terms when the
    bound is below :data:`FLOOR` times the largest |R| (``rmax``), which is
    how a group that deviates by exactly nothing is reported. sigma is
    resolved when the bound of sigma^2's error is below RESOLUTION times
    sigma^2. A bound of 0 resolves trivially.
    """
    scale = pl.max_horizontal(kuiper, ks, sigma)
    finite = c_error.is_finite() & scale.is_finite()
    c_ok = (c_error == 0.0) | (finite & (2.0 * c_error <= RESOLUTION * scale))
    c_floor = c_ok | (finite & (2.0 * c_error <= FLOOR * rmax))
    sigma_ok = (sigma2_error == 0.0) | (
        sigma2_error.is_finite() & (sigma2_error <= RESOLUTION * sigma * sigma)
    )
    return Resolved(c_ok, c_floor, sigma_ok)


def merged_error(magnitude: pl.Expr, exact: pl.Expr | None = None) -> pl.Expr:
    """A bound of the rounding error of a merged point's average of responses.

    A tie of m rows (``_names.ROWS``) is averaged as sum(W R) / sum(W), one
    value at a time (:func:`polars_cumdev.method.ties.merge_ties`): its error
    is below (m + 3) units of 2^-52 times the largest |R| of the tie, which
    ``magnitude`` (e.g. the largest |R| of the data) bounds. A
    single row keeps its response exactly: 0; so does a point where ``exact``
    is true (e.g. the tie's rows all agree with what the average is compared
    with, so that both sides are the same arithmetic on the same values).

    Analyses without bins (calibration of predicted means, paired samples)
    sum a_k times these bounds into the bound of C's error and propagate them
    into sigma^2's, so that :func:`resolved` judges them as it judges the
    screen: averages that agree except for rounding (responses 0.2 and 0.4 in
    every tie of predictions 0.3) come out unresolved, not as a z-score of
    rounding noise.
    """
    rows = pl.col(nm.ROWS)
    inexact = rows > 1 if exact is None else (rows > 1) & ~exact
    return pl.when(inexact).then((rows + 3).cast(pl.Float64) * 2.0**-52 * magnitude).otherwise(0.0)


def uneven_means(labels: Labels) -> str:
    return (
        f"{labels.weight}: the weights are too uneven for double precision to resolve this "
        "group's bin averages (bins of few light rows behind running totals of much heavier "
        "ones); D, G and sigma are not reported"
    )


def unresolved_sigma(labels: Labels) -> str:
    weights = (
        f" or, in {labels.weight}, one weight outweighs the rest of its bin or tie by about "
        "1e16 or more"
        if labels.weight.startswith("weight column")
        else ""
    )
    return (
        "sigma is not resolved in double precision (the spread of the responses within some "
        f"bins or tied scores is lost in rounding{weights}): z undefined"
    )


ROUNDING_LEVEL = "D, G and sigma are all at the level of rounding errors: z undefined"
