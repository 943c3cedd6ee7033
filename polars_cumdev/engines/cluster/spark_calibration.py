"""``calibration(by=)`` on Spark by score ranges: the tasks of :mod:`.range_calibration`.

- cut points as for the screen (:func:`polars_cumdev.engines.cluster.spark_ranges.sampled_cuts`:
  the data's alone);
- pass 1 (``mapInArrow``): each partition's check counts, one small row each;
  the driver raises a failed check with the in-process message;
- pass 2: each row is routed by its score range (an index computed in the
  JVM), ``repartition`` shuffles the columns the calibration reads, and
  ``mapInArrow`` walks each range into its cells;
- pass 3, only when some significant group has D > 2 sigma: the same
  shuffled rows (kept), walked again for those groups in the ranges holding
  them (their located stretch).

No group has to fit in one task's memory; with the same cuts the bits are
those of :func:`polars_cumdev.partitioned.calibration_partitioned`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import spark_jobs as jobs
from polars_cumdev.engines.cluster import steps
from polars_cumdev.engines.cluster.failures import spark_errors
from polars_cumdev.engines.cluster.probe import probe_spark
from polars_cumdev.engines.cluster.range_calibration import (
    range_cells,
    range_points,
    weight_scale,
)
from polars_cumdev.engines.cluster.repeats import Repeat, RepeatedRange, split_cells
from polars_cumdev.engines.cluster.request import Request
from polars_cumdev.engines.cluster.spark_jobs import (
    PAYLOAD,
    PAYLOAD_SCHEMA,
    collect_payloads,
    count_below,
    partition_frame,
    payload_batch,
    spark_request,
    without_pandas_warning,
)
from polars_cumdev.engines.cluster.spark_ranges import ROUTE, range_of, routing_keys, sampled_cuts
from polars_cumdev.engines.partitioned.calibration_drivers import (
    Locate,
    calibrate_ranges,
    locate_chosen,
)
from polars_cumdev.engines.partitioned.calibration_ranges import combine
from polars_cumdev.errors import CumdevError
from polars_cumdev.method.findings import LEVEL

__all__ = ["calibrate_rows", "calibration_by_ranges", "segment_statistics"]


@without_pandas_warning
@spark_errors
def calibration_by_ranges(
    sdf: Any,
    score: str,
    response: str,
    weight: str | None = None,
    *,
    by: str | Sequence[str] | None = None,
    level: float = LEVEL,
    ranges: int | Sequence[float] | None = None,
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """A Spark DataFrame calibrated by score ranges; see :func:`polars_cumdev.spark.calibration`."""
    request = spark_request("calibration", sdf, by, score, response, weight, "auto")
    probe_spark(sdf.sparkSession)
    return calibrate_rows(sdf.select(*request.columns), request, level, ranges, log)


def calibrate_rows(
    data: Any,
    request: Request,
    level: float,
    ranges: int | Sequence[float] | None = None,
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """The calibration table of a Spark DataFrame already checked against ``request``
    (its columns those of ``request``): the steps of :func:`calibration_by_ranges`."""
    note = steps.clock(log)
    keys, cuts, scale, shuffled, cells_of, points_of = _ranged(data, request, ranges, note)
    try:
        return calibrate_ranges(
            keys,
            cuts,
            scale,
            level,
            request.prepared(),
            cells_of,
            jobs.batches(shuffled, request),
            points_of,
            note,
        )
    finally:
        shuffled.unpersist()


@contextmanager
def segment_statistics(
    data: Any, request: Request, repeat: Repeat, tallies: list[pl.DataFrame]
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame, Locate]]:
    """Every segment's statistics by score ranges (no stretch located yet), its largest
    weight and count of responses other than 0 and 1 per range
    (:func:`~polars_cumdev.engines.cluster.repeats.split_cells`) and the pass that
    locates the stretches of the segments a predicate chooses (the significant ones,
    once the family-wise decision is made), while the rows stay cached.

    ``data``: the Spark DataFrame of the loaded rows (checked), which each range's task
    repeats per segment (the key ``SEGMENT`` of ``request``) by ``repeat``: one copy of
    each row is shuffled. No segment, the whole population included, has to fit in one
    task. ``tallies``: the check counts of ``data``'s partitions by ``repeat.source``
    (the caller's pass made them; no second pass checks the rows again).
    """
    from pyspark import StorageLevel

    data = data.persist(StorageLevel.MEMORY_AND_DISK)  # (read by four jobs)
    try:
        keys, _, scale, shuffled, cells_of, points_of = _ranged(
            data, request, None, steps.clock(None), repeat, tallies
        )
        try:
            cells, maxima = split_cells(cells_of())
            stats, joined = combine(cells, keys, scale)
            yield stats, maxima, partial(locate_chosen, joined, keys, points_of)
        finally:
            shuffled.unpersist()
    finally:
        data.unpersist()


def _ranged(
    data: Any,
    request: Request,
    ranges,
    note: Callable[[str], None],
    repeat: Repeat | None = None,
    tallies: list[pl.DataFrame] | None = None,
) -> tuple:
    """The cuts, the checks (raised), the scale, the rows shuffled by range (kept) and
    the two passes over them.

    With ``repeat``, ``data`` holds loaded rows that each range's task repeats: the
    count, the sample, the checks and the shuffle read one copy of each row, and the
    cuts are those of the repeated rows. ``tallies``: the check counts of ``data``'s
    partitions (by ``repeat.source`` when repeating), when a pass already made them.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as sf

    score = request.score
    read = request if repeat is None else repeat.source
    copies = 1 if repeat is None else repeat.copies
    rows = data.count()
    cuts = sampled_cuts(data, score, ranges, rows, copies)
    count = len(cuts) + 1
    note(f"{rows * copies} rows; {count} score ranges")

    def check(batches: Iterator[Any]) -> Iterator[Any]:
        counts, _ = steps._checked(partition_frame(batches, read), read)
        yield payload_batch([{"range": -1, PAYLOAD: steps.pack(counts)}])

    if tallies is None:  # (else the caller's pass over ``data`` counted them)
        tallies = [t for _, t in collect_payloads(data.mapInArrow(check, PAYLOAD_SCHEMA))]
    scale = weight_scale(read, tallies, count_below(data, read.weight))
    note("pass 1: values checked")
    keys = list(request.keys)
    routes = routing_keys(data.sparkSession, count)
    index = range_of(sf.col(score).cast("double"), cuts)
    route = sf.element_at(sf.array(*[sf.lit(k) for k in routes]), index + 1)
    shuffled = data.withColumn(ROUTE, route).repartition(count, ROUTE).drop(ROUTE)
    shuffled = shuffled.persist(StorageLevel.MEMORY_AND_DISK)

    def split(chunk: pl.DataFrame) -> list[pl.DataFrame]:
        if repeat is None:
            return steps.split_part(chunk, request, cuts)
        return steps._split_rows(chunk, cuts, repeat.score())

    def by_range(work: Callable[[int, Any], object], wanted=None) -> dict[int, Any]:
        def task(batches: Iterator[Any]) -> Iterator[Any]:
            chunk = partition_frame(batches, read)
            if not chunk.height:
                return
            for r, rows_r in enumerate(split(chunk)):
                if rows_r.height and (wanted is None or r in wanted):
                    if repeat is not None:
                        rows_r = RepeatedRange(rows_r, repeat, request)
                    yield payload_batch([{"range": r, PAYLOAD: steps.pack(work(r, rows_r))}])

        found: dict[int, Any] = {}
        for r, result in collect_payloads(shuffled.mapInArrow(task, PAYLOAD_SCHEMA)):
            if r in found:
                raise CumdevError(f"internal error: score range {r} was split between two tasks")
            found[r] = result
        return found

    def cells_of() -> list[pl.DataFrame | None]:
        def work(r: int, rows_r: Any) -> object:
            if repeat is not None:  # (a RepeatedRange: its copies walked without being made)
                return rows_r.cells(cuts, scale, r)
            return range_cells(rows_r, keys, cuts, scale, r)

        found = by_range(work)
        return [found.get(r) for r in range(count)]

    def points_of(wanted: dict[int, pl.DataFrame]) -> list:
        def work(r: int, rows_r: Any) -> object:
            if repeat is not None:
                return rows_r.points(cuts, scale, r, wanted[r])
            return range_points(rows_r, keys, cuts, scale, r, wanted[r])

        found = by_range(work, set(wanted))
        return [found[r] for r in wanted if r in found]

    return keys, cuts, scale, shuffled, cells_of, points_of
