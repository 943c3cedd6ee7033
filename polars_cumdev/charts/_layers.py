"""Fixed layers of the plot of cumulative differences: the triangle and the axis-only layers."""

from __future__ import annotations

from typing import Any

import altair as alt

from polars_cumdev.charts import _style

__all__ = ["TRIANGLE_APEX", "axis_layer", "triangle"]

#: Horizontal position of the triangle's apex, as a fraction of the [0, 1] span.
TRIANGLE_APEX = 1.0 / 40.0


def triangle(sigma: float, y_axis: alt.Axis) -> list[alt.Chart]:
    """Fill and outline of the triangle: vertical side from -2 sigma to 2 sigma at a = 0."""
    fill = (
        alt.Chart(
            alt.InlineData(
                values=[
                    {"a": 0.0, "low": -2.0 * sigma, "high": 2.0 * sigma},
                    {"a": TRIANGLE_APEX, "low": 0.0, "high": 0.0},
                ]
            )
        )
        .mark_area(color=_style.TRIANGLE_FILL, clip=True)
        .encode(
            x=alt.X("a:Q", axis=None),
            y=alt.Y("low:Q", axis=y_axis),
            y2="high:Q",
        )
    )
    outline_rows = [
        {"a": 0.0, "cumdiff": -2.0 * sigma, "vertex": 0},
        {"a": TRIANGLE_APEX, "cumdiff": 0.0, "vertex": 1},
        {"a": 0.0, "cumdiff": 2.0 * sigma, "vertex": 2},
        {"a": 0.0, "cumdiff": -2.0 * sigma, "vertex": 3},
    ]
    outline = (
        alt.Chart(alt.InlineData(values=outline_rows))
        .mark_line(color=_style.INK, strokeWidth=1, clip=True)
        .encode(
            x=alt.X("a:Q", axis=None),
            y=alt.Y("cumdiff:Q", axis=y_axis),
            order="vertex:O",
        )
    )
    return [fill.properties(name="triangle_fill"), outline.properties(name="triangle")]


def axis_layer(name: str, values: list[float], **axis_props: Any) -> alt.Chart:
    """An invisible layer whose only job is to draw one horizontal axis."""
    ends = alt.InlineData(values=[{"a": 0.0}, {"a": 1.0}])
    return (
        alt.Chart(ends)
        .mark_point(opacity=0, size=0)
        .encode(x=alt.X("a:Q", axis=_style.axis(values=values, **axis_props)))
        .properties(name=name)
    )
