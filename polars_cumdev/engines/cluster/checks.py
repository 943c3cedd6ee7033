"""The in-process row checks, counted batch by batch on the workers and raised on the driver.

Every check of :func:`polars_cumdev.method.prepare.prepare` counts offending rows,
and counts add up over batches, with two exceptions handled here:

- "the frame is empty" is a property of the whole frame: the driver decides
  it from the total number of rows;
- the spread of the weights (:func:`polars_cumdev.method.weights.too_small`)
  compares each weight with the largest weight *of the whole frame*. Each
  batch reports its smallest and largest weight; only when the smallest is
  below the largest / 2^500 does the engine count, in one more pass, the
  weights below that threshold (:func:`raise_tally`'s ``count_below``).

The driver then raises with :func:`polars_cumdev.method.checks.raise_failures`, so
the error class and message are the in-process ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import polars as pl

from polars_cumdev.method.checks import Check, raise_failures
from polars_cumdev.method.weights import RATIO_LIMIT

__all__ = ["ROWS", "WMAX", "WMIN", "count_below", "raise_tally", "tally"]

ROWS = "rows"
WMIN = "wmin"
WMAX = "wmax"


Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def tally(chunk: Frame, checks: Sequence[Check], weight: str | None) -> Frame:
    """One row for a batch: its rows, the additive checks' counts, its smallest and largest weight.

    ``checks`` are the request's checks (:meth:`Request.checks`); the
    columns ``c0``, ``c1``, ... follow their order (0 for the checks whose
    ``scope`` is not ``"rows"``, settled by :func:`raise_tally`).
    """
    counts = [
        (c.count if c.scope == "rows" else pl.lit(0)).cast(pl.Int64).alias(f"c{i}")
        for i, c in enumerate(checks)
    ]
    w = pl.col(weight).cast(pl.Float64) if weight is not None else pl.lit(1.0)
    return chunk.select(
        pl.len().cast(pl.Int64).alias(ROWS),
        *counts,
        w.min().cast(pl.Float64).alias(WMIN),
        w.max().cast(pl.Float64).alias(WMAX),
    )


def count_below(chunk: pl.DataFrame, weight: str, threshold: float) -> int:
    """Weights of a batch below ``threshold`` (the spread check's count, batch by batch)."""
    return int(chunk.select((pl.col(weight).cast(pl.Float64) < threshold).sum()).item())


def raise_tally(
    tallies: pl.DataFrame,
    checks: Sequence[Check],
    weight: str | None,
    count_below: Callable[[float], int],
) -> int:
    """Sum the batches' tallies and raise as in-process when a check fails; return the rows.

    Parameters
    ----------
    tallies
        The rows of :func:`tally`, one per batch (any number, possibly none).
    checks, weight
        The request's checks and weight column.
    count_below
        Counts the weights below a threshold over the whole frame (another
        pass); called only when the weights' spread is too large.
    """
    rows = int(tallies.get_column(ROWS).sum()) if tallies.height else 0
    largest = tallies.get_column(WMAX).max() if tallies.height else None
    smallest = tallies.get_column(WMIN).min() if tallies.height else None
    counts: list[int] = []
    for i, check in enumerate(checks):
        if check.scope == "frame":  # the only such check: the frame is empty
            counts.append(int(rows == 0))
        elif check.scope == "spread":
            threshold = None if largest is None else float(largest) / RATIO_LIMIT
            spread = threshold is not None and smallest is not None and smallest < threshold
            counts.append(count_below(threshold) if spread else 0)
        else:
            counts.append(int(tallies.get_column(f"c{i}").sum()) if tallies.height else 0)
    raise_failures(checks, counts, rows)
    return rows
