"""``multicalibration`` on Spark: the steps of :mod:`.segments` as ``mapInArrow`` jobs.

Jobs over the rows, which stay on the executors: first the checks and value
tables (the levels); then the per-segment rows and sums; then the rows
calibrated by segment and score range
(:func:`.spark_calibration.segment_statistics`: each row is shuffled once to
its score range, whose task walks it into its segment in every feature
subset; no segment, the whole population included, has to fit in one task;
each segment's largest weight comes with its statistics), then the
finite-sample p-values' few rows; last, only when some
significant segment may be an echo, that segment's rows. Only per-segment
summaries and those few rows reach the driver.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
import polars as pl

from polars_cumdev.engines.cluster import require, steps
from polars_cumdev.engines.cluster import spark_jobs as jobs
from polars_cumdev.engines.cluster.checks import raise_tally, tally
from polars_cumdev.engines.cluster.failures import spark_errors
from polars_cumdev.engines.cluster.probe import probe_spark
from polars_cumdev.engines.cluster.repeats import Repeat
from polars_cumdev.engines.cluster.segment_engines import (
    _tables,
    decided_family,
    options_of,
    prepare_request,
    segment_request,
    too_few_rows,
)
from polars_cumdev.engines.cluster.segment_levels import (
    levels_from_tables,
    merge_tables,
    value_tables,
)
from polars_cumdev.engines.cluster.segments import (
    Layout,
    family_table,
    kept_segments,
    segment_numbers,
    segment_rows,
    segment_sums,
)
from polars_cumdev.engines.cluster.spark_calibration import segment_statistics
from polars_cumdev.engines.cluster.spark_files import check_spark_files
from polars_cumdev.engines.cluster.spark_jobs import (
    PAYLOAD,
    PAYLOAD_SCHEMA,
    collect_payloads,
    count_below,
    partition_frame,
    payload_batch,
    polars_schema,
    without_pandas_warning,
)
from polars_cumdev.multicalibration.family import Segments

__all__ = ["spark_multicalibration"]


def _each(data: Any, request: Any, function: Any) -> list:
    """``function`` of each partition's rows (conformed), gathered (empty partitions skipped)."""

    def task(batches: Iterator[Any]) -> Iterator[Any]:
        chunk = partition_frame(batches, request)
        if chunk.height:
            yield payload_batch([{"range": -1, PAYLOAD: steps.pack(function(chunk))}])

    return [found for _, found in collect_payloads(data.mapInArrow(task, PAYLOAD_SCHEMA))]


@without_pandas_warning
@spark_errors
def spark_multicalibration(
    sdf: Any,
    score: str,
    response: str,
    weight: str | None,
    *,
    segments: Segments,
    level: float,
    method: str,
    locate: bool,
) -> pl.DataFrame:
    """See :func:`polars_cumdev.spark.multicalibration`."""
    options = options_of(segments, level, method, locate, "Spark")
    names = [*segments.features, score, response, *([weight] if weight else [])]
    require("pyspark", "spark")
    require("pyarrow", "spark")
    check_spark_files(sdf, names)  # the files behind the frame agree (the in-process message)
    request = prepare_request(polars_schema(sdf), segments, score, response, weight)
    probe_spark(sdf.sparkSession)
    data = sdf.select(*request.columns)
    found = _each(data, request, lambda chunk: _tables(chunk, request, segments))
    tallies = [t for t, _ in found]
    merged = pl.concat(tallies, how="vertical_relaxed") if tallies else pl.DataFrame()
    if not merged.height:
        merged = tally(request.empty(), request.checks(), request.weight)
    raise_tally(merged, request.checks(), weight, count_below(data, weight))
    per_part = [t for _, t in found if t is not None] or [value_tables(request.empty(), segments)]
    tables = merge_tables(per_part, len(segments.features))
    levels = levels_from_tables(tables, segments, pl.Schema(dict(request.schema)))
    layout = Layout.of(levels, segments)

    if too_few_rows(merged, segments):  # (no segment can be kept: the in-process error)

        def sums_of(chunk: pl.DataFrame) -> np.ndarray:
            return segment_sums(chunk, request, layout)

        kept_segments(
            layout, segments, sum(_each(data, request, sums_of), np.zeros((layout.total, 3)))
        )
    grouped = segment_request(request)
    # Each row is shuffled once, from Spark's JVM to Python once a pass: every range's
    # task walks its own rows into their segments, and sums them (the family kept)
    # beside the calibration (:mod:`.repeats`).
    repeat = Repeat(request, len(layout.subsets), partial(segment_numbers, layout=layout))
    # by score ranges: no segment held whole
    with segment_statistics(data, grouped, repeat, tallies) as (stats, extra, locate):
        gather_rows = jobs.batches(data, grouped, repeat)
        found = (stats, extra, gather_rows, locate)
        kept, sums, stats, decision = decided_family(layout, segments, options, *found)

    def gather(wanted: Sequence[int]) -> pl.DataFrame:
        found = _each(data, request, lambda c: segment_rows(c, request, layout, list(wanted)))
        return pl.concat(found, how="vertical_relaxed")

    return family_table(
        layout, segments, options, kept, stats, decision, sums, request.prepared().labels,
        gather, weight is not None,
    )  # fmt: skip
