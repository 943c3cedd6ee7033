"""Rows repeated by the task that reads them, not before the shuffle.

Multicalibration on a cluster calibrates every segment by score ranges: each
row counts once per feature subset, with that subset's segment number. Every
copy of a row has the row's score, hence its range, so the rows are shuffled
to their ranges once and each range's task makes the copies itself. The
copies and the bits are the same as when the repeated rows are shuffled; the
network and, on Spark, the JVM-Python transfer carry one copy of each row
instead of one per subset.

The cut points are those of the repeated rows: repeating every row ``copies``
times keeps the distinct scores and multiplies each count
(:func:`polars_cumdev.engines.partitioned.cuts.repeat_sample`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from polars_cumdev.engines.cluster import steps
from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.errors import CumdevError

__all__ = ["Repeat", "repeated_standard", "split_loaded"]


@dataclass(frozen=True)
class Repeat:
    """How the loaded rows become the repeated rows.

    ``source``: the request the loaded rows are checked and conformed by;
    ``copies``: the copies of each row; ``rows``: loaded rows (checked,
    conformed) -> their copies, in the columns of the repeated rows' request.
    """

    source: Request
    copies: int
    rows: Callable[[pl.DataFrame], pl.DataFrame]

    def score(self) -> pl.Expr:
        """The loaded rows' score as the standardized score reads it (the range it is in)."""
        return pl.col(self.source.score).cast(pl.Float64)


def split_loaded(chunk: pl.DataFrame, repeat: Repeat, cuts: Sequence[float]) -> tuple:
    """A loaded part's tally (``repeat.source``'s checks) and its checked rows by range
    (None when a check failed; empty frames for an empty part)."""
    counts, checked = steps._checked(chunk, repeat.source)
    if checked is None and chunk.height:
        return counts, None
    rows = repeat.source.conform(chunk) if checked is None else checked
    return counts, steps._split_rows(rows, cuts, repeat.score())


def repeated_standard(rows: pl.DataFrame, repeat: Repeat, request: Request) -> pl.DataFrame:
    """Loaded rows (checked, conformed) repeated, checked by ``request`` and standardized."""
    copies = repeat.rows(rows)
    _, checked = steps._checked(copies, request)
    if checked is None:
        if copies.height:
            raise CumdevError("internal error: repeated rows failed a check their rows passed")
        return request.standardize(request.conform(copies))
    return request.standardize(checked)
