"""The CORP reliability diagram: isotonic recalibration, consistency band, diagonal, histogram.

The frame drawn is the output of :func:`polars_cumdev.corp.diagram.corp_curve` for
one group: one row per distinct score with ``score``, ``fitted`` (the
isotonic recalibration there), ``weight``, ``rows``, ``block``, and the
band ``lower``, ``upper`` with its ``level`` and ``resamples`` (null when
no band was computed).

The upper panel follows Dimitriadis, Gneiting and Jordan (PNAS 2021): the
fitted values joined by straight segments (flat along each block of pooled
scores, sloped between blocks, as the R package ``reliabilitydiag`` draws
them), the diagonal of perfect calibration, and the consistency band, the
region where the fit of calibrated forecasts would fall at each score with
probability ``level``. Where the fitted line leaves the band the forecasts
are miscalibrated beyond what chance explains at that score. The lower panel
is a histogram of the scores (share of the weight in each of ``bins`` equal
bins of [0, 1]), so that stretches of the line resting on little data are
visible.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError

__all__ = ["CORP_CURVE_COLUMNS", "corp"]

#: Columns a CORP curve frame must have.
CORP_CURVE_COLUMNS = ("score", "fitted", "weight", "rows", "block", "lower", "upper", "level")
_SUMMARY = ("brier", "mcb", "dsc", "unc")


def _check(width: int, height: int, histogram_height: int, bins: int, max_points: int) -> None:
    for label, value, low in (
        ("width", width, 1),
        ("height", height, 1),
        ("histogram_height", histogram_height, 0),
        ("bins", bins, 1),
        ("max_points", max_points, 8),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidParameterError(f"`{label}` must be an int >= {low}, got {value!r}")


def _block_ends(frame: pl.DataFrame) -> pl.DataFrame:
    """First and last score of every block: the fitted line through them is the whole line."""
    block = pl.col("block")
    first = block.ne_missing(block.shift(1)).fill_null(True)
    last = block.ne_missing(block.shift(-1)).fill_null(True)
    return frame.filter(first | last)


def _spread(frame: pl.DataFrame, max_points: int) -> pl.DataFrame:
    """At most ``max_points`` rows, evenly spaced in rank, first and last kept (display only)."""
    if frame.height <= max_points:
        return frame
    keep = np.unique(np.linspace(0, frame.height - 1, max_points).round().astype(np.int64))
    return frame[keep.tolist()]


def _subtitle(summary: pl.DataFrame | pl.LazyFrame | None, band: pl.DataFrame) -> list[str]:
    lines = []
    if summary is not None:
        row_frame = as_frame(summary, "corp summary")
        require(row_frame, _SUMMARY, "corp summary")
        if row_frame.height != 1:
            raise InvalidValuesError(
                f"`summary` must be the one row of corp() for this curve, got {row_frame.height}"
            )
        row = row_frame.row(0, named=True)
        lines.append(
            f"Brier {row['brier']:.4g} = MCB {row['mcb']:.3g} - DSC {row['dsc']:.3g} "
            f"+ UNC {row['unc']:.3g}"
        )
    if not band.is_empty():
        level = band.get_column("level")[0]
        lines.append(f"shaded: {level:.0%} band of the fit if the forecasts were calibrated")
    return lines


def corp(
    curve: pl.DataFrame | pl.LazyFrame,
    *,
    summary: pl.DataFrame | pl.LazyFrame | None = None,
    title: str | None = None,
    score_label: str = "predicted probability",
    y_label: str = "recalibrated probability",
    width: int = 340,
    height: int = 340,
    histogram_height: int = 70,
    bins: int = 50,
    max_points: int = 600,
) -> alt.VConcatChart:
    """Draw a CORP reliability diagram from the tidy frame of ``corp_curve``.

    Parameters
    ----------
    curve
        One group's output of :func:`polars_cumdev.corp.diagram.corp_curve`
        (filter a ``by=`` result to one group first): ``score``,
        ``fitted``, ``weight``, ``rows``, ``block``, ``lower``, ``upper``,
        ``level``; other columns are ignored.
    summary
        Optional one-row output of :func:`polars_cumdev.corp.decomposition.corp` for the
        same data; its Brier score and decomposition go in the subtitle.
    title
        Title text (default ``"CORP reliability diagram"``).
    score_label, y_label
        Axis titles.
    width, height
        Size of the diagram in pixels.
    histogram_height
        Height of the histogram of the scores below it (0: no histogram).
    bins
        Number of equal bins of [0, 1] in the histogram.
    max_points
        Longer frames are thinned for display (the fitted line never is:
        it is drawn through the ends of its blocks).

    Returns
    -------
    altair.VConcatChart
        The diagram (layers ``band``, ``diagonal``, ``fit``, ``points``),
        above the histogram (layer ``histogram``) when asked.

    Raises
    ------
    ColumnNotFoundError
        If a required column is missing.
    InvalidValuesError
        If the frame is empty or holds several curves (a score repeats).
    InvalidParameterError
        If a size argument is invalid.
    """
    _check(width, height, histogram_height, bins, max_points)
    frame = as_frame(curve, "corp curve")
    require(frame, CORP_CURVE_COLUMNS, "corp curve")
    frame = (
        frame.select(CORP_CURVE_COLUMNS)
        .with_columns(pl.exclude("rows", "block").cast(pl.Float64), pl.col("rows", "block"))
        .sort("score")
    )
    if frame.is_empty():
        raise InvalidValuesError("the corp curve frame has no rows")
    if frame.get_column("score").n_unique() != frame.height:
        raise InvalidValuesError(
            "the corp curve frame holds several curves (a score repeats): "
            "filter one group of a by= result first"
        )
    band = frame.filter(pl.col("lower").is_not_null() & pl.col("upper").is_not_null())
    unit = alt.Scale(domain=[0.0, 1.0], nice=False, zero=False)
    axis = _style.axis(tickCount=6)
    # With the histogram below, the diagram's own axis keeps its labels and leaves the title.
    x = alt.X("score:Q", title=None if histogram_height else score_label, scale=unit, axis=axis)
    layers: list[alt.Chart] = []
    if not band.is_empty():
        layers.append(
            alt.Chart(inline(_spread(band, max_points), ["score", "lower", "upper"]))
            .mark_area(color=_style.RESAMPLE, opacity=0.8, clip=True)
            .encode(x=x, y=alt.Y("lower:Q", title=y_label, scale=unit, axis=axis), y2="upper:Q")
            .properties(name="band")
        )
    layers.append(
        alt.Chart(
            alt.InlineData(values=[{"score": 0.0, "fitted": 0.0}, {"score": 1.0, "fitted": 1.0}])
        )
        .mark_line(color=_style.REFERENCE, strokeDash=[4, 4], strokeWidth=1)
        .encode(x=x, y=alt.Y("fitted:Q", title=y_label, scale=unit, axis=axis))
        .properties(name="diagonal")
    )
    y = alt.Y("fitted:Q", title=y_label, scale=unit, axis=axis)
    layers.append(
        alt.Chart(inline(_block_ends(frame), ["score", "fitted", "block"]))
        .mark_line(color=_style.INK, strokeWidth=1.75, clip=True)
        .encode(x=x, y=y, order="score:Q")
        .properties(name="fit")
    )
    tooltip = [
        alt.Tooltip("score:Q", title=score_label, format=".4~g"),
        alt.Tooltip("fitted:Q", title=y_label, format=".4~g"),
        alt.Tooltip("block:Q", title="block"),
        alt.Tooltip("weight:Q", format=".4~g"),
        alt.Tooltip("rows:Q"),
    ]
    if not band.is_empty():
        tooltip += [
            alt.Tooltip("lower:Q", title="band from", format=".4~g"),
            alt.Tooltip("upper:Q", title="band to", format=".4~g"),
        ]
    shown = _spread(frame, max_points).select(
        "score", "fitted", "block", "weight", "rows", "lower", "upper"
    )
    layers.append(
        alt.Chart(inline(shown))
        .mark_point(opacity=0, size=40, clip=True)
        .encode(x=x, y=y, tooltip=tooltip)
        .properties(name="points")
    )
    diagram = alt.layer(*layers).properties(
        width=width, height=height, view=alt.ViewBackground(stroke=_style.INK)
    )
    text = title if title is not None else "CORP reliability diagram"
    heading = _style.title(text, _subtitle(summary, band))
    if histogram_height == 0:
        return alt.vconcat(diagram).properties(title=heading)
    weighted = bool((frame.get_column("weight") != frame.get_column("rows")).any())
    which = (pl.col("score") * bins).floor().clip(0, bins - 1).cast(pl.Int64)
    counts = (
        frame.group_by(which.alias("bin"))
        .agg(pl.col("weight").sum())
        .with_columns(
            (pl.col("bin") / bins).alias("start"),
            ((pl.col("bin") + 1) / bins).alias("end"),
            (pl.col("weight") / pl.col("weight").sum()).alias("share"),
        )
        .sort("bin")
    )
    share = "share of weight" if weighted else "share of rows"
    histogram = (
        alt.Chart(inline(counts, ["start", "end", "share"]))
        .mark_rect(color=_style.FULL, stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("start:Q", title=score_label, scale=unit, axis=axis),
            x2="end:Q",
            y=alt.Y("share:Q", title=share, axis=_style.axis(tickCount=3, format="%")),
            tooltip=[
                alt.Tooltip("start:Q", title="from", format=".3~g"),
                alt.Tooltip("end:Q", title="to", format=".3~g"),
                alt.Tooltip("share:Q", title=share, format=".2%"),
            ],
        )
        .properties(
            name="histogram",
            width=width,
            height=histogram_height,
            view=alt.ViewBackground(stroke=_style.INK),
        )
    )
    return alt.vconcat(diagram, histogram, spacing=8).properties(title=heading)
