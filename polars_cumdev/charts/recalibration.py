"""The audit before and after a recalibration, side by side (funnel charts on one z scale).

:func:`before_after` draws two tables of
:func:`polars_cumdev.multicalibration.multicalibration` (the same family, on
the same held-out rows: the raw score, then the recalibrated one) with
:func:`polars_cumdev.charts.funnel`, on a shared vertical scale so that the
drop of every segment's z is seen at a glance.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from polars_cumdev.charts.funnel import funnel

__all__ = ["before_after"]


def before_after(
    before: pl.DataFrame | pl.LazyFrame,
    after: pl.DataFrame | pl.LazyFrame,
    *,
    level: float = 0.05,
    width: int = 360,
    height: int = 280,
) -> alt.HConcatChart:
    """The funnel charts of two audits, before and after, on one z scale.

    Parameters
    ----------
    before, after
        Multicalibration tables of the same family on the same rows: the
        scores before and after recalibration.
    level
        The family-wise level of both tables.
    width, height
        Size of each chart in pixels.

    Returns
    -------
    altair.HConcatChart
        The two funnels, left before, right after.
    """
    left = funnel(before, level=level, width=width, height=height, title="Before recalibration")
    right = funnel(after, level=level, width=width, height=height, title="After recalibration")
    return alt.hconcat(left, right).resolve_scale(y="shared")
