"""Running the partitioned screen in one process: any frame, or Parquet range by range."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from polars_cumdev.engines.cluster.checks import raise_tally, tally
from polars_cumdev.engines.files import check_parquet_files, parquet_files, unreadable
from polars_cumdev.engines.partitioned.cells import cell_summaries, plan_ranges
from polars_cumdev.engines.partitioned.columns import Engine
from polars_cumdev.engines.partitioned.cuts import cut_points, range_filter
from polars_cumdev.engines.partitioned.finite import (
    lazy_interval_sums,
    population,
    select_rows,
    with_simulation,
)
from polars_cumdev.engines.partitioned.joining import aggregate, combine_cells, finish
from polars_cumdev.engines.partitioned.locating import flag, gather, stitch, with_located
from polars_cumdev.engines.partitioned.points import range_points
from polars_cumdev.engines.partitioned.step import RangeResult, range_step
from polars_cumdev.method import compiled
from polars_cumdev.method.findings import LEVEL
from polars_cumdev.method.finite_groups import SIMULATED
from polars_cumdev.method.prepare import FrameLike, Prepared
from polars_cumdev.progress import Progress, reporting
from polars_cumdev.subpopulation import prepare_screen

__all__ = ["ROWS_PER_RANGE", "screen_parquet", "screen_partitioned"]

# Default target of rows per range for the Parquet adapter.
ROWS_PER_RANGE = 4_000_000


def validate(prepared: Prepared, engine: Engine) -> None:
    """Every check of ``prepared`` in one pass of bounded memory; raise as in-process.

    The in-process verdict compares each weight with the largest of the whole
    column (the spread check), which makes Polars hold the column in memory.
    Here the pass aggregates only counts and the smallest and largest weight
    (each a streaming aggregate); only when the spread is too wide does a
    second streaming pass count the weights below the threshold, as the
    cluster engines do (:mod:`polars_cumdev.engines.cluster.checks`).
    """
    weight = prepared.names[2]
    source = prepared.source
    tallies = tally(source, prepared.checks, weight).collect(engine=engine)

    def count_below(threshold: float) -> int:
        below = (pl.col(weight).cast(pl.Float64) < threshold).sum()
        return int(source.select(below).collect(engine=engine).item())

    raise_tally(tallies, prepared.checks, weight, count_below)


def _run(
    prepared: Prepared,
    ranges: int | Sequence[float],
    variance: str,
    *,
    scan_engine: Engine,
    range_engine: Engine,
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    with reporting(progress) as note:
        return _ranges(prepared, ranges, variance, scan_engine, range_engine, level, note)


def _ranges(
    prepared: Prepared,
    ranges: int | Sequence[float],
    variance: str,
    scan_engine: Engine,
    range_engine: Engine,
    level: float,
    note: Callable[[str], None],
) -> pl.DataFrame:
    keys = prepared.keys
    frame = prepared.frame
    # Validate every value before any range is read (one streaming scan of the source).
    validate(prepared, scan_engine)
    note("values checked")
    cuts = cut_points(frame, ranges, engine=scan_engine)
    note(f"{len(cuts) + 1} ranges")
    cells = cell_summaries(frame, keys, cuts).collect(engine=scan_engine)
    plan = plan_ranges(cells, keys, cuts, variance, prepared.labels, level=level)
    note(f"pass 1: {cells.height} cells, {plan.queries.height} queries")
    # Every range runs the compiled step when Numba is there, as on the cluster
    # engines (:func:`polars_cumdev.engines.cluster.steps.run_range`): with the
    # same cuts, the in-process, Dask and Spark screens then give the same bits.
    kernel = compiled.available()
    results: list[RangeResult | None] = []
    for r in range(plan.ranges):
        if plan.range_rows[r] == 0:
            results.append(None)
            continue
        # The range is read (and sorted) inside the step: only it is in memory.
        results.append(
            range_step(
                frame.filter(range_filter(plan.cuts, r)),
                plan,
                r,
                engine=range_engine,
                compiled=kernel,
            )
        )
        note(f"range {r + 1}/{plan.ranges}: {plan.range_rows[r]:,} rows")
    cells = combine_cells(plan, results)
    stats = aggregate(plan, cells)
    del results
    note("combined")
    stats = with_simulation(
        plan,
        stats,
        lambda picked: select_rows(frame, keys, picked).collect(engine=scan_engine),
        lambda cut: lazy_interval_sums(frame, cut, scan_engine),
        lambda: population(frame).collect(engine=scan_engine),
    )
    simulated = stats.get_column(SIMULATED[0]).is_not_null().sum()
    note(f"finite-sample p-values: {simulated} groups simulated")
    locating = flag(plan, cells, stats)
    if locating is not None:
        # Pass 2, only for the significant groups with D > 2 sigma: their located stretch.
        outputs = []
        for r in sorted(locating.ranges):
            rows = frame.filter(range_filter(plan.cuts, r))
            cells_r = locating.for_range(r)
            outputs.append(range_points(rows, plan, cells_r, engine=range_engine, compiled=kernel))
            note(f"located, range {r + 1}/{plan.ranges}")
        stats = with_located(plan, stats, stitch(locating, *gather(outputs)))
        note(f"pass 2: {locating.groups.height} groups located")
    return finish(plan, stats)


def screen_partitioned(
    frame: FrameLike,
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    ranges: int | Sequence[float] = 8,
    variance: str = "auto",
    engine: Engine = "in-memory",
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    """:func:`polars_cumdev.subpopulation.screen`, computed range by range.

    Parameters
    ----------
    frame
        The full population (DataFrame or LazyFrame). Each range is collected
        on its own, so a LazyFrame over files is never held whole in memory.
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    ranges
        Number R of score ranges (quantile cut points), or the cut points.
    engine
        Polars engine for the scans of ``frame`` and for each range.
    level
        Significance level of the located stretch, as in
        :func:`polars_cumdev.subpopulation.screen`.
    progress
        ``True`` writes a line of progress (elapsed time and step) to stderr
        after each step; a callable (e.g. ``print``) receives the lines
        instead (:mod:`polars_cumdev.progress`). Off by default.

    Returns
    -------
    pl.DataFrame
        Always eager, whatever ``frame`` is: the ranges are run one after
        another and the result is small (one row per group), unlike the
        analyses, which follow their input. The same columns, rows and order
        as ``screen(...).collect()``, equal
        up to rounding, the located stretch included (when some significant
        group has D > 2 sigma, the ranges holding such groups are read a
        second time, for them only: :mod:`polars_cumdev.engines.partitioned.locating`).
    """
    prepared = prepare_screen(frame, by, score, response, weight, variance)
    return _run(
        prepared,
        ranges,
        variance,
        scan_engine=engine,
        range_engine=engine,
        level=level,
        progress=progress,
    )


def screen_parquet(
    path_or_glob: str | Path | Sequence[str | Path],
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    ranges: int | Sequence[float] | None = None,
    variance: str = "auto",
    level: float = LEVEL,
    progress: Progress = False,
) -> pl.DataFrame:
    """Screen Parquet data that need not fit in memory, one score range at a time.

    The files are scanned lazily (:func:`polars.scan_parquet`): one streaming
    pass checks the values and summarizes the cells, then each range is read
    on its own with a score filter pushed into the scan, sorted and reduced
    to small summaries; when some significant group has D > 2 sigma, the ranges holding
    such groups are read once more to locate it. Peak memory is about that
    of screening the largest range in memory.

    Parameters
    ----------
    path_or_glob
        A Parquet file, a glob such as ``"data/*.parquet"``, or a list of them.
    by, score, response, weight, variance
        As in :func:`polars_cumdev.subpopulation.screen`.
    ranges
        Number of score ranges or the cut points; by default about one range
        per :data:`ROWS_PER_RANGE` rows.
    level, progress
        As in :func:`screen_partitioned`.

    Returns
    -------
    pl.DataFrame
        The screen's output.
    """
    files = parquet_files(path_or_glob)
    keys = [by] if isinstance(by, str) else list(by)
    used = [*keys, score, response, *([weight] if weight is not None else [])]
    names = [c for c in used if isinstance(c, str)]
    check_parquet_files(files, names)
    source = pl.scan_parquet(files, extra_columns="ignore")
    prepared = prepare_screen(source, by, score, response, weight, variance)
    try:
        if ranges is None:
            rows = source.select(pl.len()).collect(engine="streaming").item()
            ranges = max(1, math.ceil(rows / ROWS_PER_RANGE))
        return _run(
            prepared,
            ranges,
            variance,
            scan_engine="streaming",
            range_engine="in-memory",
            level=level,
            progress=progress,
        )
    except pl.exceptions.PolarsError as exc:  # e.g. a data page damaged behind a sound footer
        raise unreadable(files, names, exc) from None
