"""Turning tidy Polars frames into data embedded in a chart.

Every chart embeds its rows inline as :class:`altair.InlineData` built here,
rather than handing the frame to Altair's data transformers. That choice is
deliberate:

* only the columns a chart draws are embedded, with float NaN and infinities
  replaced by null (JSON has no NaN), and group keys of any dtype turned
  into display strings by the chart that needs them;
* Altair's ``MaxRowsError`` (raised by the default transformer above 5,000
  rows when ``to_dict`` runs, possibly much later, e.g. in a report) never
  fires, and no global transformer state is touched;
* long cumulative curves are thinned for display only by
  :func:`thin_columns`, which keeps every pixel column's first, last, lowest
  and highest point, so the drawn line keeps its envelope, its range
  (Kuiper's statistic) and its largest excursion (Kolmogorov-Smirnov's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import polars as pl

from polars_cumdev.errors import ColumnNotFoundError, ColumnTypeError, InvalidParameterError

__all__ = ["as_frame", "inline", "one_per_column", "require", "thin_columns"]


def as_frame(frame: Any, what: str) -> pl.DataFrame:
    """Return ``frame`` as an eager DataFrame (a LazyFrame is collected).

    Parameters
    ----------
    frame
        A :class:`polars.DataFrame` or :class:`polars.LazyFrame`.
    what
        Name of the frame kind, for error messages.

    Returns
    -------
    polars.DataFrame
        The eager frame.

    Raises
    ------
    ColumnTypeError
        If ``frame`` is not a Polars frame.
    """
    if isinstance(frame, pl.LazyFrame):
        return frame.collect()
    if isinstance(frame, pl.DataFrame):
        return frame
    raise ColumnTypeError(
        f"the {what} frame must be a polars DataFrame or LazyFrame, got {frame!r}"
    )


def require(frame: pl.DataFrame, columns: Sequence[str], what: str) -> None:
    """Raise :class:`ColumnNotFoundError` unless ``frame`` has every column.

    Parameters
    ----------
    frame
        The frame to check.
    columns
        Column names that must be present.
    what
        Name of the frame kind, for error messages.
    """
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ColumnNotFoundError(
            f"the {what} frame lacks column(s) {missing}; it has {frame.columns}"
        )


def _clean(frame: pl.DataFrame) -> pl.DataFrame:
    """Replace non-finite floats by null so the rows serialize as plain JSON."""
    fixes = [
        pl.when(pl.col(name).is_finite()).then(pl.col(name)).otherwise(None).alias(name)
        for name, dtype in frame.schema.items()
        if dtype.is_float()
    ]
    return frame.with_columns(fixes) if fixes else frame


def inline(frame: pl.DataFrame, columns: Sequence[str] | None = None) -> alt.InlineData:
    """Embed ``frame`` (optionally only ``columns``) as inline chart data.

    Parameters
    ----------
    frame
        Numeric, boolean or string columns only (callers cast other dtypes).
    columns
        Columns to keep; all when ``None``.

    Returns
    -------
    altair.InlineData
        Rows as a list of dicts; Altair moves them to the top-level
        ``datasets`` when the chart is serialized.
    """
    if columns is not None:
        frame = frame.select(columns)
    return alt.InlineData(values=_clean(frame).to_dicts())


def _column(x: str, columns: int) -> pl.Expr:
    """The pixel column (0 to ``columns`` - 1) of each row, ``x`` in [0, 1]."""
    return (pl.col(x).clip(0.0, 1.0) * columns).floor().clip(0, columns - 1).cast(pl.Int64)


def thin_columns(frame: pl.DataFrame, x: str, y: str, columns: int) -> pl.DataFrame:
    """Thin a line for display, keeping each pixel column's extremes (the "M4" rule).

    The horizontal axis ``x`` (ascending, in [0, 1]) is cut into ``columns``
    equal columns (one per pixel of the plotting area); in each column the
    rows with the smallest and largest ``x`` and the smallest and largest
    ``y`` are kept, at most 4 per column. A line through the kept rows has,
    in every column, exactly the full line's highest and lowest value and
    the same entry and exit points, so at the drawn resolution it cannot be
    told from the full line; the overall extremes of ``y`` (Kuiper's and
    Kolmogorov-Smirnov's points) always survive.

    Parameters
    ----------
    frame
        Rows sorted by ``x``.
    x, y
        Horizontal and vertical columns.
    columns
        Number of pixel columns (at least 1).

    Returns
    -------
    polars.DataFrame
        The kept rows, in their original order (``frame`` itself when it
        has at most 4 rows per column).
    """
    if isinstance(columns, bool) or not isinstance(columns, int) or columns < 1:
        raise InvalidParameterError(f"`columns` must be a positive int, got {columns!r}")
    if frame.height <= 4 * columns:
        return frame
    row = pl.col("_row")
    kept = (
        frame.with_row_index("_row")
        .group_by(_column(x, columns).alias("_column"))
        .agg(
            row.min().alias("first"),
            row.max().alias("last"),
            row.sort_by(y, nulls_last=True).first().alias("low"),
            row.sort_by(y, descending=True, nulls_last=True).first().alias("high"),
        )
        .unpivot(index="_column")
        .get_column("value")
        .unique()
        .sort()
    )
    return frame[kept.to_list()]


def one_per_column(frame: pl.DataFrame, x: str, y: str, columns: int) -> pl.DataFrame:
    """One row per pixel column (its last), plus the rows of the overall max and min of ``y``.

    For tooltips on a thinned line: hovering anywhere finds a nearby point,
    and the two extremes can be read exactly. Rows keep their order.
    """
    if frame.height <= columns:
        return frame
    row = pl.col("_row")
    indexed = frame.with_row_index("_row")
    last = indexed.group_by(_column(x, columns)).agg(row.max()).get_column("_row")
    ends = indexed.select(
        row.sort_by(y, nulls_last=True).first().alias("low"),
        row.sort_by(y, descending=True, nulls_last=True).first().alias("high"),
    ).row(0)
    kept = pl.concat([last, pl.Series("_row", ends, dtype=last.dtype)]).unique().sort()
    return frame[kept.to_list()]
