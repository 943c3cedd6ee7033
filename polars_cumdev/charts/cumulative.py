"""The plot of cumulative differences, with the triangle at the origin.

The frame drawn is a *curve frame*: an origin row (``k = 0``) then one row
per point, with columns ``k``, ``a`` (the cumulative weight A_k, equal to
k/n without weights), ``k_over_n``, ``score`` (null at the origin),
``cumdiff`` (C_k) and ``sigma`` (the same on every row). Deviation over a
range of scores is the slope of the drawn line over that range; the triangle
at the origin, 4 sigma tall, shows how far a driftless random walk of this
size typically wanders.

Layers, bottom to top: the triangle's fill and outline, the line, invisible
points that carry the tooltips, and three axis-only layers. All layers share
one horizontal scale (domain [0, 1]) but have independent axes, so the
lower axis (scores) and the upper axis (k/n) both follow the interactive zoom.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

import altair as alt
import numpy as np
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._band import band_layers, check_band
from polars_cumdev.charts._data import as_frame, inline, one_per_column, require, thin_columns
from polars_cumdev.charts._layers import TRIANGLE_APEX, axis_layer, triangle, zoom_on
from polars_cumdev.charts._located import located_layer, located_text, stretch
from polars_cumdev.charts._ticks import label_expr, lower_ticks, uncrowd, upper_ticks
from polars_cumdev.charts._titles import default_title, statistics_lines, unshaded_line
from polars_cumdev.charts.covariates import covariate_ticks, hilbert_label, located_covariates
from polars_cumdev.covariates.ordering import covariate_names
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError
from polars_cumdev.method.normalization import MIN_SCORES, normalized

# TRIANGLE_APEX lives in charts._layers and default_title in charts._titles; both are named
# here too, where the public first found them.
__all__ = ["CURVE_COLUMNS", "TRIANGLE_APEX", "cumulative", "default_title"]

#: Columns a curve frame must have.
CURVE_COLUMNS = ("k", "a", "k_over_n", "score", "cumdiff", "sigma")

Kind = Literal["subpopulation", "calibration", "compare", "paired"]
_KINDS = ("subpopulation", "calibration", "compare", "paired")
_WEIGHTED_TOLERANCE = 1e-9


def _sigma(frame: pl.DataFrame) -> float | None:
    """The frame's sigma when usable (finite and positive), else ``None``."""
    values = frame.get_column("sigma").drop_nulls()
    if values.is_empty():
        return None
    sigma = float(values[0])
    return sigma if math.isfinite(sigma) and sigma > 0 else None


def _check(kind: str, width: int, height: int, major_ticks: int, minor_ticks: int) -> None:
    if kind not in _KINDS:
        raise InvalidParameterError(f"`kind` must be one of {_KINDS}, got {kind!r}")
    for label, value, low in (
        ("width", width, 1),
        ("height", height, 1),
        ("major_ticks", major_ticks, 2),
        ("minor_ticks", minor_ticks, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidParameterError(f"`{label}` must be an int >= {low}, got {value!r}")


def _quantile_level(frame: pl.DataFrame) -> float | None:
    """The level alpha of a quantile's calibration curve, else None.

    ``calibration_curve(..., target="quantile")`` holds alpha in every row's
    ``full_mean`` (the reference the responses are compared with), where a
    probability's or a mean's curve holds the score itself.
    """
    if "full_mean" not in frame.columns or "score" not in frame.columns:
        return None
    rows = frame.filter(pl.col("score").is_not_null()).select(
        pl.col("full_mean").cast(pl.Float64), pl.col("score").cast(pl.Float64)
    )
    reference = rows.get_column("full_mean").drop_nulls().unique()
    if reference.len() != 1 or not 0.0 < reference[0] < 1.0:
        return None
    if rows.select((pl.col("full_mean") == pl.col("score")).all()).item():
        return None
    return float(reference[0])


def cumulative(
    curve: pl.DataFrame | pl.LazyFrame,
    *,
    title: str | None = None,
    kind: Kind = "subpopulation",
    subject: str | None = None,
    score_label: str = "score",
    y_label: str = "cumulative difference",
    width: int = 420,
    height: int = 340,
    major_ticks: int = 11,
    minor_ticks: int = 41,
    max_points: int | None = None,
    band: float | None = None,
    significance: str | None = None,
) -> alt.LayerChart:
    """Plot cumulative differences C_k against A_k, with the triangle at the origin.

    Parameters
    ----------
    curve
        Curve frame (origin row first; columns ``k``, ``a``, ``k_over_n``,
        ``score``, ``cumdiff``, ``sigma``; extra columns are ignored), as
        produced by ``df.cumdev.curve``, ``calibration_curve`` or
        ``compare_curve``. When it has the boolean ``located`` column of
        those functions, the located stretch
        (:mod:`polars_cumdev.method.location`) is shaded and a subtitle line gives
        its scores, its share of the weight and the average deviation there.
    title
        Title text; by default the paper's wording for ``kind``, naming the
        horizontal variable A_k with weights or k/n without.
    kind
        ``"subpopulation"`` (a subpopulation against the full population),
        ``"calibration"`` (responses against predicted probabilities),
        ``"compare"`` (two groups; pass a ``title`` saying which is
        subtracted from which) or ``"paired"`` (two responses of the same
        units, ``paired_curve``). It sets the fewest points for which the
        statistics are normalized (:data:`polars_cumdev.method.normalization.MIN_SCORES`,
        the rule of the tables) and what the points are called.
    subject
        What the curve is about, e.g. ``"county = Cedar"``: put before the
        title, ``"county = Cedar: ..."``.
    score_label
        Title of the lower axis, which is labelled with scores. For a curve
        on Hilbert order (``score=[...]``) the labels are the covariate
        tuples at the ticks and the default title names the covariates
        (:mod:`polars_cumdev.charts.covariates`).
    y_label
        Title of the vertical axis.
    width, height
        Size of the plotting area in pixels.
    major_ticks
        Approximate number of labelled ticks on each horizontal axis,
        placed at equispaced k.
    minor_ticks
        Number of minor ticks: on the upper axis at equispaced A_k, on the
        lower axis where the score reaches equispaced values (0 for none).
    max_points
        Curves with more rows are thinned for display only
        (:func:`polars_cumdev.charts._data.thin_columns`), keeping in each of
        ``max_points // 4`` columns its first, last, lowest and highest
        point, and the tooltips on one point per column plus the overall
        maximum and minimum; the subtitle and the tooltips say so. By default
        4 times ``width``: one column per pixel, so the drawn envelope is
        exact. The title's statistics, the ticks and the located stretch
        always use every row.
    band
        A level alpha in (0, 1) to draw the Kolmogorov-Smirnov band, plus
        and minus z_alpha sigma around zero with z_alpha from
        :func:`polars_cumdev.method.pvalues.ks_critical` (the curve leaves it
        exactly when the KS p-value is below alpha), and beside it the
        pointwise envelope of pure noise, plus and minus 2 sigma times the
        square root of the frame's ``variance_share``; ``None`` (default)
        draws neither. Nothing is drawn when sigma is unusable.
    significance
        A subtitle line on the curve's significance, e.g. a report's
        ``"not significant: q = 0.72 > 0.05 (no stretch shaded)"``. By
        default, when the frame has ``located`` with no point flagged and
        the statistics are normalized, the line gives the curve's own Kuiper
        p-value and says that no stretch is shaded (the curve functions flag
        a stretch only where that p is at most their ``level``,
        :mod:`polars_cumdev.method.findings`).

    Returns
    -------
    altair.LayerChart
        Layered chart; in HTML, drag to pan and scroll to zoom (e.g. into
        the origin, Remark 3 of the paper; the triangle keeps the height
        computed for the whole curve).

    Raises
    ------
    ColumnNotFoundError
        If a required column is missing.
    InvalidValuesError
        If the frame has no point beyond the origin.
    InvalidParameterError
        If ``kind`` or a size argument is invalid.
    """
    _check(kind, width, height, major_ticks, minor_ticks)
    if max_points is None:
        max_points = 4 * width
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 8:
        raise InvalidParameterError(f"`max_points` must be an int >= 8, got {max_points!r}")
    alpha = check_band(band)
    frame = as_frame(curve, "curve")
    require(frame, CURVE_COLUMNS, "curve")
    original = frame  # keeps the covariate columns of a curve on Hilbert order
    columns = CURVE_COLUMNS if alpha is None else (*CURVE_COLUMNS, "variance_share")
    require(frame, columns, "curve (band= needs variance_share)")
    flagged = "located" in frame.columns and frame.schema["located"] == pl.Boolean
    frame = (
        frame.select(*columns, *(["located"] if flagged else []))
        .with_columns(pl.col("k").cast(pl.Int64), pl.exclude("k", "located").cast(pl.Float64))
        .sort("k")
    )
    if frame.filter(pl.col("k") > 0).is_empty():
        raise InvalidValuesError("the curve frame has no point beyond the origin")
    if frame.get_column("k")[0] != 0:  # tolerate a frame without its origin row
        origin: dict[str, list[Any]] = {
            "k": [0],
            "a": [0.0],
            "k_over_n": [0.0],
            "score": [None],
            "cumdiff": [0.0],
            "sigma": [frame.get_column("sigma")[0]],
        }
        if alpha is not None:
            origin["variance_share"] = [0.0]
        if flagged:
            origin["located"] = [False]
        frame = pl.concat([pl.DataFrame(origin, schema=frame.schema), frame])

    a = frame.get_column("a").to_numpy()
    k_over_n = frame.get_column("k_over_n").to_numpy()
    cumdiff = frame.get_column("cumdiff").to_numpy()
    n = int(frame.get_column("k").max())  # type: ignore[arg-type]
    weighted = bool(np.max(np.abs(a - k_over_n)) > _WEIGHTED_TOLERANCE)
    sigma = _sigma(frame)
    shows_z = normalized(n, sigma, MIN_SCORES[kind])

    lower = lower_ticks(a, frame.get_column("score").to_numpy(), major_ticks, minor_ticks)
    covariates = covariate_names(original)
    if covariates:  # several covariates: label ticks with their values
        lower = covariate_ticks(original, lower, a, frame.get_column("k").to_numpy())
        if score_label == "score":
            score_label = hilbert_label(covariates)
    upper = upper_ticks(a, major_ticks, minor_ticks)
    size = _style.LABEL_SIZE
    lower_labels = uncrowd(lower.major, lower.labels, width, size)
    upper_labels = uncrowd(upper.major, upper.labels, width, size)
    x_scale = alt.Scale(domain=[0.0, 1.0], nice=False, zero=False)
    y_axis = _style.axis(title=y_label, tickCount=6)

    shown = thin_columns(frame, "a", "cumdiff", max_points // 4)
    thinned = shown.height < frame.height
    tip_columns = ["k", "a", "k_over_n", "score", "cumdiff"]
    # Tooltips on one point per pixel column (and the extremes): each is an
    # invisible mark of the SVG. With as few points as columns, the line and
    # the tooltips share one dataset; otherwise the line carries only its
    # coordinates.
    tips = one_per_column(shown, "a", "cumdiff", max_points // 4)
    shared = tips.height == shown.height
    data = inline(shown, tip_columns if shared else ["a", "cumdiff"])
    line = (
        alt.Chart(data)
        .mark_line(color=_style.INK, strokeWidth=1.25, clip=True)
        .encode(
            x=alt.X(
                "a:Q",
                scale=x_scale,
                axis=_style.axis(
                    orient="bottom",
                    title=score_label,
                    values=lower.major,
                    labelExpr=label_expr(lower.major, lower_labels),
                    labelOverlap="greedy",
                ),
            ),
            y=alt.Y("cumdiff:Q", axis=y_axis),
        )
        .properties(name="curve")
    )
    tooltip = [
        alt.Tooltip("score:Q", title=score_label, format=".6~g"),
        alt.Tooltip("k:Q", title="k"),
        alt.Tooltip("k_over_n:Q", title="k/n", format=".4~g"),
    ]
    if weighted:
        tooltip.append(alt.Tooltip("a:Q", title="A_k", format=".4~g"))
    tooltip.append(alt.Tooltip("cumdiff:Q", title="C_k", format=".4~g"))
    points = alt.Chart(data if shared else inline(tips, tip_columns))
    if thinned:  # one constant text, computed when drawn rather than stored on every row
        note = (
            f"{shown.height:,} of {frame.height:,} points drawn, each pixel column's extremes kept"
        )
        points = points.transform_calculate(thinned=json.dumps(note))  # a string literal
        tooltip.append(alt.Tooltip("thinned:N", title="line thinned"))
    points = (
        points.mark_point(opacity=0, size=40, clip=True)
        .encode(x=alt.X("a:Q", axis=None), y=alt.Y("cumdiff:Q", axis=y_axis), tooltip=tooltip)
        .properties(description="points")
    )
    axes = [
        axis_layer(
            "lower_minor_ticks",
            lower.minor,
            orient="bottom",
            labels=False,
            domain=False,
            title=None,
            tickSize=_style.MINOR_TICK,
        ),
        axis_layer(
            "upper_axis",
            upper.major,
            orient="top",
            title="k/n",
            labelExpr=label_expr(upper.major, upper_labels),
            labelOverlap="greedy",
        ),
        axis_layer(
            "upper_minor_ticks",
            upper.minor,
            orient="top",
            labels=False,
            domain=False,
            title=None,
            tickSize=_style.MINOR_TICK,
        ),
    ]
    extra: list[alt.Chart] = []
    # The verdict first (the located stretch, or why none is shaded): a subtitle shows
    # three lines at most (charts._style.fit_subtitle).
    subtitle = []
    found = stretch(frame) if shows_z else None
    if found is not None:
        # On Hilbert order the ends are named by their covariates, not by ranks.
        subtitle.append(
            located_covariates(original, found, weighted)
            if covariates
            else located_text(found, weighted)
        )
    if significance is not None:
        subtitle.append(significance)
    elif flagged and found is None and shows_z and sigma is not None:
        subtitle.append(unshaded_line(cumdiff, sigma))
    subtitle.extend(statistics_lines(cumdiff, sigma, n, kind, shows_z))
    if alpha is not None and shows_z and sigma is not None:
        ks = float(np.abs(cumdiff).max())
        extra, verdict = band_layers(shown, sigma, alpha, ks, y_axis)
        subtitle.append(verdict)
    if thinned:
        subtitle.append(
            f"line thinned for display: {shown.height:,} of {frame.height:,} points, "
            "the highest and lowest of each pixel column kept"
        )
    drawn = triangle(sigma, y_axis) if shows_z and sigma is not None else []
    shading = [located_layer(found)] if found is not None else []
    layers = [*shading, *drawn, *extra, line, points, *axes]
    text = title if title is not None else default_title(kind, weighted)
    level = _quantile_level(original) if kind == "calibration" else None
    if title is None and level is not None:
        text = f"{text} of the predicted {level:g}-quantile"
    if subject:
        text = f"{subject}: {text}"
    chart = (
        alt.layer(*layers)
        .resolve_axis(x="independent")
        .properties(
            width=width,
            height=height,
            title=_style.title(text, subtitle, width=width),
            view=alt.ViewBackground(stroke=_style.INK),
        )
    )
    return zoom_on(chart, "curve")
