"""Funnel chart of a multicalibration audit: every segment's z against its weight.

The frame drawn is the table of
:func:`polars_cumdev.multicalibration.multicalibration` (or of
``screen(by=segments(...))``): one point per segment at its total weight
(logarithmic axis) and its z (``ecce_r_z``, or ``kuiper_z`` for a screen),
coloured by depth, filled where ``p_family <= level``; a dashed line at the
family-wise critical z (``critical_z``). Under perfect calibration z does not
grow with the weight, so the cloud stays flat and below the line; a real
miscalibration grows with the square root of the weight, so the findings
stand out to the right. Tooltips name the conjunction. Segments whose z is
null (their ``note`` says why) are left out and counted in the subtitle.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require
from polars_cumdev.errors import InvalidParameterError

__all__ = ["funnel"]

_STATISTICS = {
    "depth",
    "n",
    "weight",
    "p_family",
    "significant",
    "critical_z",
    "condition",
    "finding",
}


def _features(frame: pl.DataFrame) -> list[str]:
    """The feature columns: those before ``depth``."""
    return frame.columns[: frame.columns.index("depth")]


def funnel(
    table: pl.DataFrame | pl.LazyFrame,
    *,
    level: float = 0.05,
    title: str | None = None,
    width: int = 480,
    height: int = 300,
) -> alt.LayerChart:
    """Every segment's z against its weight, with the family-wise critical z.

    Parameters
    ----------
    table
        Output of :func:`polars_cumdev.multicalibration.multicalibration` or
        ``screen(by=segments(...))``.
    level
        The family-wise level the table was computed at (which points are
        filled).
    title, width, height
        Chart title (default says what is drawn) and size in pixels.

    Returns
    -------
    altair.LayerChart
        Points and the critical-z rule.
    """
    frame = as_frame(table, "multicalibration")
    z = "ecce_r_z" if "ecce_r_z" in frame.columns else "kuiper_z"
    require(frame, [*_STATISTICS, z], "multicalibration")
    if not 0.0 < level < 1.0:
        raise InvalidParameterError(f"`level` must be in (0, 1), got {level!r}")
    features: Sequence[str] = _features(frame)
    parts = [pl.when(pl.col(f).is_not_null()).then(pl.lit(f"{f} = ") + pl.col(f)) for f in features]
    label = pl.concat_str(parts, separator=" & ", ignore_nulls=True) if parts else pl.lit("")
    shown = frame.filter(pl.col(z).is_not_null() & pl.col(z).is_finite())
    left_out = frame.height - shown.height
    data = shown.select(
        pl.when(label == "").then(pl.lit("everyone")).otherwise(label).alias("segment"),
        pl.col("depth").cast(pl.Int64),
        pl.col("n"),
        pl.col("weight"),
        pl.col(z).alias("z"),
        pl.col("p_family"),
        pl.col("significant").fill_null(False),
        pl.col("finding"),
    )
    critical = frame.get_column("critical_z").drop_nulls()
    critical_z = float(critical[0]) if critical.len() else float("nan")
    subtitle = [
        f"{frame.height} segments; dashed: family-wise critical z = {critical_z:.3g} "
        f"at level {level:g}; filled: p_family <= {level:g}",
        "colour: depth, from 0 (dark, everyone) to the deepest (light)",
    ]
    if left_out:
        subtitle.append(f"{left_out} segment(s) without a defined z left out (see their note)")
    base = alt.Chart(inline(data))
    legend = alt.Legend(
        title="depth",
        orient="right",
        labelFont=_style.FONT,
        titleFont=_style.FONT,
        titleFontWeight="normal",
    )
    points = base.mark_point(size=40, strokeWidth=1.2, filled=True).encode(
        x=alt.X("weight:Q", scale=alt.Scale(type="log"), axis=_style.axis(title="segment weight")),
        y=alt.Y("z:Q", axis=_style.axis(title=f"{z} (range / sigma)")),
        # One legend for the fill and the outline, both the depth: each on its own
        # (one with legend=None) Vega-Lite drew none.
        color=alt.Color("depth:O", title="depth", scale=alt.Scale(scheme="viridis"), legend=legend),
        stroke=alt.Color(
            "depth:O", title="depth", scale=alt.Scale(scheme="viridis"), legend=legend
        ),
        fillOpacity=alt.condition("datum.significant", alt.value(1.0), alt.value(0.0)),
        tooltip=["segment:N", "n:Q", "weight:Q", "z:Q", "p_family:Q", "finding:N"],
    )
    rule = (
        alt.Chart(inline(pl.DataFrame({"critical": [critical_z]})))
        .mark_rule(strokeDash=[5, 4], color=_style.INK)
        .encode(y="critical:Q")
    )
    text = title or "Every segment's calibration z against its weight"
    return alt.layer(points, rule).properties(
        width=width, height=height, title=_style.title(text, subtitle)
    )
