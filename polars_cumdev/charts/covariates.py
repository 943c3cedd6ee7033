"""Charts for results on Hilbert order: covariate tuples on the axis, and a map of the points.

A curve computed with several covariates as the score (``score=[...]``,
:mod:`polars_cumdev.covariates.ordering`) has a column ``ordering`` and one column
per covariate. Its ``score`` is a Hilbert rank, which means nothing to a
reader, so :func:`covariate_ticks` labels the cumulative plot's major ticks
with the covariate values there instead, and :func:`covariate_map` draws the
points in the plane of two covariates coloured by their position along the
curve: a stretch of the cumulative graph is a band of colour on the map.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require
from polars_cumdev.charts._located import Stretch, located_text
from polars_cumdev.charts._ticks import Ticks, compact
from polars_cumdev.charts.numbers import number
from polars_cumdev.covariates.ordering import covariate_names
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError

__all__ = ["covariate_map", "covariate_ticks", "hilbert_label", "located_covariates"]


def hilbert_label(names: list[str]) -> str:
    """Lower-axis title on Hilbert order, e.g. ``(age, income) along a Hilbert curve``."""
    return f"({', '.join(names)}) along a Hilbert curve"


def covariate_ticks(curve: pl.DataFrame, lower: Ticks, a: np.ndarray, k: np.ndarray) -> Ticks:
    """``lower`` with each major tick labelled by the covariate tuple of its point.

    Parameters
    ----------
    curve
        The user's curve frame, with ``k`` and the covariate columns named by
        its ``ordering`` (:func:`polars_cumdev.covariates.ordering.covariate_names`).
    lower
        The score ticks of the plot (positions on the ``a`` scale).
    a, k
        The plotted ``a`` and ``k``, aligned and ascending.

    Returns
    -------
    Ticks
        The same positions with labels such as ``(4.82, 61)``; ``lower``
        unchanged when the curve is not on Hilbert order.
    """
    names = covariate_names(curve)
    if not names or not lower.major:
        return lower
    # Each major tick sits at the ``a`` of one point: find that point's k.
    index = np.clip(np.searchsorted(a, np.asarray(lower.major), side="left"), 0, len(a) - 1)
    index = np.maximum(index, 1) if len(a) > 1 else index
    ks = pl.DataFrame({"k": k[index].astype(np.int64)})
    values = ks.join(
        curve.select(pl.col("k").cast(pl.Int64), *names), on="k", how="left", maintain_order="left"
    )
    columns = []
    for name in names:
        v = values.get_column(name).cast(pl.Float64).to_numpy()
        body = curve.get_column(name).drop_nulls().cast(pl.Float64)
        spread = float(body.max() - body.min()) if body.len() else 0.0  # type: ignore[operator]
        step = spread / max(len(v) - 1, 1) if spread > 0 else 1.0
        columns.append(compact([float(x) for x in v], step))
    labels = ["(" + ", ".join(parts) + ")" for parts in zip(*columns, strict=True)]
    return Ticks(lower.major, labels, lower.minor)


def located_covariates(curve: pl.DataFrame, found: Stretch, weighted: bool) -> str:
    """The located stretch's subtitle line, its ends given as covariate tuples.

    ``found`` comes from :func:`polars_cumdev.charts._located.stretch`; its
    ``from_score`` and ``to_score`` are Hilbert ranks, looked up in the
    curve's ``score`` column.
    """
    names = covariate_names(curve)
    ends = []
    for value in (found.from_score, found.to_score):
        row = curve.filter(pl.col("score") == value).select(names)
        if row.is_empty():
            return located_text(found, weighted)
        parts = [number(float(v)) for v in row.row(0)]
        ends.append("(" + ", ".join(parts) + ")")
    return located_text(found, weighted, f"from ({', '.join(names)}) = {ends[0]} to {ends[1]}")


def covariate_map(
    curve: pl.DataFrame | pl.LazyFrame,
    *,
    x: str | None = None,
    y: str | None = None,
    title: str | None = None,
    width: int = 360,
    height: int = 300,
    max_points: int = 20_000,
) -> alt.LayerChart:
    """The points of a Hilbert-order curve in the plane of two covariates, coloured by k/n.

    Each point of the curve (one per merged Hilbert cell of the
    subpopulation) is drawn at its covariate values, coloured from the start
    of the curve (k/n = 0) to its end (k/n = 1); the points of the located
    stretch (column ``located``, when present) are outlined in black. A
    stretch of the cumulative plot with a steep slope is then a region of
    the map.

    Parameters
    ----------
    curve
        A curve frame computed with ``score=[...]`` (columns ``k``,
        ``k_over_n``, ``ordering`` and the covariates).
    x, y
        The covariates on the horizontal and vertical axes; by default the
        first two of the curve's covariates.
    title
        Chart title; by default it names the ordering.
    width, height
        Size of the plotting area in pixels.
    max_points
        At most this many points are drawn (evenly spaced in k); the colours
        still run over the whole curve.

    Returns
    -------
    altair.LayerChart
        Scatter of the points with a k/n colour legend.

    Raises
    ------
    InvalidParameterError
        If the curve is not on Hilbert order, or ``x`` / ``y`` are not
        among its covariates.
    InvalidValuesError
        If the curve has no point beyond the origin.
    """
    frame = as_frame(curve, "curve")
    names = covariate_names(frame)
    if not names:
        raise InvalidParameterError(
            "covariate_map needs a curve computed with several covariates as the score "
            "(score=[...]); this frame has no 'ordering' column naming them"
        )
    if x is None or y is None:
        if len(names) < 2:
            raise InvalidParameterError(
                f"the curve has one covariate ({names[0]!r}); a map needs two: pass x and y"
            )
        x, y = x or names[0], y or (names[1] if names[1] != x else names[0])
    for axis in (x, y):
        if axis not in names:
            raise InvalidParameterError(f"{axis!r} is not one of the curve's covariates {names}")
    require(frame, ("k", "k_over_n", x, y), "curve")
    body = frame.filter(pl.col("k") > 0)
    if body.is_empty():
        raise InvalidValuesError("the curve frame has no point beyond the origin")
    located = "located" in body.columns
    step = max(1, -(-body.height // max_points))
    shown = body.gather_every(step).with_columns(
        (pl.col("located") if located else pl.lit(False)).alias("located")
    )
    data = inline(shown, ["k", "k_over_n", x, y, "located"])
    base = alt.Chart(data).encode(
        x=alt.X(f"{x}:Q", axis=_style.axis(title=x), scale=alt.Scale(zero=False)),
        y=alt.Y(f"{y}:Q", axis=_style.axis(title=y), scale=alt.Scale(zero=False)),
        tooltip=[
            alt.Tooltip(f"{x}:Q", format=".4~g"),
            alt.Tooltip(f"{y}:Q", format=".4~g"),
            alt.Tooltip("k:Q"),
            alt.Tooltip("k_over_n:Q", title="k/n", format=".3~g"),
        ],
    )
    dots = base.mark_circle(size=14, opacity=0.8).encode(
        color=alt.Color(
            "k_over_n:Q",
            title="k/n",
            scale=alt.Scale(scheme="viridis", domain=[0.0, 1.0]),
        )
    )
    layers = [dots.properties(name="points")]
    if located and bool(shown.get_column("located").any()):
        ring = (
            base.transform_filter("datum.located")
            .mark_point(size=30, color=_style.INK, strokeWidth=0.8)
            .properties(name="located")
        )
        layers.append(ring)
    ordering = frame.get_column("ordering").drop_nulls()[0]
    text = title if title is not None else f"points ordered along {ordering}"
    subtitle = "colour: position along the curve (k/n)"
    if located:
        subtitle += "; black rings: the located stretch"
    return alt.layer(*layers).properties(
        width=width, height=height, title=_style.title(text, subtitle)
    )
