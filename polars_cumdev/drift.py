"""Calibration over time: one test per time window, adjusted across the windows.

Monitoring asks, window after window (a week, say), whether a model's
predictions are still calibrated. Each window gets the ECCE-R test of
:func:`polars_cumdev.calibration.calibration` (method.md 2 and 4): its z is the
Kuiper range of the cumulative differences divided by sigma, equation (50) of M.
Tygert, "Cumulative deviation of a subpopulation from the full population", and
its p-value the Kuiper tail probability of that z. With m windows tested, some
window crosses the 5% line by chance alone far more often than 5% of the time,
so the windows are judged together: :func:`family_wise` adjusts the p-values
with Holm's step-down method (or Bonferroni's), which keeps the chance of
flagging any calibrated window at most ``alpha`` whatever the dependence between
the windows, and gives each window the critical z it must exceed (Bonferroni:
the one line z(alpha / m); Holm: z(alpha / (m - j + 1)) for the window ranked
j-th by p-value, the first being the Bonferroni line).

:func:`calibration_drift` composes the two for a time column, and
:func:`polars_cumdev.charts.drift` draws the result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import polars as pl

from polars_cumdev.calibration import calibration
from polars_cumdev.errors import ColumnNotFoundError, InvalidParameterError
from polars_cumdev.method import _names as nm
from polars_cumdev.method.checks import Check, guard, verdict
from polars_cumdev.method.expressions import Column, entry_point
from polars_cumdev.method.familywise import holm
from polars_cumdev.method.findings import SIGNIFICANT, findings, significant
from polars_cumdev.method.prepare import FrameLike, as_lazy, schema_of
from polars_cumdev.method.pvalues import kuiper_pvalue

__all__ = [
    "ADJUSTMENTS",
    "DRIFT_COLUMNS",
    "calibration_drift",
    "critical_z",
    "family_wise",
    "rolling_windows",
]

#: Family-wise adjustments across windows.
ADJUSTMENTS = ("holm", "bonferroni")
#: The columns :func:`family_wise` adds.
DRIFT_COLUMNS = ("windows", "fw_p", "critical_z", "flagged", "alpha", "adjustment")


def critical_z(levels: np.ndarray) -> np.ndarray:
    """The Kuiper critical z of each level: ``kuiper_pvalue(z) = level`` (method.md 4).

    Vectorized bisection on the base-10 logarithm of the p-value (which
    decreases in z), 200 halvings of [0, 64]: exact to the last bits for
    every level in (1e-300, 1).
    """
    levels = np.asarray(levels, dtype=np.float64)
    target = np.log10(levels)
    low = np.zeros_like(target)
    high = np.full_like(target, 64.0)
    for _ in range(200):  # halvings of an interval, not a loop over rows
        middle = 0.5 * (low + high)
        above = np.asarray(kuiper_pvalue(middle, log10=True)) > target
        low = np.where(above, middle, low)
        high = np.where(above, high, middle)
    return 0.5 * (low + high)


def _critical_series(levels: pl.Series) -> pl.Series:
    """:func:`critical_z` of a column of levels, null where the level is null."""
    values = critical_z(levels.fill_null(0.5).to_numpy())
    return pl.Series(np.where(levels.is_null().to_numpy(), np.nan, values)).fill_nan(None)


def _check(alpha: object, adjustment: object) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 < alpha < 1.0:
        raise InvalidParameterError(f"`alpha` must be a number in (0, 1), got {alpha!r}")
    if adjustment not in ADJUSTMENTS:
        raise InvalidParameterError(
            f"`adjustment` must be one of {list(ADJUSTMENTS)}, got {adjustment!r}"
        )


@entry_point()
def family_wise(
    table: FrameLike,
    *,
    p: str = "ecce_r_p",
    alpha: float = 0.05,
    adjustment: str = "holm",
) -> pl.LazyFrame:
    """Family-wise adjusted p-values, critical z and flags across the rows of a table.

    Parameters
    ----------
    table
        One row per window (or any family of tests): the output of
        :func:`polars_cumdev.calibration.calibration` (``p="ecce_r_p"``) or of
        :func:`polars_cumdev.screen` (``p="kuiper_p"``) with a time key.
    p
        The column of p-values (Kuiper's, method.md 4). Rows with a null p
        (too few scores; see their ``note``) are not tests: they are left out
        of m and never flagged.
    alpha
        Family-wise level.
    adjustment
        ``"holm"`` (step-down; default) or ``"bonferroni"``. Both hold the
        family-wise error rate at ``alpha`` under any dependence between the
        windows; Holm flags every window Bonferroni flags, and sometimes more.

    Returns
    -------
    pl.LazyFrame
        ``table`` with ``windows`` (m, the number of tests), ``fw_p`` (the
        adjusted p-value: Bonferroni min(1, m p); Holm max over the windows
        ranked at or before this one of min(1, (m - j + 1) p_(j))),
        ``critical_z`` (the Kuiper z this window must exceed: that of
        alpha / m, or for Holm alpha / (m - j + 1) at rank j), ``flagged``
        (``fw_p <= alpha``: the same value as ``significant``, which the one
        rule of :mod:`polars_cumdev.method.findings` sets from ``fw_p``: the
        located stretch is kept only in flagged windows, and the note of every
        other window says "not significant: fw_p = 0.2 > 0.05"), and
        ``alpha`` and ``adjustment`` as given (so that a chart of the table
        can say what was done).
    """
    _check(alpha, adjustment)
    lazy = as_lazy(table)
    if p not in schema_of(lazy):
        raise ColumnNotFoundError(f"p-value column {p!r} not found in the table")
    pv = pl.col(p)
    m = pv.count().cast(pl.Float64)
    rank = pv.rank(method="ordinal")  # 1 = smallest p; null stays null
    if adjustment == "bonferroni":
        adjusted = (pv * m).clip(upper_bound=1.0)
        level = pl.when(pv.is_not_null()).then(alpha / m)
    else:
        adjusted = holm(pv)
        level = alpha / (m - rank.cast(pl.Float64) + 1.0)
    threshold = level.map_batches(_critical_series, return_dtype=pl.Float64)
    out = lazy.with_columns(
        m.cast(pl.Int64).alias("windows"),
        adjusted.alias("fw_p"),
        threshold.alias("critical_z"),
    )
    if "note" in schema_of(lazy):  # a table with located stretches: the one rule decides
        out = findings(out, alpha, p="fw_p", symbol="fw_p")
    else:
        out = out.with_columns(significant(alpha, "fw_p").alias(SIGNIFICANT))
    return out.with_columns(
        pl.col(SIGNIFICANT).alias("flagged"),
        pl.lit(float(alpha)).alias("alpha"),
        pl.lit(adjustment).alias("adjustment"),
    )


_DURATION = re.compile(r"^([1-9][0-9]*)([a-z]+)$")


def _duration(text: object, what: str) -> tuple[int, str]:
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None:
        raise InvalidParameterError(
            f"`{what}` must be a Polars duration such as '1d', '1w' or '1mo', got {text!r}"
        )
    return int(match[1]), match[2]


@entry_point()
def rolling_windows(frame: FrameLike, time: str, *, every: str, period: str) -> pl.LazyFrame:
    """Overlapping windows: each row repeated once per window of length ``period`` holding it.

    Windows start every ``every`` (at ``pl.col(time).dt.truncate(every)``
    boundaries) and last ``period``, a whole multiple of ``every`` in the same
    unit (``every="1w", period="4w"``: four-week windows, one starting each
    week). Only windows lying wholly inside the span of the data's
    ``every``-windows are kept, so every window covers ``period`` of data.
    The column ``time`` then holds each copy's window start: pass
    ``by=time`` to :func:`polars_cumdev.calibration.calibration`.

    For calibration this is exact: a window's statistic uses its own rows
    only, so the copies in other windows change nothing. Across windows the
    tests overlap and are positively dependent; Holm's and Bonferroni's
    adjustments (:func:`family_wise`) still hold the family-wise error rate
    under any dependence, but are conservative here (overlapping windows
    count as separate tests). Do not feed rolling windows to
    :func:`polars_cumdev.screen`: its full population would then count each
    row once per window.

    Parameters
    ----------
    frame
        The data, with a Date or Datetime column ``time``.
    time
        The time column.
    every, period
        Polars durations, ``period`` a multiple of ``every`` in the same unit.

    Returns
    -------
    pl.LazyFrame
        ``frame`` with rows repeated per window and ``time`` replaced by the
        window start.
    """
    step, unit = _duration(every, "every")
    length, period_unit = _duration(period, "period")
    if period_unit != unit or length % step != 0:
        raise InvalidParameterError(
            f"`period` ({period}) must be a whole multiple of `every` ({every}) in the same unit"
        )
    lazy = as_lazy(frame)
    _check_time(lazy, time)
    base = pl.col(time).dt.truncate(every)
    return roll(lazy, time, every, period, base.min(), base.max())


def roll(
    lazy: pl.LazyFrame, time: str, every: str, period: str, first: pl.Expr, last: pl.Expr
) -> pl.LazyFrame:
    """:func:`rolling_windows` given the first and last ``every``-window of the data.

    ``first`` and ``last`` are expressions: the frame's own (in process) or
    literals found over all the parts of a frame (on a cluster, where each
    part is windowed on its own).
    """
    step, unit = _duration(every, "every")
    length, _ = _duration(period, "period")
    base = pl.col(time).dt.truncate(every)
    starts = [base.dt.offset_by(f"-{k * step}{unit}") for k in range(length // step)]
    low, high = f"{nm.PREFIX}first", f"{nm.PREFIX}last"
    window = pl.col(time)
    keep = (window >= pl.col(low)) & (window.dt.offset_by(f"{length - step}{unit}") <= pl.col(high))
    rolled = lazy.with_columns(
        first.alias(low), last.alias(high), pl.concat_list(starts).alias(time)
    )
    return rolled.explode(time).filter(keep).drop(low, high)


def _check_time(lazy: pl.LazyFrame, time: object) -> None:
    if not isinstance(time, str) or not time:
        raise InvalidParameterError(f"`time` must be a column name, got {time!r}")
    schema = schema_of(lazy)
    if time not in schema:
        raise ColumnNotFoundError(f"time column {time!r} not found; the frame has {list(schema)}")
    if schema[time] not in (pl.Date, pl.Datetime):
        raise InvalidParameterError(
            f"time column {time!r} has dtype {schema[time]}; it must be a Date or Datetime"
        )


def untimed(time: str) -> Check:
    """The check that no row lacks a time (a row without one belongs to no window)."""
    return Check(
        pl.col(time).is_null().sum(),
        f"time column {time!r} has {{count}} null value(s) of {{rows}} rows: a row without a "
        "time belongs to no window; drop them first (frame.filter(pl.col("
        f"{time!r}).is_not_null())) or give them a time",
    )


@entry_point("score", "response", "weight", "by")
def calibration_drift(
    frame: FrameLike,
    score: Column,
    response: Column,
    weight: Column | None = None,
    *,
    time: str,
    every: str = "1w",
    period: str | None = None,
    by: Column | Sequence[Column] | None = None,
    alpha: float = 0.05,
    adjustment: str = "holm",
    engine: str = "auto",
    _finite_sample: bool = True,
) -> pl.LazyFrame:
    """Calibration per time window, adjusted across windows for monitoring drift.

    Parameters
    ----------
    frame, score, response, weight
        As in :func:`polars_cumdev.calibration.calibration`.
    time
        A Date or Datetime column. A row with a null time belongs to no
        window: nulls are refused (an
        :class:`~polars_cumdev.errors.InvalidValuesError` naming the column
        and their count, when the result is collected) rather than tested as
        a window of their own or dropped unsaid; to monitor the rest, filter
        them out first (``frame.filter(pl.col(time).is_not_null())``).
    every
        Window length as a Polars duration (``"1d"``, ``"1w"``, ``"1mo"``):
        the windows are ``pl.col(time).dt.truncate(every)`` (weeks start on
        Monday), named by their start in column ``time``.
    period
        Overlapping windows of this length, one starting every ``every``
        (:func:`rolling_windows`, which says what that means for the
        adjustment); ``None`` (default) for disjoint windows of length
        ``every``.
    by
        Optional further grouping column(s): every (group, window) is one
        test of the family.
    alpha, adjustment
        As in :func:`family_wise`.
    engine
        As in :func:`polars_cumdev.calibration.calibration`.

    Returns
    -------
    pl.LazyFrame
        The columns of :func:`polars_cumdev.calibration.calibration` per
        window (and group), then those of :func:`family_wise`; sorted by
        the group columns and time.
    """
    _check(alpha, adjustment)
    lazy = as_lazy(frame)
    _check_time(lazy, time)
    _duration(every, "every")
    try:
        pl.select(pl.lit(0).cast(pl.Datetime).dt.truncate(every))
    except pl.exceptions.PolarsError:
        raise InvalidParameterError(
            f"`every` must be a Polars duration such as '1d', '1w' or '1mo', got {every!r}"
        ) from None
    groups = [] if by is None else [by] if isinstance(by, str) else list(by)
    ok = verdict(lazy, [untimed(time)])
    window = pl.col(time).dt.truncate(every)
    if period is not None:
        lazy, window = rolling_windows(lazy, time, every=every, period=period), pl.col(time)
    table = calibration(
        lazy,
        score,
        response,
        weight,
        by=[*groups, window],
        engine=engine,
        level=alpha,
        _finite_sample=_finite_sample,
    )
    result = family_wise(table, alpha=alpha, adjustment=adjustment).sort([*groups, time])
    return guard(result, ok)
