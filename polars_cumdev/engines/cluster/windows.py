"""Calibration drift on a cluster: the time windows made where the rows are, engine-neutral.

:func:`polars_cumdev.drift.calibration_drift` is a calibration per (group,
window) followed by a family-wise adjustment across the rows of that table.
On a cluster the pieces are:

| function | runs on | what it does |
| --- | --- | --- |
| :func:`drift_request` | driver | the in-process argument and schema checks; the request |
| :func:`tally_part` | worker | a part's rows, null times, first and last ``every``-window |
| :func:`bounds` | driver | raise the null-time check; the data's first and last window |
| :func:`window_rows` | worker | each row's window(s): (row of the part, window start) |
| (the engine's calibration) | both | by score ranges, the window start a key beside the groups |
| :func:`finish_drift` | driver | :func:`~polars_cumdev.drift.family_wise`, sorted as in process |

Overlapping windows (``period``) repeat a row once per window holding it;
which windows are kept depends on the first and last window of the whole
data, so those two are found over all the parts before any part is windowed.
Only one tally row per part reaches the driver before the calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_cumdev.drift import calibration_drift, family_wise, roll, untimed
from polars_cumdev.engines.cluster.checks import raise_tally, tally
from polars_cumdev.errors import InvalidParameterError

__all__ = ["ROW", "DriftRequest", "bounds", "drift_request", "finish_drift", "tally_part"]

#: The column of :func:`window_rows` holding a row's place in its part.
ROW = "__cumdev_row"
_FIRST, _LAST = "__cumdev_first", "__cumdev_last"


@dataclass(frozen=True)
class DriftRequest:
    """The arguments of one cluster drift (small, shipped to the workers)."""

    groups: tuple[str, ...]
    time: str
    every: str
    period: str | None
    score: str
    response: str
    weight: str | None
    alpha: float
    adjustment: str
    dtype: pl.DataType  # the time column's

    @property
    def columns(self) -> list[str]:
        """The user's columns the drift reads (each once)."""
        named = [*self.groups, self.time, self.score, self.response, self.weight]
        return list(dict.fromkeys(c for c in named if c is not None))

    @property
    def keys(self) -> list[str]:
        """The calibration's keys: the groups, then the window start (column ``time``)."""
        return [*self.groups, self.time]


def _name(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise InvalidParameterError(
            f"`{what}` must be a column name on a cluster engine (expressions run in process "
            f"only), got {value!r}"
        )


def drift_request(
    schema: pl.Schema | dict[str, pl.DataType],
    score: str,
    response: str,
    weight: str | None,
    *,
    time: str,
    every: str,
    period: str | None,
    by: str | Sequence[str] | None,
    alpha: float,
    adjustment: str,
) -> DriftRequest:
    """Check the arguments against ``schema`` as in process, and build the request.

    The in-process :func:`~polars_cumdev.drift.calibration_drift` is built
    (not run) on a frame of no row with this schema: its argument and schema
    errors are raised here, with the same class and message.
    """
    groups = [] if by is None else [by] if isinstance(by, str) else list(by)
    for value, what in [(score, "score"), (response, "response"), *[(g, "by") for g in groups]]:
        _name(value, what)
    if weight is not None:
        _name(weight, "weight")
    empty = pl.DataFrame(schema=dict(schema)).lazy()
    calibration_drift(
        empty, score, response, weight, time=time, every=every, period=period, by=groups or None,
        alpha=alpha, adjustment=adjustment,
    )  # fmt: skip
    dtype = dict(schema)[time]
    return DriftRequest(
        tuple(groups), time, every, period, score, response, weight, float(alpha), adjustment,
        dtype,
    )  # fmt: skip


def tally_part(chunk: pl.DataFrame, request: DriftRequest) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A part's tally of the null-time check and its first and last ``every``-window."""
    base = pl.col(request.time).dt.truncate(request.every)
    counts = tally(chunk, [untimed(request.time)], None)
    ends = chunk.select(base.min().alias(_FIRST), base.max().alias(_LAST))
    return counts, ends


def bounds(
    request: DriftRequest, parts: Sequence[tuple[pl.DataFrame, pl.DataFrame]]
) -> tuple[Any, Any]:
    """Raise the null-time check as in process; the first and last window over all parts."""
    tallies = pl.concat([t for t, _ in parts], how="vertical_relaxed") if parts else pl.DataFrame()
    raise_tally(tallies, [untimed(request.time)], None, lambda _: 0)
    if not parts:
        return None, None
    ends = pl.concat([e for _, e in parts], how="vertical_relaxed")
    return ends.get_column(_FIRST).min(), ends.get_column(_LAST).max()


def window_rows(chunk: pl.DataFrame, request: DriftRequest, first: Any, last: Any) -> pl.DataFrame:
    """Each row's window start(s): columns :data:`ROW` (its place in ``chunk``) and ``time``.

    Disjoint windows: one row each, ``time`` truncated to ``every``.
    Overlapping windows: one row per window holding it, kept as
    :func:`polars_cumdev.drift.rolling_windows` keeps them given the data's
    first and last window (``first``, ``last``: from :func:`bounds`).
    """
    time = request.time
    rows = chunk.select(pl.int_range(pl.len(), dtype=pl.Int64).alias(ROW), pl.col(time))
    if request.period is None:
        return rows.with_columns(pl.col(time).dt.truncate(request.every))
    low = pl.lit(first, dtype=request.dtype)
    high = pl.lit(last, dtype=request.dtype)
    rolled = roll(rows.lazy(), time, request.every, request.period, low, high)
    return rolled.collect(engine="in-memory")


def windowed(chunk: pl.DataFrame, request: DriftRequest, first: Any, last: Any) -> pl.DataFrame:
    """``chunk`` with ``time`` replaced by the window start, rows repeated per window."""
    found = window_rows(chunk, request, first, last)
    taken = chunk.select(pl.all().gather(found.get_column(ROW)))
    return taken.with_columns(found.get_column(request.time))


def finish_drift(request: DriftRequest, table: pl.DataFrame) -> pl.DataFrame:
    """The family-wise columns across the (group, window) rows, sorted as in process."""
    adjusted = family_wise(table.lazy(), alpha=request.alpha, adjustment=request.adjustment)
    return adjusted.sort(request.keys).collect(engine="in-memory")
