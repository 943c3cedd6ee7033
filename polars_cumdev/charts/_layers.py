"""Fixed layers of the plot of cumulative differences: the triangle and the axis-only layers."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import altair as alt

from polars_cumdev.charts import _style

__all__ = ["TRIANGLE_APEX", "axis_layer", "triangle", "zoom_on"]

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
    return [
        fill.properties(description="triangle_fill"),
        outline.properties(description="triangle"),
    ]


def axis_layer(name: str, values: list[float], **axis_props: Any) -> alt.Chart:
    """An invisible layer whose only job is to draw one horizontal axis.

    Its y is the constant 0 (a cumulative curve passes through 0 anyway):
    without a y of its own, two such layers in a chart stacked with ``&``
    would each declare the chart's height, which Vega refuses.
    """
    ends = alt.InlineData(values=[{"a": 0.0}, {"a": 1.0}])
    return (
        alt.Chart(ends)
        .mark_point(opacity=0, size=0)
        .encode(x=alt.X("a:Q", axis=_style.axis(values=values, **axis_props)), y=alt.datum(0))
        .properties(description=name)
    )


def zoom_on(chart: alt.LayerChart, view: str) -> alt.LayerChart:
    """``chart`` with the drag-to-pan, scroll-to-zoom interval bound to its layer ``view``.

    ``view`` must be the only layer with a ``name`` (the others carry a
    ``description``): joined with ``|`` or ``&``, Altair binds a layered
    chart's parameters to every named layer, and Vega refuses scales bound
    twice in one view. The parameter's name is derived from the chart's
    content, so two different charts joined or layered never share one, and
    it is the same from run to run.
    """
    digest = hashlib.sha1(
        json.dumps(chart.to_dict(validate=False), sort_keys=True, default=str).encode()
    ).hexdigest()[:10]
    zoom = alt.TopLevelSelectionParameter(
        name=f"zoom_{digest}", select={"type": "interval"}, bind="scales", views=[view]
    )
    return chart.properties(params=[zoom])
