"""Several cumulative calibration curves on one chart, one colour per model.

The frame drawn stacks curve frames (of
:func:`polars_cumdev.calibration.calibration_curve`), told apart by a column
(``model`` by default): each curve is drawn against its own A_k, with its own
triangle at the origin (plus and minus two of its sigma) in its colour. It is
the chart of two scikit-learn displays added together
(``(display_a + display_b).plot()``, :mod:`polars_cumdev.sklearn`).
"""

from __future__ import annotations

import altair as alt
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require, thin_columns
from polars_cumdev.charts._layers import TRIANGLE_APEX
from polars_cumdev.errors import InvalidParameterError

__all__ = ["overlay"]


def overlay(
    curves: pl.DataFrame | pl.LazyFrame,
    *,
    by: str = "model",
    subtitle: list[str] | None = None,
    title: str | None = None,
    x_label: str = "cumulative share of the predictions (A_k)",
    y_label: str = "cumulative (outcome minus probability)",
    width: int = 420,
    height: int = 340,
) -> alt.LayerChart:
    """Cumulative differences of several curves against their A_k, coloured by ``by``.

    Parameters
    ----------
    curves
        Curve frames stacked, with the column ``by`` naming each curve, and
        ``a``, ``cumdiff``, ``sigma`` (the origin rows may be there or not).
    by
        The column naming the curves (the legend).
    subtitle
        Lines under the title (e.g. each model's ECCE-R).
    title
        Title text.
    x_label, y_label
        Axis titles.
    width, height
        Size of the plotting area in pixels.

    Returns
    -------
    altair.LayerChart
        The lines and each curve's triangle, with a legend.
    """
    frame = as_frame(curves, "curves")
    require(frame, [by, "a", "cumdiff", "sigma"], "curves")
    names = frame.get_column(by).unique(maintain_order=True).to_list()
    if not names:
        raise InvalidParameterError("the curve frame has no curve to draw")
    lines, corners = [], []
    for name in names:
        one = (
            frame.filter(pl.col(by) == name)
            .select(pl.col("a", "cumdiff", "sigma").cast(pl.Float64))
            .sort("a")
        )
        origin = pl.DataFrame({"a": [0.0], "cumdiff": [0.0], "sigma": [None]}, schema=one.schema)
        one = pl.concat([origin, one.filter(pl.col("a") > 0)])
        shown = thin_columns(one.select("a", "cumdiff"), "a", "cumdiff", width)
        lines.append(shown.with_columns(pl.lit(str(name)).alias(by)))
        sigma = one.get_column("sigma").drop_nulls()
        if sigma.len() and sigma[0] is not None and sigma[0] > 0:
            s = float(sigma[0])
            corners += [
                {by: str(name), "a": x, "cumdiff": y, "vertex": i}
                for i, (x, y) in enumerate(
                    [(0.0, -2 * s), (TRIANGLE_APEX, 0.0), (0.0, 2 * s), (0.0, -2 * s)]
                )
            ]
    colour = alt.Color(
        f"{by}:N",
        scale=alt.Scale(domain=[str(n) for n in names]),
        legend=alt.Legend(title=None, orient="bottom", labelFont=_style.FONT),
    )
    x = alt.X(
        "a:Q",
        scale=alt.Scale(domain=[0.0, 1.0], nice=False),
        axis=_style.axis(title=x_label),
    )
    y = alt.Y("cumdiff:Q", axis=_style.axis(title=y_label, tickCount=6))
    layers = [
        alt.Chart(inline(pl.concat(lines)))
        .mark_line(strokeWidth=1.25, clip=True)
        .encode(x=x, y=y, color=colour, tooltip=[f"{by}:N", "a:Q", "cumdiff:Q"])
        .properties(name="curves")
    ]
    if corners:
        layers.insert(
            0,
            alt.Chart(alt.InlineData(values=corners))
            .mark_line(strokeWidth=0.8, opacity=0.7, clip=True)
            .encode(x=x, y=y, color=colour, detail=f"{by}:N", order="vertex:O")
            .properties(name="triangles"),
        )
    text = title or f"slope = miscalibration; each triangle spans ±2{_style.SIGMA} of its model"
    return alt.layer(*layers).properties(
        width=width,
        height=height,
        title=_style.title(text, subtitle or [], width=width),
        view=alt.ViewBackground(stroke=_style.INK),
    )
