"""Class-wise calibration: one cumulative chart per class, side by side.

The curve frame of ``calibration_curve(..., kind="class-wise")`` stacks one
curve per class, told apart by its first column ``class``;
:func:`calibration_classes` draws each with :func:`polars_cumdev.charts.cumulative`
(its own sigma, triangle and located stretch) and sets them side by side, in
one row; the result joins other charts with ``|`` and ``&`` as any chart does.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from polars_cumdev.charts._data import as_frame, require
from polars_cumdev.charts.cumulative import cumulative
from polars_cumdev.errors import InvalidParameterError

__all__ = ["calibration_classes"]


def calibration_classes(
    curves: pl.DataFrame | pl.LazyFrame,
    *,
    width: int = 300,
    height: int = 260,
    **options: Any,
) -> alt.HConcatChart:
    """Cumulative calibration plots of every class of a class-wise curve frame.

    Parameters
    ----------
    curves
        Output of ``calibration_curve(..., kind="class-wise")``: the column
        ``class`` then the columns of one curve, curve after curve.
    width, height
        Size of each plotting area in pixels.
    **options
        Passed to :func:`polars_cumdev.charts.cumulative` for every class
        (e.g. ``band=0.05``, ``max_points``).

    Returns
    -------
    alt.HConcatChart
        One chart per class, in the order of the frame, each titled with its class.
    """
    frame = as_frame(curves, "class-wise curve")
    require(frame, ["class", "k", "a", "cumdiff", "sigma"], "class-wise curve")
    options.setdefault("y_label", "cumulative share of the class minus its probability")
    charts = [
        cumulative(
            frame.filter(pl.col("class") == name).drop("class"),
            subject=f"class {name}",
            kind="calibration",
            score_label=f"probability of {name}",
            width=width,
            height=height,
            **options,
        )
        for name in frame["class"].unique(maintain_order=True).to_list()
    ]
    if not charts:
        raise InvalidParameterError("the class-wise curve frame has no class to draw")
    return alt.hconcat(*charts)
