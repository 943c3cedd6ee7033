"""Stage 2a: the full population's running sums, and the rounding of their differences.

Every bin of :mod:`polars_cumdev.method.bins` is a difference of two running
sums over the full population sorted by score (method.md 1.3, equations
(6)-(7), (26) of M. Tygert, "Cumulative deviation of a subpopulation from the
full population"); the sums are compensated (:mod:`polars_cumdev.method.sums`)
and carry the running maxima of their error terms, so that
:func:`difference_error` bounds the rounding of any such difference.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_cumdev.method import _names as nm
from polars_cumdev.method.sums import boundary, running, with_running_sums

__all__ = [
    "COUNT_SUMS",
    "FLOAT_SUMS",
    "MAXIMA",
    "PREFIX_SCORE",
    "SUMS",
    "difference_error",
    "full_population_prefix",
    "response_centre",
    "running_sums",
]

# Running sums carried from the full population to the bins. The float sums
# (W, W^2, W r, W r^2) come with their accumulated rounding errors ("_err"),
# the counts (rows, rows with R = 0, rows with R = 1) are exact integers.
FLOAT_SUMS = ("_pw", "_pww", "_pwr", "_pwrr")
COUNT_SUMS = ("_pn", "_pn0", "_pn1")
SUMS = (*FLOAT_SUMS, *(f"{c}_err" for c in FLOAT_SUMS), *COUNT_SUMS)
# Running maxima carried beside them (never differenced): the largest |error
# sum| of each float sum so far, which bounds the rounding of any difference
# of the pair (see :func:`difference_error`).
MAXIMA = tuple(f"{c}_lomax" for c in FLOAT_SUMS)

_EPS = 2.0**-52
PREFIX_SCORE = "_pscore"  # the score column of a running-sums table
_CENTRE = "_centre"


def running_sums(rows: pl.LazyFrame, centre: pl.Expr) -> pl.LazyFrame:
    """The running sums :data:`SUMS` over ``rows``, in their order.

    Responses are centred on ``centre`` (a scalar expression, see
    :func:`full_population_prefix`). Each float running sum comes with the
    running sum of its rounding errors (:func:`polars_cumdev.method.sums.with_running_sums`),
    so that a *difference* of two running totals -- a bin's sum -- is
    accurate relative to the bin rather than to the whole population. The
    counts are exact integers.

    Parameters
    ----------
    rows
        Standardized rows (``SCORE``, ``RESPONSE``, ``WEIGHT``).
    centre
        Scalar expression evaluated on ``rows`` once.

    Returns
    -------
    pl.LazyFrame
        ``_pscore`` (the score), the running sums :data:`SUMS` and running
        maxima :data:`MAXIMA` up to and including each row, and ``_centre``
        (the value of ``centre``).
    """
    w = pl.col(nm.WEIGHT)
    response = pl.col(nm.RESPONSE)
    r = response - pl.col(_CENTRE)
    terms = {"_pw": w, "_pww": w * w, "_pwr": w * r, "_pwrr": w * r * r}
    columns = rows.with_columns(centre.alias(_CENTRE)).select(
        pl.col(nm.SCORE).alias(PREFIX_SCORE),
        pl.col(_CENTRE),
        w,
        response,
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("_pn"),
        running((response == 0.0).cast(pl.Int64), dtype=pl.Int64()).alias("_pn0"),
        running((response == 1.0).cast(pl.Int64), dtype=pl.Int64()).alias("_pn1"),
    )
    maxima = [running(pl.col(f"{c}_err").abs(), "max").alias(f"{c}_lomax") for c in FLOAT_SUMS]
    return (
        with_running_sums(columns, terms)
        .with_columns(maxima)
        .select(PREFIX_SCORE, *SUMS, *MAXIMA, _CENTRE)
    )


def difference_error(
    total: Callable[[str], pl.Expr], lomax: Callable[[str], pl.Expr]
) -> Callable[[str], pl.Expr]:
    """Bounds of the rounding error of bin sums taken as differences of running-sum pairs.

    A bin's sum of a float running sum X is (X_hi - X_lo) + (err_hi - err_lo):
    the pair (X, err) holds each running total exactly but for the rounding
    of the additions to ``err`` itself, each at most half an ulp of the
    running ``err``. Over the rows of a bin they add up to at most
    2^-53 * rows * max|err|; the two subtractions and the final addition add
    a relative 2^-53 each. The bound returned is twice the sum of those.

    Parameters
    ----------
    total
        As in :func:`bin_moments`: the bin's difference of a running sum.
    lomax
        Gives, for a float sum's name, an upper bound of |err| over the rows
        up to the bin's upper end (its running maximum there).

    Returns
    -------
    callable
        Name of a float sum -> expression bounding the error of its bin total.
    """
    rows = total("_pn").cast(pl.Float64)

    def error(name: str) -> pl.Expr:
        spread = total(name).abs() + total(f"{name}_err").abs()
        return _EPS * (rows * lomax(name) + spread)

    return error


def response_centre(response: pl.Expr) -> pl.Expr:
    """The centre c of the responses: round(2 mean R) / 2, or R itself when every R is one value.

    A multiple of 1/2 keeps 0/1 responses with integer weights exact
    (:func:`full_population_prefix`). When every response is the same value,
    that value is the centre: every centred response is then 0 exactly, and
    so are the deviations, D and sigma, where a constant like 0.3 centred on
    0.5 left rounding noise (a Kuiper of 1e-17 and sigma "not resolved").
    Null on no rows.
    """
    halves = (response.mean() * 2.0).round() / 2.0
    return pl.when(response.min() == response.max()).then(response.min()).otherwise(halves)


def full_population_prefix(full: pl.LazyFrame, centre: pl.Expr | None = None) -> pl.LazyFrame:
    """Running sums of the full population at each distinct score, in increasing order.

    Responses are centred on c before squaring: by default c = round(2 mean) / 2
    of ``full`` (:func:`response_centre`; the value itself when all responses
    are one). The bin mean and variance are unchanged mathematically, the
    centring keeps the differences of running sums accurate when responses
    are far from zero, and because c is a multiple of 1/2, 0/1 responses with
    integer weights still give exact sums. The float sums are compensated
    (:func:`running_sums`). Only the last row of each run of equal scores is
    kept: a bin always takes whole runs, so those rows are all a lookup needs.

    Parameters
    ----------
    full
        Standardized rows of the full population (``SCORE``, ``RESPONSE``,
        ``WEIGHT``), sorted by score (:func:`polars_cumdev.method.ties.sort_by_score`).
    centre
        Scalar expression for c, in place of the default (the partitioned
        screen passes one centre shared by all its ranges).

    Returns
    -------
    pl.LazyFrame
        One row per distinct score, sorted: ``_pscore`` (the score), the
        running sums :data:`SUMS` up to and including the last row with that
        score, and ``_centre`` (c).
    """
    if centre is None:
        centre = response_centre(pl.col(nm.RESPONSE))
    return running_sums(full, centre).filter(boundary([PREFIX_SCORE], -1))
