"""Neighbouring rows of one group in a frame sorted by group, and the unit of rounding.

The comparison's steps look at the row before or after each block or point
of the same group; these helpers do that without a window per group.
"""

from __future__ import annotations

import polars as pl

from polars_cumdev.compare.columns import _G

__all__ = ["_U", "_neighbour", "_over"]

# A unit of rounding with a margin (twice 2^-53), for the error bounds below.
_U = 2.0**-52


def _over(expr: pl.Expr) -> pl.Expr:
    return expr.over(_G)


def _neighbour(expr: pl.Expr, offset: int) -> pl.Expr:
    """``expr`` on the row ``offset`` rows away if that row is in the same group, else null.

    The frame must hold each group's rows contiguously (it is sorted by
    group). A plain shift with a test on the group column is much cheaper than
    ``shift(...).over(group)`` when there are many groups. (At the two ends
    of the frame the shifted value is null anyway, whatever the test says.)
    """
    g = pl.col(_G)
    return pl.when(g.eq_missing(g.shift(offset))).then(expr.shift(offset))
