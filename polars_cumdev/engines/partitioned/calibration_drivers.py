"""Calibration by score ranges in one process: any frame, or Parquet range by range.

The steps of :mod:`.calibration_step` and :mod:`.calibration_ranges` run one
range at a time, so that only one range's rows are in memory; the cluster
engines run the same steps as tasks (:mod:`polars_cumdev.engines.cluster`),
with the same cuts, hence the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from polars_cumdev.engines.cluster.finite import calibration_simulated
from polars_cumdev.engines.files import check_parquet_files, parquet_files, unreadable
from polars_cumdev.engines.partitioned.calibration_ranges import combine, finish, flag, with_located
from polars_cumdev.engines.partitioned.calibration_step import calibration_cells, calibration_points
from polars_cumdev.engines.partitioned.columns import Engine
from polars_cumdev.engines.partitioned.cuts import cut_points, range_filter
from polars_cumdev.engines.partitioned.drivers import ROWS_PER_RANGE, validate
from polars_cumdev.engines.partitioned.locating import gather, stitch
from polars_cumdev.method import _names as nm
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.prepare import FrameLike, Prepared
from polars_cumdev.method.weights import scale_factor
from polars_cumdev.progress import Progress, reporting

__all__ = [
    "Locate",
    "calibrate_ranges",
    "calibration_parquet",
    "calibration_partitioned",
    "locate_chosen",
]


#: ``locate(stats, chosen)``: ``stats`` with the stretches of the groups the predicate
#: ``chosen`` selects located (:func:`locate_chosen`, its first three arguments bound).
Locate = Callable[[pl.DataFrame, pl.Expr | None], pl.DataFrame]


def calibrate_ranges(
    keys: Sequence[str],
    cuts: Sequence[float],
    scale: float,
    level: float,
    prepared: Prepared,
    cells_of: Callable[[], list[pl.DataFrame | None]],
    map_batches: Callable[[Callable[[pl.DataFrame], object]], list],
    points_of: Callable[[dict[int, pl.DataFrame]], list[tuple[pl.DataFrame, pl.DataFrame]]],
    note: Callable[[str], None] = lambda _: None,
) -> pl.DataFrame:
    """The calibration table from the engine's three callbacks (any engine, same bits).

    ``cells_of()``: every range's cells (None for an empty range);
    ``map_batches(f)``: ``f`` applied to batches of standardized rows that
    together hold every row once (the finite-sample p-values' few rows);
    ``points_of({r: cells})``: the second pass of each range named, in order.
    """
    cells = cells_of()
    note(f"pass 1: {sum(c.height for c in cells if c is not None)} cells")
    stats, joined = combine(cells, keys, scale)
    stats = calibration_simulated(stats, keys, level, map_batches)
    table = finish(stats, prepared, level)
    locating = flag(joined, stats, table, keys, level)
    if locating is None:
        return table
    stats = _located(stats, locating, keys, points_of)
    note(f"pass 2: {locating.groups.height} groups located")
    return finish(stats, prepared, level)


def _located(stats: pl.DataFrame, locating, keys: Sequence[str], points_of) -> pl.DataFrame:
    """``stats`` with the located stretches of the groups ``locating`` flags (a second pass)."""
    wanted = {r: locating.for_range(r) for r in sorted(locating.ranges)}
    found = stitch(locating, *gather(points_of(wanted)))
    return with_located(stats, found, keys)


def locate_chosen(
    joined: pl.DataFrame,
    keys: Sequence[str],
    points_of: Callable[[dict[int, pl.DataFrame]], list[tuple[pl.DataFrame, pl.DataFrame]]],
    stats: pl.DataFrame,
    chosen: pl.Expr | None = None,
) -> pl.DataFrame:
    """``stats`` (from :func:`~.calibration_ranges.combine`, whose second output is
    ``joined``) with the stretch located of every group with T > 0 that ``chosen`` (a
    predicate over ``stats``; None: every group) selects, by one more pass
    (``points_of``); the other groups' location stays null.

    A group's stretch depends on its own points only: locating fewer groups changes
    none of theirs. A caller whose decision comes after the statistics (the engines'
    multicalibration: Holm over the family) passes the groups it found significant.
    """
    candidates = stats if chosen is None else stats.filter(chosen)
    locating = flag(joined, candidates, None, keys, 0.0)
    return stats if locating is None else _located(stats, locating, keys, points_of)


def _scale(prepared: Prepared, engine: Engine) -> float:
    """The power of two the weights are multiplied by: the in-process kernel's."""
    largest = pl.col(nm.WEIGHT).max()
    value = prepared.frame.select(scale_factor(largest)).collect(engine=engine).item()
    return 1.0 if value is None else float(value)


def _run(
    prepared: Prepared,
    ranges: int | Sequence[float],
    scan_engine: Engine,
    range_engine: Engine,
    level: float,
    progress: Progress,
) -> pl.DataFrame:
    keys = list(prepared.keys)
    frame = prepared.frame.select(*keys, nm.SCORE, nm.RESPONSE, nm.WEIGHT)
    with reporting(progress) as note:
        validate(prepared, scan_engine)
        scale = _scale(prepared, scan_engine)
        cuts = cut_points(frame, ranges, engine=scan_engine)
        count = len(cuts) + 1
        note(f"values checked; {count} ranges")

        def rows(r: int) -> pl.DataFrame:
            return frame.filter(range_filter(cuts, r)).collect(engine=range_engine)

        def cells_of() -> list[pl.DataFrame | None]:
            out: list[pl.DataFrame | None] = []
            for r in range(count):
                part = rows(r)
                out.append(calibration_cells(part, keys, scale) if part.height else None)
            return out

        def map_batches(function: Callable[[pl.DataFrame], object]) -> list:
            return [function(rows(r)) for r in range(count)]

        def points_of(wanted: dict[int, pl.DataFrame]) -> list:
            return [calibration_points(rows(r), keys, scale, c) for r, c in wanted.items()]

        return calibrate_ranges(
            keys, cuts, scale, level, prepared, cells_of, map_batches, points_of, note
        )


def calibration_partitioned(
    frame: FrameLike,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    by: str | Sequence[str] | None = None,
    ranges: int | Sequence[float] = 8,
    engine: Engine = "in-memory",
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    """:func:`polars_cumdev.calibration.calibration` of probabilities, range by range.

    The score axis is cut into ranges between distinct scores
    (:mod:`polars_cumdev.engines.partitioned.cuts`); each range's rows are
    walked on their own
    (:func:`~polars_cumdev.engines.partitioned.calibration_step.calibration_cells`)
    and the partial walks combined in range order
    (:mod:`polars_cumdev.engines.partitioned.calibration_ranges`): C_k, its
    Kuiper range and largest absolute value ((48)-(50) of M. Tygert,
    "Cumulative deviation of a subpopulation from the full population",
    method.md 2) without any group held whole in memory.

    Parameters
    ----------
    frame
        Predictions: a DataFrame or LazyFrame (each range is collected on its own).
    score, response, weight, by, level
        As in :func:`polars_cumdev.calibration.calibration` (``target``
        "probability": responses in [0, 1], 0/1 labels or soft labels).
    ranges
        Number of score ranges (quantile cuts) or the cut points.
    engine
        Polars engine for the scans and for each range.
    progress
        As in :func:`polars_cumdev.partitioned.screen_partitioned`.

    Returns
    -------
    pl.DataFrame
        Eager: the in-process table's columns, rows and order, the
        statistics equal to rounding, the same finite-sample p-values and
        located stretch (the ranges holding a significant group with
        D > 2 sigma are read a second time, for those groups only).
    """
    from polars_cumdev.calibration.table import prepare_calibration

    prepared = prepare_calibration(frame, score, response, weight, by)
    return _run(prepared, ranges, engine, engine, level, progress)


def calibration_parquet(
    path_or_glob: str | Path | Sequence[str | Path],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    by: str | Sequence[str] | None = None,
    ranges: int | Sequence[float] | None = None,
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    """Calibrate Parquet data that need not fit in memory, one score range at a time.

    As :func:`calibration_partitioned`, the files scanned lazily: one
    streaming pass checks the values, then each range is read with its score
    filter pushed into the scan. ``ranges`` defaults to one range per
    :data:`polars_cumdev.engines.partitioned.ROWS_PER_RANGE` rows.
    """
    from polars_cumdev.calibration.table import prepare_calibration

    files = parquet_files(path_or_glob)
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    names = [c for c in [*keys, score, response, weight] if isinstance(c, str)]
    check_parquet_files(files, names)
    source = pl.scan_parquet(files, extra_columns="ignore")
    prepared = prepare_calibration(source, score, response, weight, by)
    try:
        if ranges is None:
            rows = source.select(pl.len()).collect(engine="streaming").item()
            ranges = max(1, math.ceil(rows / ROWS_PER_RANGE))
        return _run(prepared, ranges, "streaming", "in-memory", level, progress)
    except pl.exceptions.PolarsError as exc:  # e.g. a data page damaged behind a sound footer
        raise unreadable(files, names, exc) from None
