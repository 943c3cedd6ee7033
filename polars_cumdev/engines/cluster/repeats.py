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

Nor does a range's task make the copies to walk them (:class:`RepeatedRange`):
the calibration walk keeps one state per group and needs each group's rows in
canonical order (score, weight, response) only, so the range's rows are
sorted once and each row, in that order, is handed to its segment in every
subset. Each segment then adds the same rows in the same order as the walk
of the copies sorted together
(:func:`polars_cumdev.engines.partitioned.calibration_step.calibration_cells`):
the same bits, without sorting ``copies`` times the rows. The copies are made
only for the finite-sample gathers, and only those of the segments gathered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from polars_cumdev.engines.cluster import steps
from polars_cumdev.engines.cluster.finite import OTHER
from polars_cumdev.engines.cluster.range_calibration import _routed
from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.engines.cluster.segments import SEGMENT, copies_of, members
from polars_cumdev.engines.partitioned.calibration_step import (
    empty_cells,
    walk_ordered,
    walked_cells,
    walked_points,
)
from polars_cumdev.engines.partitioned.columns import GID, WMAX
from polars_cumdev.engines.partitioned.locating import empty_outputs
from polars_cumdev.errors import CumdevError
from polars_cumdev.method import _names as nm
from polars_cumdev.method import compiled

__all__ = ["EXTRA_SCHEMA", "Repeat", "RepeatedRange", "range_sums", "split_cells", "split_loaded"]

ROWS, SUM_W, SUM_WR = "_cd_rows", "_cd_w", "_cd_wr"
#: What a range's cells carry after ``SEGMENT`` beyond the calibration cells: each
#: segment's largest weight and rows with a response other than 0 and 1 (the
#: finite-sample step's), its rows, W and W R (the family kept, the mean response).
EXTRA_SCHEMA = {
    SEGMENT: pl.Int64(),
    WMAX: pl.Float64(),
    OTHER: pl.Int64(),
    ROWS: pl.Float64(),
    SUM_W: pl.Float64(),
    SUM_WR: pl.Float64(),
}


@dataclass(frozen=True)
class Repeat:
    """How the loaded rows become the repeated rows.

    ``source``: the request the loaded rows are checked and conformed by;
    ``copies``: the copies of each row; ``numbers``: loaded rows (checked,
    conformed) -> each copy's segment numbers (``copies`` int64 arrays).
    """

    source: Request
    copies: int
    numbers: Callable[[pl.DataFrame], Sequence[np.ndarray]]

    def score(self) -> pl.Expr:
        """The loaded rows' score as the standardized score reads it (the range it is in)."""
        return pl.col(self.source.score).cast(pl.Float64)

    def rows(self, rows: pl.DataFrame, keep: np.ndarray | None = None) -> pl.DataFrame:
        """The copies of loaded rows (checked, conformed), in the repeated rows' columns:
        copy by copy, the rows in their order; with ``keep``, those of its segments only."""
        return copies_of(self.numbers(rows), rows, self.source, keep)


def split_loaded(chunk: pl.DataFrame, repeat: Repeat, cuts: Sequence[float]) -> tuple:
    """A loaded part's tally (``repeat.source``'s checks) and its checked rows by range
    (None when a check failed; empty frames for an empty part)."""
    counts, checked = steps._checked(chunk, repeat.source)
    if checked is None and chunk.height:
        return counts, None
    rows = repeat.source.conform(chunk) if checked is None else checked
    return counts, steps._split_rows(rows, cuts, repeat.score())


def _standard(copies: pl.DataFrame, request: Request) -> pl.DataFrame:
    """Repeated rows checked by ``request`` (whose checks their rows passed) and standardized."""
    _, checked = steps._checked(copies, request)
    if checked is None:
        if copies.height:
            raise CumdevError("internal error: repeated rows failed a check their rows passed")
        return request.standardize(request.conform(copies))
    return request.standardize(checked)


@dataclass(frozen=True)
class RepeatedRange:
    """One score range's loaded rows (checked, conformed), repeated per segment by
    ``repeat``, as the repeated rows' ``request`` (keyed by ``SEGMENT``) reads them."""

    rows: pl.DataFrame
    repeat: Repeat
    request: Request

    @property
    def height(self) -> int:
        """The number of repeated rows."""
        return self.rows.height * self.repeat.copies

    def standard(self, groups: pl.DataFrame | None = None) -> pl.DataFrame:
        """The repeated rows standardized; with ``groups`` (a ``SEGMENT`` column), only
        those segments' rows, in the order they have among all."""
        keep = None if groups is None else groups.get_column(SEGMENT).to_numpy()
        return _standard(self.repeat.rows(self.rows, keep), self.request)

    def _ordered(self, keep: np.ndarray | None) -> tuple:
        """The repeated rows (of the segments ``keep``, or all) in an order canonical
        within every segment, row after row with its copies: ``(ids, s, r, w, one)``,
        ``one`` the standardized rows walked (those with a copy kept), one copy each."""
        kernel = compiled.kernel()
        rows = self.rows
        numbers = np.stack([np.asarray(x, dtype=np.int64) for x in self.repeat.numbers(rows)])
        mask = None
        if keep is not None:  # (only the rows with a copy kept are sorted)
            mask = members(numbers, keep)
            some = mask.any(axis=0)
            numbers, mask, rows = numbers[:, some], mask[:, some], rows.filter(pl.Series(some))
        one = _standard(copies_of(numbers[:1], rows, self.repeat.source), self.request)
        s, r, w = (
            np.ascontiguousarray(one.get_column(c).cast(pl.Float64).to_numpy())
            for c in (nm.SCORE, nm.RESPONSE, nm.WEIGHT)
        )
        s, order, (r, w, _) = kernel.bucketsort.bucket_sort(s, r, w, np.empty(0, np.int64), True)
        held = numbers[:, order].T  # rows x copies, rows in canonical order
        if mask is None:
            every = held.shape[1]  # (the same count for every row: numpy's faster repeat)
            ids = np.ascontiguousarray(held).ravel()
        else:
            mask = mask[:, order].T
            every, ids = mask.sum(axis=1), held[mask]
        return ids, *(np.repeat(x, every) for x in (s, r, w)), one

    def cells(self, cuts: Sequence[float], scale: float, r: int) -> pl.DataFrame:
        """Range ``r``'s cells, the bits of
        :func:`~polars_cumdev.engines.cluster.range_calibration.range_cells` of the
        standardized copies, with the columns of :data:`EXTRA_SCHEMA` first
        (:func:`split_cells`)."""
        if not self.rows.height:
            empty = pl.DataFrame(schema=EXTRA_SCHEMA)
            cells = empty_cells([SEGMENT], {SEGMENT: pl.Int64()}).drop(SEGMENT)
            return pl.concat([empty, cells], how="horizontal")
        ids, s, r_, w, one = self._ordered(None)
        _routed(one, cuts, r)
        count = int(ids.max()) + 1
        out, first, curves, starts = walk_ordered(ids, 0, count, s, r_, w, scale)
        present = first >= 0
        largest = np.full(count, -np.inf)
        np.maximum.at(largest, ids, w)
        other = np.bincount(ids, weights=(r_ != 0.0) & (r_ != 1.0), minlength=count)
        extra = {
            SEGMENT: np.flatnonzero(present),
            WMAX: largest[present],
            OTHER: other[present].astype(np.int64),
            # (each segment's copies in canonical order: sums that do not depend on
            # how the rows were partitioned or shuffled)
            ROWS: np.bincount(ids, minlength=count)[present].astype(np.float64),
            SUM_W: np.bincount(ids, weights=w, minlength=count)[present],
            SUM_WR: np.bincount(ids, weights=w * r_, minlength=count)[present],
        }
        named = pl.DataFrame(extra, schema=EXTRA_SCHEMA)
        return pl.concat([named, walked_cells(out, first, curves, starts)], how="horizontal")

    def points(
        self, cuts: Sequence[float], scale: float, r: int, cells: pl.DataFrame
    ) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Range ``r``'s second pass for the flagged cells ``cells``, the bits of
        :func:`~polars_cumdev.engines.cluster.range_calibration.range_points` of the
        standardized copies."""
        keep = cells.get_column(SEGMENT).to_numpy()
        if not self.rows.height or not keep.shape[0]:
            return empty_outputs()
        ids, s, r_, w, one = self._ordered(keep)
        _routed(one, cuts, r)
        if not ids.shape[0]:
            return empty_outputs()
        count = int(ids.max()) + 1
        _, first, curves, starts = walk_ordered(ids, 0, count, s, r_, w, scale)
        present = np.flatnonzero(first >= 0)
        groups = pl.DataFrame({SEGMENT: present, GID: present}).cast({SEGMENT: pl.Int64})
        groups = groups.join(cells, on=SEGMENT, how="inner").drop(SEGMENT)
        return walked_points(groups, curves, starts)


def split_cells(
    found: Sequence[pl.DataFrame | None],
) -> tuple[list[pl.DataFrame | None], pl.DataFrame]:
    """The ranges' cells (:meth:`RepeatedRange.cells`) without the columns of
    :data:`EXTRA_SCHEMA`, and those per (range, segment), range after range, in one
    frame: the maxima the finite-sample step reads
    (:func:`~polars_cumdev.engines.cluster.finite.calibration_simulated`) and the
    segments' sums (:func:`range_sums`), without more passes over the rows."""
    extra = list(EXTRA_SCHEMA)
    parts = [c.select(extra) for c in found if c is not None and c.height]
    merged = pl.concat(parts) if parts else pl.DataFrame(schema=EXTRA_SCHEMA)
    return [None if c is None else c.drop(extra[1:]) for c in found], merged


def range_sums(extra: pl.DataFrame, total: int) -> np.ndarray:
    """Rows, W and W R per segment number (``total`` x 3), the ranges' sums
    (:func:`split_cells`) added range after range, in a fixed order."""
    sums = np.zeros((total, 3))
    segment = extra.get_column(SEGMENT).to_numpy()
    for j, column in enumerate((ROWS, SUM_W, SUM_WR)):
        np.add.at(sums[:, j], segment, extra.get_column(column).to_numpy())
    return sums
