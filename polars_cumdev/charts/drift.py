"""Drift chart: each time window's calibration z against time, with the family-wise line.

The frame drawn is the tidy output of :func:`polars_cumdev.drift.calibration_drift`
(or of :func:`polars_cumdev.drift.family_wise` on any per-window table): one row
per window with the window's start, its z (``ecce_r_z``, or ``kuiper_z`` for a
screen), ``critical_z``, ``fw_p``, ``flagged``, ``alpha`` and ``adjustment``.

The chart draws the z of every window as a line with points, the
family-wise critical line z(alpha / m) (Bonferroni's line, which is also the
first and strictest step of Holm's method) as a dashed red rule, and with
Holm each window's own critical z as a short gray tick (the windows ranked
later by p-value face lower thresholds). Windows flagged at the family-wise
level are filled red and named above their point; the subtitle names them
too, or says that none is flagged. Nothing else is claimed.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require
from polars_cumdev.errors import ColumnTypeError, InvalidParameterError

__all__ = ["drift"]

_REQUIRED = ("critical_z", "fw_p", "flagged", "alpha", "adjustment")
_STATISTICS = {"ecce_r_z": "ECCE-R", "kuiper_z": "Kuiper's statistic"}


def _time_column(frame: pl.DataFrame, time: str | None) -> str:
    if time is None:
        temporal = [n for n, t in frame.schema.items() if t in (pl.Date, pl.Datetime)]
        if len(temporal) != 1:
            raise InvalidParameterError(
                f"the drift frame has {len(temporal)} date/time columns {temporal}; "
                "name the window column with `time=`"
            )
        return temporal[0]
    require(frame, [time], "drift")
    if frame.schema[time] not in (pl.Date, pl.Datetime):
        raise ColumnTypeError(f"time column {time!r} has dtype {frame.schema[time]}")
    return time


def _statistic(frame: pl.DataFrame) -> str:
    for name in _STATISTICS:
        if name in frame.columns:
            return name
    raise InvalidParameterError(
        f"the drift frame has neither of {list(_STATISTICS)}; it has {frame.columns}"
    )


def _window_text(frame: pl.DataFrame, time: str) -> pl.Expr:
    """Dates alone when every window starts at midnight, else date and time."""
    column = pl.col(time)
    if (
        frame.schema[time] == pl.Date
        or frame.select((column.cast(pl.Datetime).dt.time() == pl.time(0)).all()).item()
    ):
        return column.dt.strftime("%Y-%m-%d")
    return column.dt.strftime("%Y-%m-%d %H:%M")


#: Horizontal room of one date label on the time axis, in pixels (thinning the ticks).
_LABEL_ROOM = 78


def _start_ticks(starts: pl.Series, width: int) -> list[alt.DateTime]:
    """The windows' starts as the axis ticks, every k-th one when they would crowd.

    Given as Vega-Lite date-times in local time, as the data's strings are
    read, so each tick sits under its window's point (left alone, Vega puts
    weekly ticks on Sundays while ``dt.truncate("1w")`` starts weeks on
    Mondays).
    """
    step = max(1, -(-len(starts) * _LABEL_ROOM // max(width, 1)))
    ticks = []
    for start in starts.cast(pl.Datetime("us")).gather_every(step).to_list():
        ticks.append(
            alt.DateTime(
                year=start.year,
                month=start.month,
                date=start.day,
                hours=start.hour,
                minutes=start.minute,
                seconds=start.second,
            )
        )
    return ticks


def drift(
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    time: str | None = None,
    title: str | None = None,
    width: int = 560,
    height: int = 260,
) -> alt.LayerChart:
    """Each window's z against time, the family-wise critical line, flagged windows named.

    Parameters
    ----------
    frame
        Output of :func:`polars_cumdev.drift.calibration_drift` (one row per
        window; filter to one group first when it was run with ``by``).
    time
        The window column; by default the frame's only Date/Datetime column.
    title
        Chart title; a default names the statistic.
    width, height
        Size of the plotting area in pixels.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    ColumnNotFoundError
        If a required column is missing.
    InvalidParameterError
        If the window column cannot be found, or a window appears twice.
    """
    data = as_frame(frame, "drift")
    require(data, _REQUIRED, "drift")
    time = _time_column(data, time)
    z = _statistic(data)
    if data.get_column(time).is_duplicated().any():
        raise InvalidParameterError(
            f"the drift frame has several rows per window of {time!r} (one per group?); "
            "filter it to one group first"
        )
    alpha = float(data.get_column("alpha")[0])
    adjustment = str(data.get_column("adjustment")[0])
    rows = data.sort(time).select(
        pl.col(time).dt.strftime("%Y-%m-%dT%H:%M:%S").alias("start"),
        _window_text(data, time).alias("window"),
        pl.col(z).cast(pl.Float64).alias("z"),
        pl.col("critical_z").cast(pl.Float64),
        pl.col("fw_p").cast(pl.Float64),
        pl.col("flagged").cast(pl.Boolean),
        *([pl.col("n").cast(pl.Int64)] if "n" in data.columns else []),
    )
    flagged_rows = rows.filter(pl.col("flagged"))
    names = flagged_rows.get_column("window").to_list()
    windows = rows.filter(pl.col("fw_p").is_not_null()).height
    line = rows.get_column("critical_z").max()
    method = "Holm" if adjustment == "holm" else "Bonferroni"
    what = _STATISTICS[z]
    flag_text = (
        f"flagged ({len(names)}): " + ", ".join(names)
        if names
        else "no window flagged (none crosses its critical z)"
    )
    subtitle = [
        f"{windows} windows; family-wise level {alpha:g} ({method}); {flag_text}",
        f"dashed red: critical z = {line:.3f} (level {alpha:g} / {windows})"
        + ("; gray ticks: each window's Holm threshold" if adjustment == "holm" else ""),
    ]
    heading = _style.title(
        title or f"{what} in units of {_style.SIGMA}, window by window", subtitle
    )

    starts = data.get_column(time).drop_nulls().unique().sort()
    dated = rows.get_column("window").str.len_chars().max() == len("YYYY-MM-DD")
    x = alt.X(
        "start:T",
        axis=_style.axis(
            title=f"window ({time}, by its start)",
            format="%Y-%m-%d" if dated else "%Y-%m-%d %H:%M",
            values=_start_ticks(starts, width),
            labelOverlap="greedy",
        ),
        scale=alt.Scale(padding=14),
    )
    y_axis = _style.axis(title=f"z ({what} / {_style.SIGMA})")
    tooltip = [
        alt.Tooltip("window:N"),
        *([alt.Tooltip("n:Q")] if "n" in rows.columns else []),
        alt.Tooltip("z:Q", format=".4~g"),
        alt.Tooltip("critical_z:Q", title="critical z", format=".4~g"),
        alt.Tooltip("fw_p:Q", title=f"{method} p", format=".3~g"),
        alt.Tooltip("flagged:N"),
    ]
    data_rows = inline(rows)
    base = alt.Chart(data_rows)
    layers: list[alt.Chart] = [
        base.mark_line(color=_style.INK, strokeWidth=1)
        .encode(x=x, y=alt.Y("z:Q", axis=y_axis, scale=alt.Scale(zero=True)))
        .properties(name="z_line"),
        base.mark_point(filled=True, size=40, opacity=1)
        .encode(
            x=x,
            y="z:Q",
            color=alt.Color(
                "flagged:N",
                scale=alt.Scale(domain=[True, False], range=[_style.SIGNIFICANT, _style.INK]),
                legend=None,
            ),
            tooltip=tooltip,
        )
        .properties(name="windows"),
        alt.Chart(alt.InlineData(values=[{"critical": line}]))
        .mark_rule(color=_style.SIGNIFICANT, strokeDash=[6, 4], strokeWidth=1.25)
        .encode(y="critical:Q")
        .properties(name="critical_line"),
    ]
    if adjustment == "holm":
        layers.insert(
            0,
            base.mark_tick(color=_style.REFERENCE, thickness=1.5, size=14)
            .encode(x=x, y="critical_z:Q")
            .properties(name="holm_thresholds"),
        )
    if names:
        layers.append(
            alt.Chart(inline(flagged_rows))
            .mark_text(dy=-12, color=_style.SIGNIFICANT, font=_style.FONT, fontSize=11)
            .encode(x=x, y="z:Q", text="window:N")
            .properties(name="flagged_names")
        )
    return alt.layer(*layers).properties(
        title=heading, width=width, height=height, view=alt.ViewBackground(stroke=_style.INK)
    )
