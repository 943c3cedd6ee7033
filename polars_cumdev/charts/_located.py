"""The located stretch on the plot of cumulative differences.

A curve frame (``curve``, ``calibration_curve``, ``compare_curve``) flags
with its boolean ``located`` column the points inside the shortest stretch
whose rise (or fall) reaches D - 2 sigma (:mod:`polars_cumdev.method.location`).
The chart shades that stretch, from the point before the first flagged one
(point i) to the last flagged one (point j), and prints the scores at its
ends, the share of the weight inside (A_j - A_i) and the average deviation
there, (C_j - C_i) / (A_j - A_i): the slope of the curve over the stretch.
"""

from __future__ import annotations

from typing import NamedTuple

import altair as alt
import numpy as np
import polars as pl

from polars_cumdev.charts import _style
from polars_cumdev.charts.numbers import number, percent

__all__ = ["Stretch", "located_layer", "located_text", "stretch"]


class Stretch(NamedTuple):
    """The located stretch of a curve, as drawn."""

    a_from: float  # A_i, where the shading starts
    a_to: float  # A_j, where it ends
    from_score: float  # the score of the first point inside (point i + 1)
    to_score: float  # the score of point j
    share: float  # A_j - A_i
    deviation: float  # (C_j - C_i) / (A_j - A_i)


def stretch(frame: pl.DataFrame) -> Stretch | None:
    """The stretch flagged by ``frame``'s ``located`` column, or ``None``.

    ``frame`` is the whole curve (origin row first, sorted by ``k``); a frame
    without the column, or with no flagged point, has no stretch.
    """
    if "located" not in frame.columns:
        return None
    flags = frame.get_column("located").fill_null(False).to_numpy().astype(bool)
    inside = np.flatnonzero(flags)
    if inside.size == 0:
        return None
    first, last = int(inside[0]), int(inside[-1])
    before = max(first - 1, 0)
    a = frame.get_column("a").to_numpy()
    c = frame.get_column("cumdiff").to_numpy()
    score = frame.get_column("score").to_numpy()
    share = float(a[last] - a[before])
    if not share > 0.0:
        return None
    return Stretch(
        a_from=float(a[before]),
        a_to=float(a[last]),
        from_score=float(score[first]),
        to_score=float(score[last]),
        share=share,
        deviation=float((c[last] - c[before]) / share),
    )


def located_text(found: Stretch, weighted: bool, where: str | None = None) -> str:
    """One subtitle line: the interval, its share and the average deviation there.

    ``where`` says where the stretch lies (by default "at scores X to Y").
    """
    what = "weight" if weighted else "points"
    if where is None:
        where = f"at scores {number(found.from_score)} to {number(found.to_score)}"
    return (
        f"shaded: deviation located {where} ({percent(found.share)} of the {what}): "
        f"{found.deviation:+.3g} on average"
    )


def located_layer(found: Stretch) -> alt.Chart:
    """A light rectangle over the whole height between A_i and A_j, with a tooltip."""
    row = {
        "a_from": found.a_from,
        "a_to": found.a_to,
        "from_score": found.from_score,
        "to_score": found.to_score,
        "share": found.share,
        "deviation": found.deviation,
    }
    return (
        alt.Chart(alt.InlineData(values=[row]))
        .mark_rect(color=_style.LOCATED, opacity=0.6, clip=True)
        .encode(
            x=alt.X("a_from:Q", axis=None),
            x2="a_to:Q",
            tooltip=[
                alt.Tooltip("from_score:Q", title="located from score", format=".6~g"),
                alt.Tooltip("to_score:Q", title="to score", format=".6~g"),
                alt.Tooltip("share:Q", title="share of the weight", format=".1%"),
                alt.Tooltip("deviation:Q", title="average deviation", format="+.4~g"),
            ],
        )
        .properties(description="located")
    )
