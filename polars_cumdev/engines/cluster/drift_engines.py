"""Calibration drift on Spark and on Dask: the windows made on the workers, small results back.

Two passes over the rows make the windows, then the calibration by score
ranges (:func:`polars_cumdev.engines.cluster.spark_calibration.calibrate_rows`,
:func:`polars_cumdev.engines.cluster.dask_calibration.calibrate_by_ranges`)
runs with the window start as one more key beside the groups, so that no
(group, window) has to fit in one task:

1. per part, one tally row: its rows, its null times (the in-process check)
   and its first and last ``every``-window (:func:`.windows.tally_part`);
   the driver raises a failed check and takes the data's first and last
   window (:func:`.windows.bounds`);
2. per part, its rows with ``time`` replaced by their window start, a row
   repeated once per window holding it when the windows overlap
   (:func:`.windows.window_rows`); on Spark only the time column goes
   through Polars, the other columns of each Arrow batch are taken as they
   are, and the windowed rows are kept (the range calibration reads them
   in several jobs);
3. the calibration by score ranges of the windowed rows, keyed by (group,
   window): each range's rows walked by one task, the cells combined on the
   driver (the bits of :func:`polars_cumdev.partitioned.calibration_partitioned`
   of the windowed rows with the same cuts); one row per (group, window)
   comes to the driver, which adds the family-wise columns
   (:func:`.windows.finish_drift`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import require, steps
from polars_cumdev.engines.cluster.request import make_request
from polars_cumdev.engines.cluster.windows import (
    ROW,
    DriftRequest,
    bounds,
    drift_request,
    finish_drift,
    tally_part,
    window_rows,
    windowed,
)

__all__ = ["dask_drift", "spark_drift"]


def _names(by: Any, time: str, score: Any, response: Any, weight: Any) -> list[str]:
    groups = [] if by is None else [by] if isinstance(by, str) else list(by)
    named = [*groups, time, score, response, weight]
    return list(dict.fromkeys(c for c in named if isinstance(c, str)))


def spark_drift(
    sdf: Any,
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
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """Calibration drift of a Spark DataFrame; see :func:`polars_cumdev.spark.calibration_drift`."""
    from polars_cumdev.engines.cluster.failures import spark_errors
    from polars_cumdev.engines.cluster.spark_jobs import without_pandas_warning

    run = without_pandas_warning(spark_errors(_spark_drift))
    return run(sdf, score, response, weight, time, every, period, by, alpha, adjustment, ranges)


def _spark_drift(sdf, score, response, weight, time, every, period, by, alpha, adjustment, ranges):
    from polars_cumdev.engines.cluster import spark_jobs
    from polars_cumdev.engines.cluster.probe import probe_spark
    from polars_cumdev.engines.cluster.spark_calibration import calibrate_rows
    from polars_cumdev.engines.cluster.spark_files import check_spark_files

    require("pyspark", "spark")
    require("pyarrow", "spark")
    from pyspark import StorageLevel

    names = _names(by, time, score, response, weight)
    check_spark_files(sdf, names)
    data = sdf.select(*[c for c in names if c in sdf.columns])
    # Every column by name (a missing one: the in-process error, listing them); only
    # those read are typed (an unread column's Spark type may have no Arrow form).
    types = dict(spark_jobs.polars_schema(data))
    schema = {c: pl.Null for c in sdf.columns} | types
    request = drift_request(
        schema, score, response, weight, time=time, every=every, period=period, by=by,
        alpha=alpha, adjustment=adjustment,
    )  # fmt: skip
    probe_spark(sdf.sparkSession)

    def tallies(batches: Iterator[Any]) -> Iterator[Any]:
        chunk = _time_frame(batches, request)
        yield spark_jobs.payload_batch(
            [{"range": -1, spark_jobs.PAYLOAD: steps.pack(tally_part(chunk, request))}]
        )

    schema = spark_jobs.PAYLOAD_SCHEMA
    parts = [p for _, p in spark_jobs.collect_payloads(data.mapInArrow(tallies, schema))]
    first, last = bounds(request, parts)

    def window(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            yield _window_batch(batch, request, first, last)

    calib = make_request("calibration", types, request.keys, score, response, weight)
    rows = data.mapInArrow(window, data.schema).select(*calib.columns)
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)  # (read by the range calibration's jobs)
    try:
        table = calibrate_rows(rows, calib, alpha, ranges)
    finally:
        rows.unpersist()
    return finish_drift(request, table)


def _time_frame(batches: Iterator[Any], request: DriftRequest) -> pl.DataFrame:
    """The time column of a partition's Arrow batches, as a Polars frame."""
    import pyarrow as pa

    batches = list(batches)
    if not batches:
        return pl.DataFrame(schema={request.time: request.dtype})
    table = pa.Table.from_batches(batches).select([request.time])
    return pl.from_arrow(table)


def _window_batch(batch: Any, request: DriftRequest, first: Any, last: Any) -> Any:
    """An Arrow batch with its time column replaced by the window starts (rows repeated)."""
    import pyarrow as pa

    time = pl.from_arrow(pa.Table.from_batches([batch]).select([request.time]))
    found = window_rows(time, request, first, last)
    taken = batch.take(pa.array(found.get_column(ROW).to_numpy()))
    at = batch.schema.get_field_index(request.time)
    field = batch.schema.field(at)
    starts = found.get_column(request.time).to_arrow().cast(field.type)
    columns = [starts if i == at else taken.column(i) for i in range(taken.num_columns)]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def dask_drift(
    source: Any,
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
    scheduler: Any,
    ranges: int | Sequence[float] | None = None,
) -> pl.DataFrame:
    """Calibration drift on Dask; see :func:`polars_cumdev.dask.calibration_drift`."""
    from polars_cumdev.engines.cluster import dask_engine
    from polars_cumdev.engines.cluster.dask_calibration import calibrate_by_ranges
    from polars_cumdev.engines.cluster.probe import probe_dask

    found: dict[str, DriftRequest] = {}

    def make(schema: pl.Schema) -> Any:
        request = drift_request(
            schema, score, response, weight, time=time, every=every, period=period, by=by,
            alpha=alpha, adjustment=adjustment,
        )  # fmt: skip
        found["drift"] = request
        return make_request("calibration", schema, request.keys, score, response, weight)

    with dask_engine._client(scheduler) as client:
        probe_dask(client)
        names = _names(by, time, score, response, weight)
        parts, calib = dask_engine._load(client, source, make, names)
        request = found["drift"]
        tallies = client.gather(client.map(tally_part, parts, request=request))
        first, last = bounds(request, tallies)
        rows = client.map(windowed, parts, request=request, first=first, last=last)
        del parts
        table = calibrate_by_ranges(client, rows, calib, alpha, ranges)
        return finish_drift(request, table)
