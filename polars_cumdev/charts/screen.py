"""Overview of a screen: every group's Kuiper statistic in units of sigma.

The frame drawn has one row per group: the group column(s), then ``n``,
``kuiper_z``, ``kuiper_p``, ``kuiper_q`` (Benjamini-Hochberg) and ``note``
(other statistic columns are ignored). Groups are ranked by ``kuiper_z``,
largest first. A dashed line marks 2 sqrt(2/pi), about 1.596: the expected
range of a standard Brownian motion over [0, 1], hence roughly the typical
``kuiper_z`` of a group that does not deviate at all. Groups whose q-value is
at most ``alpha`` are filled in colour.

Up to ``top`` groups the chart is a labelled dot chart (one row per group);
with more groups it stacks a labelled dot chart of the ``top`` highest-ranked
groups above an unlabelled rank-against-z plot of all of them (tooltips name
every point). Groups whose ``kuiper_z`` is null or not finite (their
``note`` says why) are left out and counted in the subtitle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import polars as pl

from polars_cumdev.calibration import CALIBRATION_COLUMNS
from polars_cumdev.charts import _style
from polars_cumdev.charts._data import as_frame, inline, require
from polars_cumdev.compare import COMPARE_ALL_COLUMNS
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method.statistics import STATISTIC_COLUMNS as SCREEN_COLUMNS

__all__ = ["KUIPER_NULL_MEAN", "STATISTIC_COLUMNS", "screen"]

#: Expected range of standard Brownian motion on [0, 1], 2 sqrt(2 / pi).
KUIPER_NULL_MEAN = 2.0 * math.sqrt(2.0 / math.pi)
#: Columns of screen, calibration and compare frames that are statistics, not group keys.
STATISTIC_COLUMNS = frozenset({*SCREEN_COLUMNS, *CALIBRATION_COLUMNS, *COMPARE_ALL_COLUMNS})
_REQUIRED = ("n", "kuiper_z", "kuiper_p", "kuiper_q")
_AUTO_ALL = 40  # label every group up to this many
_AUTO_TOP = 15  # otherwise label this many
_ROW = 16  # pixels per labelled group
_MARGIN = 12  # pixels left beyond the largest dot


def _keys(frame: pl.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        # p_method: how each p-value was obtained (method/finite_sample.py), not a key
        keys = [c for c in frame.columns if c not in (*STATISTIC_COLUMNS, "p_method")]
        if not keys:
            raise InvalidParameterError(
                "the screen frame has no group column; pass `by=` naming it"
            )
        return keys
    keys = [by] if isinstance(by, str) else list(by)
    if not keys:
        raise InvalidParameterError("`by` must name at least one column")
    require(frame, keys, "screen")
    return keys


def _label(keys: list[str]) -> pl.Expr:
    """One display string per group: the value, or ``key=value, ...`` for several keys."""
    parts = [pl.col(k).cast(pl.String).fill_null("(null)") for k in keys]
    if len(keys) == 1:
        return parts[0]
    return pl.concat_str(
        [pl.concat_str([pl.lit(f"{k}="), p]) for k, p in zip(keys, parts, strict=True)],
        separator=", ",
    )


def _check(alpha: float, top: int | None) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(f"`alpha` must be in (0, 1), got {alpha!r}")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise InvalidParameterError(f"`top` must be a positive int or None, got {top!r}")


def _encodings(
    flagged: str, unflagged: str, group_title: str
) -> tuple[alt.Color, alt.Fill, list[alt.Tooltip]]:
    domain = [flagged, unflagged]
    legend = alt.Legend(title=None, orient="top", labelFont=_style.FONT, symbolSize=50)
    stroke = alt.Color(
        "flag:N",
        scale=alt.Scale(domain=domain, range=[_style.SIGNIFICANT, _style.NOT_FLAGGED]),
        legend=legend,
    )
    fill = alt.Fill(
        "flag:N",
        scale=alt.Scale(domain=domain, range=[_style.SIGNIFICANT, "#ffffff"]),
        legend=legend,
    )
    tooltip = [
        alt.Tooltip("group:N", title=group_title),
        alt.Tooltip("rank:Q"),
        alt.Tooltip("n:Q"),
        alt.Tooltip("kuiper_z:Q", title="Kuiper z", format=".4~g"),
        alt.Tooltip("kuiper_p:Q", title="p", format=".3~g"),
        alt.Tooltip("kuiper_q:Q", title="BH q", format=".3~g"),
        alt.Tooltip("note:N"),
    ]
    return stroke, fill, tooltip


def _null_rule(channel: str) -> alt.Chart:
    rule = alt.Chart(alt.InlineData(values=[{"null_mean": KUIPER_NULL_MEAN}])).mark_rule(
        color=_style.REFERENCE, strokeDash=[4, 4], strokeWidth=1
    )
    encode = {channel: alt.X("null_mean:Q") if channel == "x" else alt.Y("null_mean:Q")}
    return rule.encode(**encode).properties(name="null_mean")


def screen(
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    by: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    top: int | None = None,
    width: int = 460,
) -> alt.LayerChart | alt.VConcatChart:
    """Overview of every group's Kuiper z, largest first, significant groups filled.

    Parameters
    ----------
    frame
        Screen frame: group column(s), ``n``, ``kuiper_z``, ``kuiper_p``,
        ``kuiper_q`` and ``note`` (other statistic columns are ignored).
    by
        Group column name(s); by default every column that is not a known
        statistic column.
    alpha
        The level the table was computed at: groups whose ``significant``
        column (the table's decision, :mod:`polars_cumdev.method.findings`)
        is true are filled in colour; a frame without that column is judged
        by ``kuiper_q <= alpha``.
    top
        Number of highest-ranked groups drawn with labels. ``None`` labels
        every group when there are at most 40, else the top 15. When fewer
        groups are labelled than drawn, a rank-against-z plot of all groups
        (tooltips only) is stacked below the labelled ones.
    width
        Width of the plotting area in pixels.

    Returns
    -------
    altair.LayerChart or altair.VConcatChart
        The dot chart alone, or the dot chart above the rank plot.

    Raises
    ------
    ColumnNotFoundError
        If a required column or a ``by`` column is missing.
    InvalidParameterError
        If ``alpha``, ``top`` or ``by`` is invalid, or no group column exists.
    """
    _check(alpha, top)
    data = as_frame(frame, "screen")
    require(data, _REQUIRED, "screen")
    keys = _keys(data, by)
    note = pl.col("note").cast(pl.String) if "note" in data.columns else pl.lit(None, pl.String)
    flagged, unflagged = f"BH q ≤ {alpha:g}", f"BH q > {alpha:g} (or none)"
    # The table's own decision (polars_cumdev.method.findings) where it carries one.
    decision = (
        pl.col("significant").fill_null(False)
        if "significant" in data.columns
        else (pl.col("kuiper_q") <= alpha).fill_null(False)
    )
    rows = data.select(
        _label(keys).alias("group"),
        pl.col("n").cast(pl.Int64),
        pl.col("kuiper_z", "kuiper_p", "kuiper_q").cast(pl.Float64),
        note.alias("note"),
        decision.alias("_significant"),
    )
    usable = pl.col("kuiper_z").is_not_null() & pl.col("kuiper_z").is_finite()
    omitted = rows.filter(~usable).height
    rows = (
        rows.filter(usable)
        .sort("kuiper_z", descending=True, maintain_order=True)
        .with_row_index("rank", offset=1)
        .with_columns(
            pl.col("rank").cast(pl.Int64),
            pl.when(pl.col("_significant"))
            .then(pl.lit(flagged))
            .otherwise(pl.lit(unflagged))
            .alias("flag"),
        )
        .drop("_significant")
    )
    shown = rows.height
    labelled = min(shown, top if top is not None else (shown if shown <= _AUTO_ALL else _AUTO_TOP))
    stroke, fill, tooltip = _encodings(flagged, unflagged, ", ".join(keys))

    count_flagged = rows.filter(pl.col("flag") == flagged).height
    subtitle = [
        f"{shown} groups ranked by Kuiper z; {count_flagged} with BH q ≤ {alpha:g} (filled)",
        f"dashed: 2√(2/π) ≈ {KUIPER_NULL_MEAN:.4f}, the mean of Kuiper z without deviation",
    ]
    if omitted:
        subtitle.append(
            f"{omitted} group{'s' if omitted != 1 else ''} without a normalized statistic "
            "not shown (see the note column)"
        )
    heading = _style.title(f"Kuiper's statistic in units of {_style.SIGMA}, by group", subtitle)

    x_axis = _style.axis(title=f"Kuiper z (Kuiper's statistic / {_style.SIGMA})", tickCount=8)
    # An explicit upper end a few pixels beyond the largest z (and the null
    # mean's rule), so that the largest dot is drawn whole inside the frame.
    reach = max(float(rows.get_column("kuiper_z").max() or 0.0), KUIPER_NULL_MEAN)  # type: ignore[arg-type]
    z_scale = alt.Scale(domain=[0.0, reach * (1.0 + _MARGIN / width)], zero=True, nice=True)
    dots_data = inline(rows.head(labelled))
    dots = alt.layer(
        _null_rule("x"),
        alt.Chart(dots_data)
        .mark_point(filled=False, size=50, strokeWidth=1.25, opacity=1)
        .encode(
            x=alt.X("kuiper_z:Q", scale=z_scale, axis=x_axis),
            y=alt.Y(
                "group:N",
                sort=alt.EncodingSortField("rank", op="min", order="ascending"),
                axis=_style.axis(
                    title=None,
                    grid=True,
                    gridColor=_style.LIGHT,
                    labelLimit=220,
                    tickSize=0,
                ),
            ),
            color=stroke,
            fill=fill,
            tooltip=tooltip,
        )
        .properties(name="groups"),
    ).properties(
        width=width,
        height=max(_ROW * labelled, 40),
        view=alt.ViewBackground(stroke=_style.INK),
    )
    if labelled >= shown:
        return dots.properties(title=heading)

    band = (
        alt.Chart(alt.InlineData(values=[{"start": 0.5, "end": labelled + 0.5}]))
        .mark_rect(color=_style.LIGHT)
        .encode(x="start:Q", x2="end:Q")
        .properties(name="labelled_band")
    )
    overview = alt.layer(
        band,
        _null_rule("y"),
        alt.Chart(inline(rows))
        .mark_point(filled=False, size=16, strokeWidth=1, opacity=0.9)
        .encode(
            x=alt.X(
                "rank:Q",
                scale=alt.Scale(domain=[0.5, shown + 0.5], nice=False, zero=False),
                axis=_style.axis(title="rank (1 = largest Kuiper z)", tickCount=8),
            ),
            y=alt.Y("kuiper_z:Q", scale=z_scale, axis=_style.axis(title="Kuiper z")),
            color=stroke,
            fill=fill,
            tooltip=tooltip,
        )
        .properties(name="ranks"),
    ).properties(
        width=width,
        height=220,
        title=alt.TitleParams(
            f"all {shown} groups by rank (shaded: the top {labelled}, labelled above)",
            fontSize=_style.SUBTITLE_SIZE,
            fontWeight="normal",
            font=_style.FONT,
            color=_style.MUTED,
            anchor="start",
        ),
        view=alt.ViewBackground(stroke=_style.INK),
    )
    dots = dots.properties(
        title=alt.TitleParams(
            f"top {labelled} groups",
            fontSize=_style.SUBTITLE_SIZE,
            fontWeight="normal",
            font=_style.FONT,
            color=_style.MUTED,
            anchor="start",
        )
    )
    return (
        alt.vconcat(dots, overview, spacing=24)
        .resolve_scale(color="shared", fill="shared")
        .properties(title=heading)
    )
