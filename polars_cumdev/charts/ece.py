"""ECE against the number of bins, beside the ECCEs that need no bins.

The frame drawn is the output of :func:`polars_cumdev.binned.ece_sweep`
(``requested``, ``ece1``, ``ece2`` and friends). The point of the chart is the
papers' argument: the binned ECEs move with the number of bins, while the
ECCE-R and ECCE-MAD of the cumulative method, drawn as horizontal rules, are
single numbers.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require

__all__ = ["ece_sweep"]

_SERIES = {"ece1": "ECE1 (mean |gap|)", "ece2": "ECE2 (mean squared gap)"}
_RULES = {"ecce_r": "ECCE-R", "ecce_mad": "ECCE-MAD"}
_SMOOTH = "smooth ECE"


#: How each weighting of the bins is named on the chart.
_WEIGHTINGS = {
    "width": "ECE bins weighted by their width (the ECE paper's sum, the default)",
    "count": "ECE bins weighted by their count (the ECE of most ML papers)",
}


def _weighting_line(data: pl.DataFrame) -> list[str]:
    """The subtitle naming the ECEs' weighting of the bins, when the sweep records it."""
    if "weighting" not in data.columns:
        return []
    found = data.get_column("weighting").drop_nulls().unique().sort().to_list()
    return [_WEIGHTINGS.get(str(w), f"ECE weighting {w}") for w in found]


def ece_sweep(
    sweep: pl.DataFrame | pl.LazyFrame,
    *,
    ecce: pl.DataFrame | pl.LazyFrame | None = None,
    smooth: pl.DataFrame | pl.LazyFrame | None = None,
    title: str | None = None,
    width: int = 420,
    height: int = 300,
) -> alt.LayerChart:
    """Draw ECE1 and ECE2 against the number of bins, with the ECCEs as rules.

    Parameters
    ----------
    sweep
        Frame with ``requested`` (bins asked for), ``ece1`` and ``ece2``
        (equations (3)-(4) of Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu,
        "Metrics of calibration for probabilistic predictions"), one row per
        number of bins.
    ecce
        Optional one-row output of :func:`polars_cumdev.calibration.calibration`;
        its ``ecce_r`` and ``ecce_mad`` are drawn as dashed horizontal rules.
    smooth
        Optional output of :func:`polars_cumdev.binned.smooth_ece`: the
        smooth ECE at its automatic bandwidth, a dotted rule (it moves with
        the bandwidth as the binned ECE moves with the bins).
    title
        Title text.
    width, height
        Size of the plotting area in pixels.

    Returns
    -------
    altair.LayerChart
        Lines (with points) of the ECEs, and the ECCE rules when given.
    """
    data = as_frame(sweep, "ece sweep")
    require(data, ("requested", "ece1", "ece2"), "ece sweep")
    lines = _weighting_line(data)
    long = (
        data.select("requested", *_SERIES)
        .unpivot(index="requested", variable_name="metric", value_name="value")
        .with_columns(pl.col("metric").replace_strict(_SERIES))
    )
    axis = _style.axis(tickCount=6)
    layers: list[alt.Chart] = [
        alt.Chart(inline(long))
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=24), strokeWidth=1.25)
        .encode(
            x=alt.X("requested:Q", title="number of bins", axis=axis),
            y=alt.Y("value:Q", title="calibration error", axis=axis),
            color=alt.Color(
                "metric:N",
                scale=alt.Scale(
                    domain=[*_SERIES.values(), *_RULES.values(), _SMOOTH],
                    range=[_style.INK, _style.FULL, _style.SIGNIFICANT, "#1f5fa8", "#2e8b57"],
                ),
                legend=alt.Legend(title=None, orient="bottom", labelFont=_style.FONT),
            ),
            tooltip=[
                alt.Tooltip("metric:N"),
                alt.Tooltip("requested:Q", title="bins"),
                alt.Tooltip("value:Q", format=".4~g"),
            ],
        )
        .properties(name="ece")
    ]
    if ecce is not None:
        row = as_frame(ecce, "calibration")
        require(row, tuple(_RULES), "calibration")
        rules = pl.DataFrame(
            {"metric": list(_RULES.values()), "value": [row[c][0] for c in _RULES]}
        )
        layers.append(
            alt.Chart(inline(rules))
            .mark_rule(strokeDash=[6, 4], strokeWidth=1.5)
            .encode(
                y="value:Q",
                color=alt.Color("metric:N"),
                tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".4~g")],
            )
            .properties(name="ecce")
        )
    if smooth is not None:
        one = as_frame(smooth, "smooth ECE")
        require(one, ("smooth_ece", "bandwidth"), "smooth ECE")
        value, width_used = float(one["smooth_ece"][0]), float(one["bandwidth"][0])
        layers.append(
            alt.Chart(inline(pl.DataFrame({"metric": [_SMOOTH], "value": [value]})))
            .mark_rule(strokeDash=[2, 2], strokeWidth=1.5)
            .encode(
                y="value:Q",
                color=alt.Color("metric:N"),
                tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("value:Q", format=".4~g")],
            )
            .properties(name="smooth_ece")
        )
        lines.append(f"smooth ECE at its automatic bandwidth {width_used:.3g} (dotted)")
    return alt.layer(*layers).properties(
        width=width,
        height=height,
        title=_style.title(
            title or "binned ECEs depend on the number of bins; the ECCEs need none",
            lines,
        ),
        view=alt.ViewBackground(stroke=_style.INK),
    )
