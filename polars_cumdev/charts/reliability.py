"""Reliability diagrams: binned mean response against binned mean score.

The frame drawn has one row per bin and population: ``population``
(``"subpopulation"`` or ``"full"``), ``bin``, ``score_mean``,
``response_mean``, ``weight`` and ``count``, and optionally ``resample``
(null or absent for the observed data, 0, 1, ... for bootstrap resamples).
As in the paper, the subpopulation is black and the full population gray;
resamples are thin light-gray lines behind the observed ones, a rough
indication of how much the binned averages wobble by chance.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require
from polars_cumdev.errors import InvalidValuesError

__all__ = ["POPULATIONS", "RELIABILITY_COLUMNS", "reliability"]

#: Columns a reliability frame must have (``resample`` is optional).
RELIABILITY_COLUMNS = ("population", "bin", "score_mean", "response_mean", "weight", "count")
#: Allowed values of ``population``, in legend order.
POPULATIONS = ("subpopulation", "full")
_COLOURS = (_style.SUBPOPULATION, _style.FULL)


def reliability(
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    title: str | None = None,
    diagonal: bool = False,
    x_label: str = "score",
    y_label: str = "response",
    width: int = 340,
    height: int = 340,
) -> alt.LayerChart:
    """Draw a reliability diagram of the subpopulation (black) and full population (gray).

    Parameters
    ----------
    frame
        Reliability frame: ``population``, ``bin``, ``score_mean``,
        ``response_mean``, ``weight``, ``count``; optionally ``resample``.
    title
        Title text (default ``"reliability diagram"``).
    diagonal
        Draw the dashed line y = x (perfect calibration), spanning the range
        of the observed means.
    x_label, y_label
        Axis titles.
    width, height
        Size of the plotting area in pixels.

    Returns
    -------
    altair.LayerChart
        Layers, back to front: resamples (if any), the diagonal (if asked),
        the observed lines with their points (tooltips on the points).

    Raises
    ------
    ColumnNotFoundError
        If a required column is missing.
    InvalidValuesError
        If ``population`` holds a value other than ``"subpopulation"`` or
        ``"full"``, or no observed row is present.
    """
    data = as_frame(frame, "reliability")
    require(data, RELIABILITY_COLUMNS, "reliability")
    columns = [*RELIABILITY_COLUMNS, "resample"]
    if "resample" not in data.columns:
        data = data.with_columns(pl.lit(None, dtype=pl.Int64).alias("resample"))
    data = data.select(columns).with_columns(
        pl.col("population").cast(pl.String),
        pl.col("score_mean", "response_mean", "weight").cast(pl.Float64),
        pl.col("bin", "count", "resample").cast(pl.Int64),
    )
    unknown = set(data.get_column("population").unique().to_list()) - set(POPULATIONS)
    if unknown:
        raise InvalidValuesError(
            f"`population` must be one of {POPULATIONS}, found {sorted(map(str, unknown))}"
        )
    observed = data.filter(pl.col("resample").is_null()).sort("population", "score_mean")
    resampled = data.filter(pl.col("resample").is_not_null())
    if observed.is_empty():
        raise InvalidValuesError("the reliability frame has no observed (non-resample) rows")

    axis = _style.axis(tickCount=6)
    x = alt.X("score_mean:Q", title=x_label, axis=axis, scale=alt.Scale(zero=False))
    y = alt.Y("response_mean:Q", title=y_label, axis=axis, scale=alt.Scale(zero=False))
    colour = alt.Color(
        "population:N",
        scale=alt.Scale(domain=list(POPULATIONS), range=list(_COLOURS)),
        legend=alt.Legend(
            title=None,
            orient="top-left",
            labelFont=_style.FONT,
            labelExpr="datum.label == 'full' ? 'full population' : datum.label",
            symbolSize=40,
        ),
    )
    layers: list[alt.Chart] = []
    if not resampled.is_empty():
        layers.append(
            alt.Chart(inline(resampled))
            .mark_line(color=_style.RESAMPLE, strokeWidth=0.75, clip=True)
            .encode(x=x, y=y, detail=["population:N", "resample:N"], order="score_mean:Q")
            .properties(name="resamples")
        )
    if diagonal:
        means = pl.concat([observed.get_column("score_mean"), observed.get_column("response_mean")])
        low, high = means.min(), means.max()
        layers.append(
            alt.Chart(alt.InlineData(values=[{"d": low}, {"d": high}]))
            .mark_line(color=_style.REFERENCE, strokeDash=[4, 4], strokeWidth=1)
            .encode(x=alt.X("d:Q", title=x_label), y=alt.Y("d:Q", title=y_label))
            .properties(name="diagonal")
        )
    tooltip = [
        alt.Tooltip("population:N"),
        alt.Tooltip("bin:Q"),
        alt.Tooltip("score_mean:Q", title=f"mean {x_label}", format=".4~g"),
        alt.Tooltip("response_mean:Q", title=f"mean {y_label}", format=".4~g"),
        alt.Tooltip("weight:Q", format=".4~g"),
        alt.Tooltip("count:Q"),
    ]
    layers.append(
        alt.Chart(inline(observed))
        .mark_line(strokeWidth=1.25, point=alt.OverlayMarkDef(filled=True, size=28))
        .encode(x=x, y=y, color=colour, order="score_mean:Q", tooltip=tooltip)
        .properties(name="observed")
    )
    return alt.layer(*layers).properties(
        width=width,
        height=height,
        title=_style.title(title if title is not None else "reliability diagram"),
        view=alt.ViewBackground(stroke=_style.INK),
    )
