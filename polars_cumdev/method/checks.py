"""Conditions on the data, counted lazily, and the query that fails when one is broken.

A :class:`Check` is an expression counting the rows that break one condition
(a null score, a weight <= 0, ...). :func:`verdict` counts every check in one
pass and raises the error of the first broken one when the query is
collected; :func:`guard` ties a result to that verdict so that no row comes
out before the checks pass. :func:`raise_failures` turns counts into the
error, also for engines that count batch by batch. The checks themselves are
written where the columns are understood (:mod:`polars_cumdev.method.prepare`,
:mod:`polars_cumdev.method.masks`, the analyses).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_cumdev.errors import CumdevError, InvalidValuesError
from polars_cumdev.method import _names as nm

__all__ = ["Check", "counted", "guard", "raise_failures", "verdict"]


@dataclass(frozen=True)
class Check:
    """One condition on the data, evaluated lazily as a count of offending rows.

    Parameters
    ----------
    count
        Expression aggregating to the number of offending rows (0 means fine).
    message
        Text of the error; ``{count}`` and ``{rows}`` (the frame's height) are
        filled in.
    error
        The :class:`CumdevError` subclass to raise.
    scope
        ``"rows"`` when counts over parts of the frame add up to the
        frame's count (every check but two); ``"frame"`` for a property of
        the whole frame (it is empty); ``"spread"`` when each row is judged
        against the largest weight of the whole frame
        (:func:`polars_cumdev.method.weights.too_small`). Engines that count batch
        by batch (:mod:`polars_cumdev.engines.cluster.checks`) settle the last two
        on the driver.
    """

    count: pl.Expr
    message: str
    error: type[CumdevError] = InvalidValuesError
    scope: Literal["rows", "frame", "spread"] = "rows"


def verdict(source: pl.LazyFrame, checks: Sequence[Check]) -> pl.LazyFrame:
    """A cached one-row frame whose column ``OK`` is true, or which raises when collected.

    The checks are aggregated in one pass over ``source``; a Python callback
    turns the counts into a :class:`CumdevError` naming the first problem
    (:func:`raise_failures`). The frame is cached, so a query that joins it
    in several places evaluates the checks once.
    """
    names = [f"{nm.PREFIX}check{i}" for i in range(len(checks))]
    counts = source.select(
        pl.len().alias(f"{nm.PREFIX}rows"),
        *[c.count.cast(pl.Int64).alias(n) for c, n in zip(checks, names, strict=True)],
    )

    def check(batch: pl.Series) -> pl.Series:
        row = batch.struct.unnest().row(0, named=True)
        raise_failures(checks, [row[n] for n in names], row[f"{nm.PREFIX}rows"])
        return pl.Series(nm.OK, [True])

    return counts.select(
        pl.struct(pl.all()).map_batches(check, return_dtype=pl.Boolean).alias(nm.OK)
    ).cache()


def guard(result: pl.LazyFrame, ok: pl.LazyFrame) -> pl.LazyFrame:
    """Make ``result`` fail on collection when the :func:`verdict` ``ok`` raises.

    The verdict's row is set beside ``result`` (padded with nulls) and used
    in a filter, so the optimizer cannot prune it and no row of ``result``
    is returned unless all checks pass. The row order of ``result`` is kept
    and its rows are not copied (as a cross join copied them).
    """
    present = f"{nm.PREFIX}present"
    beside = pl.concat(
        [result.with_columns(pl.lit(True).alias(present)), ok], how="horizontal_extend"
    )
    return beside.filter(pl.col(nm.OK).first() & pl.col(present)).drop(nm.OK, present)


def raise_failures(checks: Sequence[Check], counts: Sequence[int | None], rows: int) -> None:
    """Raise the error of the first failed check, and only that; do nothing if none.

    The checks are ordered from the plainest problem to the subtlest, and one
    problem often trips later checks too (a zero weight is also "smaller than
    the largest / 2^500"): the first one found is the one to fix, so it is
    reported alone. ``counts[i]`` is the value of ``checks[i].count``
    (offending rows) and ``rows`` the number of rows checked. An engine that
    evaluates the counts itself (batch by batch, summing them) calls this
    with the totals.
    """
    for check, count in zip(checks, counts, strict=True):
        if count not in (0, None):
            raise check.error(check.message.format(count=count, rows=rows))


def counted(
    frame: pl.DataFrame,
    checks: Sequence[Check],
    extra: Sequence[pl.Expr] = (),
    *,
    background: bool = False,
) -> Callable[[], tuple]:
    """Count ``checks`` on rows in memory, in one query; the function returned waits for
    it, raises the first failed check (:func:`raise_failures`) or returns the values of
    the ``extra`` aggregates, computed in the same query.

    A plan of one pass over a frame in memory: collected without the
    optimizer's passes. With ``background``, the query is started now on
    Polars' threads (its background collection) and the caller goes on: a
    small call reads and sorts its arrays meanwhile, and uses them only once
    the checks have passed. Only a caller on the main thread may ask for it:
    waiting for Polars' threads from one of them (a function called inside a
    Polars query) could wait for itself.
    """
    query = frame.lazy().select(
        pl.len().alias("rows"),
        *[c.count.cast(pl.Int64).alias(f"c{i}") for i, c in enumerate(checks)],
        *[e.alias(f"x{i}") for i, e in enumerate(extra)],
    )
    flags = pl.QueryOptFlags.none()
    if background:
        running = query.collect(engine="in-memory", optimizations=flags, background=True)
        result: Callable[[], pl.DataFrame] = running.fetch_blocking
    else:
        done = query.collect(engine="in-memory", optimizations=flags)
        result = lambda: done  # noqa: E731

    def verdict() -> tuple:
        counts = result().row(0)
        raise_failures(checks, counts[1 : len(checks) + 1], counts[0])
        return counts[len(checks) + 1 :]

    return verdict
