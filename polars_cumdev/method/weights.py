"""Weights in a safe range: an exact power-of-two rescaling, and the spread it can carry.

Every statistic of the method depends on the weights only through ratios:
a_k = W'_k / sum W' (25) of M. Tygert, "Cumulative deviation of a subpopulation
from the full population", the bin averages (26), the tie factor
sum W^2 / (sum W)^2 and the unbiasing factor u_k of (33). Multiplying all weights by a power of
two changes none of them, not even in the last bit (the products and quotients
of floats scale exactly), but it keeps every sum in range: a constant weight of
1e305 would otherwise overflow the total, and squares of weights beyond about
1e154 (or below 1e-154) overflow or underflow. :func:`rescale` divides the
weights by the power of two just above the largest weight, so the largest
becomes a number in [1/2, 1).

After that rescaling the sums can still fail in one way: a weight so much
smaller than the largest that its *square* underflows. The library refuses a
spread of more than :data:`RATIO_LIMIT` = 2^500 (about 3.3e150) between the
largest and the smallest weight (:func:`too_small`), which keeps every
rescaled weight and its square normal double-precision numbers. How finely
the bin sums resolve weights that differ by less than that is checked bin by
bin (see :func:`polars_cumdev.method.bins.bin_moments`).
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.method import _names as nm

__all__ = [
    "RATIO_LIMIT",
    "RATIO_LIMIT_LOG2",
    "SPREAD_MESSAGE",
    "rescale",
    "scale_factor",
    "too_small",
]

RATIO_LIMIT_LOG2 = 500
#: Largest ratio of the largest weight to the smallest that the library accepts.
RATIO_LIMIT = 2.0**RATIO_LIMIT_LOG2

SCALE = f"{nm.PREFIX}weight_scale"


def scale_factor(largest: pl.Expr) -> pl.Expr:
    """The power of two 2^-e that brings ``largest`` into [1/2, 1) (exactly representable).

    e = floor(log2(largest)) + 1, clipped so that 2^-e stays a normal double
    even for subnormal weights (which then land below 1/2, harmlessly).
    """
    exponent = (largest.log(2.0).floor() + 1.0).clip(-1000.0, 1020.0)
    return pl.lit(2.0, dtype=pl.Float64).pow(-exponent)


def rescale(frame: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The standardized rows with their weights rescaled, and the scale as a one-row frame.

    Parameters
    ----------
    frame
        Standardized rows (``_names.WEIGHT`` positive and finite).

    Returns
    -------
    tuple of pl.LazyFrame
        ``(rows, scale)``: ``rows`` is ``frame`` with ``WEIGHT`` multiplied
        by 2^-e (largest weight in [1/2, 1)); ``scale`` has one row and the
        column ``_names.PREFIX + "weight_scale"`` = 2^-e, by which outputs in
        the user's units (total weights) are divided. ``frame`` is cached so
        that both read it once.
    """
    frame = frame.cache()
    factor = scale_factor(pl.col(nm.WEIGHT).max())
    rows = frame.with_columns(pl.col(nm.WEIGHT) * factor)
    return rows, frame.select(factor.alias(SCALE))


def too_small(weight: pl.Expr) -> pl.Expr:
    """Number of weights smaller than the largest divided by :data:`RATIO_LIMIT`."""
    return (weight < weight.max() / RATIO_LIMIT).sum()


#: Message of the check built on :func:`too_small` (``{column}``, ``{count}``, ``{rows}``).
SPREAD_MESSAGE = (
    "weight column {column!r} has {{count}} value(s) (among {{rows}} rows) smaller than "
    f"the largest weight divided by 2^{RATIO_LIMIT_LOG2} (about {RATIO_LIMIT:.1e}): "
    "squares of such weight ratios cannot be carried in double precision; "
    "drop those rows or cap the spread of the weights"
)
