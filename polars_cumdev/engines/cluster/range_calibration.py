"""Calibration by score ranges on a cluster: what each task computes (any engine).

The rows are split by score range (:mod:`polars_cumdev.engines.partitioned.cuts`,
cut between distinct scores) and each range is walked by one task
(:func:`~polars_cumdev.engines.partitioned.calibration_step.calibration_cells`),
so that no group has to fit in one task's memory; the driver combines the
cells (:func:`~polars_cumdev.engines.partitioned.calibration_drivers.calibrate_ranges`),
as the in-process :func:`polars_cumdev.partitioned.calibration_partitioned`
does with the same cuts: the same bits.

| function | runs on | what it does |
| --- | --- | --- |
| :func:`check_and_split` | worker | a batch's tally; its standardized rows by range |
| :func:`weight_scale` | driver | raise a failed check; the weights' power of two |
| :func:`range_cells` | worker | one range's cells (its rows checked in range) |
| :func:`range_points` | worker | one range's second pass, for the flagged groups |
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from polars_cumdev.engines.cluster.checks import WMAX, raise_tally, tally
from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.engines.cluster.steps import _checked, _split_rows, split_part
from polars_cumdev.engines.partitioned.calibration_step import calibration_cells, calibration_points
from polars_cumdev.engines.partitioned.cuts import range_filter
from polars_cumdev.errors import CumdevError
from polars_cumdev.method.weights import scale_factor

__all__ = ["check_and_split", "range_cells", "range_points", "weight_scale"]


def check_and_split(
    chunk: pl.DataFrame, request: Request, cuts: Sequence[float]
) -> tuple[pl.DataFrame, list[pl.DataFrame] | None]:
    """A batch's tally and its standardized rows, one frame per range.

    The pieces are None when the batch failed a check (the driver raises
    before any range runs); an empty batch gives an empty piece per range.
    """
    counts, checked = _checked(chunk, request)
    if checked is None:
        return counts, (split_part(chunk, request, cuts) if chunk.height == 0 else None)
    return counts, _split_rows(request.standardize(checked), cuts)


def weight_scale(
    request: Request, tallies: Sequence[pl.DataFrame], count_below: Callable[[float], int]
) -> float:
    """Raise a failed check as in-process; the power of two of the largest weight.

    The in-process kernel multiplies the weights by the same power
    (:func:`polars_cumdev.method.weights.scale_factor`).
    """
    frame = pl.concat(list(tallies), how="vertical_relaxed") if tallies else pl.DataFrame()
    if not frame.height:
        frame = tally(request.empty(), request.checks(), request.weight)
    raise_tally(frame, request.checks(), request.weight, count_below)
    largest = frame.get_column(WMAX).max()
    if largest is None:
        return 1.0
    return float(pl.select(scale_factor(pl.lit(float(largest)))).item())


def _routed(rows: pl.DataFrame, cuts: Sequence[float], r: int) -> pl.DataFrame:
    outside = rows.select((~range_filter(cuts, r)).sum()).item()
    if outside:
        raise CumdevError(
            f"internal error: {outside} row(s) routed to score range {r} lie outside it"
        )
    return rows


def range_cells(
    rows: pl.DataFrame, keys: Sequence[str], cuts: Sequence[float], scale: float, r: int
) -> pl.DataFrame:
    """Range ``r``'s cells; raises when a row lies outside the range (routed wrong)."""
    return calibration_cells(_routed(rows, cuts, r), keys, scale)


def range_points(
    rows: pl.DataFrame,
    keys: Sequence[str],
    cuts: Sequence[float],
    scale: float,
    r: int,
    cells: pl.DataFrame,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Range ``r``'s second pass for the flagged cells ``cells``."""
    return calibration_points(_routed(rows, cuts, r), keys, scale, cells)
