"""Shared look of every chart: colours, stroke widths, fonts and axis presets.

The styling lives on the marks and axes themselves rather than in a top-level
``config`` block, so the charts stay composable (Altair refuses to layer or
concatenate charts that carry their own ``config``).
"""

from __future__ import annotations

from typing import Any

import altair as alt

__all__ = [
    "FONT",
    "FULL",
    "INK",
    "LIGHT",
    "LOCATED",
    "MUTED",
    "NOT_FLAGGED",
    "REFERENCE",
    "RESAMPLE",
    "SIGMA",
    "SIGNIFICANT",
    "SUBPOPULATION",
    "TRIANGLE_FILL",
    "axis",
    "title",
]

#: Foreground colour of lines, points, axes and text (the subpopulation).
INK = "#000000"
#: The subpopulation in reliability diagrams (black, as in the paper).
SUBPOPULATION = INK
#: The full population in reliability diagrams (gray, as in the paper).
FULL = "#8a8a8a"
#: Bootstrap resamples drawn behind the observed reliability diagram.
RESAMPLE = "#d4d4d4"
#: Secondary text (subtitles, reference-line labels).
MUTED = "#555555"
#: Very light fill, e.g. the inside of the triangle at the origin.
LIGHT = "#ececec"
TRIANGLE_FILL = LIGHT
#: Shading of the located stretch on the cumulative plot (a pale orange).
LOCATED = "#fbd9b8"
#: Reference lines (diagonal, null mean of the Kuiper statistic).
REFERENCE = "#7a7a7a"
#: Groups whose Benjamini-Hochberg q-value passes the threshold.
SIGNIFICANT = "#c2281d"
#: Groups whose q-value does not pass (or is missing).
NOT_FLAGGED = "#8a8a8a"

#: The Greek letter sigma, for text (spelled by name to keep sources ASCII-clear).
SIGMA = "\N{GREEK SMALL LETTER SIGMA}"

FONT = "sans-serif"
TITLE_SIZE = 13
SUBTITLE_SIZE = 11
LABEL_SIZE = 10
AXIS_TITLE_SIZE = 11
MAJOR_TICK = 6
MINOR_TICK = 3


def axis(**overrides: Any) -> alt.Axis:
    """Return an axis in the house style (black, no grid), updated with ``overrides``.

    Parameters
    ----------
    **overrides
        Any :class:`altair.Axis` property; these win over the defaults.

    Returns
    -------
    altair.Axis
        The axis definition.
    """
    props: dict[str, Any] = {
        "grid": False,
        "domainColor": INK,
        "tickColor": INK,
        "labelColor": INK,
        "titleColor": INK,
        "labelFont": FONT,
        "titleFont": FONT,
        "labelFontSize": LABEL_SIZE,
        "titleFontSize": AXIS_TITLE_SIZE,
        "titleFontWeight": "normal",
        "tickSize": MAJOR_TICK,
    }
    props.update(overrides)
    return alt.Axis(**props)


#: Width of a character as a share of the font size, generous enough for wide
#: fallback fonts (DejaVu Sans averages about 0.6 em on such text).
CHAR_WIDTH = 0.62


def wrap(text: str, width: int | None, size: int) -> list[str]:
    """``text`` in lines that fit ``width`` pixels at font ``size`` (one line when ``None``)."""
    if width is None:
        return [text]
    room = max(20, int(width / (CHAR_WIDTH * size)))
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > room:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


#: Most lines of a chart's subtitle (issue 36: a subtitle is read, not studied).
MAX_SUBTITLE_LINES = 3


def fit_subtitle(lines: list[str], width: int | None) -> list[str]:
    """At most :data:`MAX_SUBTITLE_LINES` lines of subtitle, nothing left out.

    Each line wrapped to ``width``; when that makes too many lines, the given
    lines are run together ("; ") and cut into that many lines of about equal
    length, which may then be wider than ``width`` (the chart's bounds grow
    with its title). The first given line comes first: a chart puts its
    verdict (the located stretch, or why none is shaded) there.
    """
    wrapped = [part for line in lines for part in wrap(line, width, SUBTITLE_SIZE)]
    if len(wrapped) <= MAX_SUBTITLE_LINES:
        return wrapped
    text = "; ".join(line.rstrip(";") for line in lines)
    room = -(-len(text) // MAX_SUBTITLE_LINES)  # ceil
    packed: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > room and len(packed) < MAX_SUBTITLE_LINES - 1:
            packed.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*packed, line] if line else packed


def title(
    text: str, subtitle: str | list[str] | None = None, *, width: int | None = None
) -> alt.TitleParams:
    """Return a chart title (and optional subtitle lines) in the house style.

    Parameters
    ----------
    text
        The title.
    subtitle
        One line, several lines, or ``None`` for no subtitle; at most
        :data:`MAX_SUBTITLE_LINES` are shown (:func:`fit_subtitle`), the
        first given first.
    width
        The chart's width in pixels: lines longer than fit (measured with a
        wide font's character width, :data:`CHAR_WIDTH`) are wrapped, so a
        viewer without the font Vega measured with does not cut them off;
        the title is then a list of lines. ``None``: one line, no wrapping.

    Returns
    -------
    altair.TitleParams
        The title definition.
    """
    lines = wrap(text, width, TITLE_SIZE)
    props: dict[str, Any] = {
        "text": text if width is None else lines,
        "anchor": "middle",
        "font": FONT,
        "fontSize": TITLE_SIZE,
        "fontWeight": "normal",
        "color": INK,
        "offset": 10,
    }
    if subtitle:
        given = [subtitle] if isinstance(subtitle, str) else list(subtitle)
        subtitle = fit_subtitle(given, width)
        props.update(
            subtitle=subtitle,
            subtitleFont=FONT,
            subtitleFontSize=SUBTITLE_SIZE,
            subtitleColor=MUTED,
        )
    return alt.TitleParams(**props)
