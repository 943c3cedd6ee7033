"""The cluster screen on Spark: Arrow batches into Polars on the executors, small results back.

- cut points: the quantiles of a sample of the distinct scores (each
  partition's sample and row count taken in Python, merged on the executors
  into the same sample however the data is partitioned: the cuts, hence
  the bits of the result, depend on the data alone; :mod:`.spark_ranges`);
- pass 1 (``mapInArrow``): each partition's check counts and cell summaries,
  returned as one small pickled row per partition (:mod:`.spark_jobs`);
- pass 2: each row is routed by its score range (an index computed in the
  JVM, mapped to routing keys chosen so that a range lies whole in one
  shuffle partition, consecutive ranges sharing one:
  :func:`.spark_ranges.shuffle_partitions`), ``repartition`` shuffles only
  the columns the screen reads, and ``mapInArrow`` runs the step of each
  range of a partition;
- between them, the finite-sample p-values (:mod:`.finite`): the rows of the
  few groups that may be simulated, filtered in the JVM before they reach
  Python (:func:`.spark_jobs.batches`);
- pass 3, only when some significant group has D > 2 sigma: the same shuffled rows
  (kept from pass 2, in memory or on disk), stepped again for those groups
  in the ranges holding them (their located stretch; the other ranges' rows
  are left out in the JVM). When groups were simulated, the same job sums the
  population between their midpoints (:func:`.finite.combine_and_locate`):
  one pass over the rows instead of two.

The driver raises a failed check with the in-process message, plans the
ranges and combines the range results. This module also builds the local
``SparkSession`` the package's tasks are tuned for (:func:`local_session`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import finite, require, steps
from polars_cumdev.engines.cluster import spark_jobs as jobs
from polars_cumdev.engines.cluster.failures import spark_errors
from polars_cumdev.engines.cluster.probe import probe_spark
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
from polars_cumdev.engines.cluster.spark_ranges import (
    ROUTE,
    range_of,
    routing_keys,
    rows_and_cuts,
    shuffle_partitions,
)
from polars_cumdev.errors import CumdevError
from polars_cumdev.method.findings import LEVEL

__all__ = ["LOCAL_ATTEMPTS", "local_session", "screen", "with_retries"]


#: Attempts of a task on a local master before the job fails (Spark's ``local[N,F]``);
#: plain ``local[N]`` allows one, so a single transient worker error would end the job.
LOCAL_ATTEMPTS = 4
_LOCAL = re.compile(r"local(\[(?P<threads>[^,\]]+)\])?")


def with_retries(master: str, attempts: int = LOCAL_ATTEMPTS) -> str:
    """``master`` with task retries: ``local`` / ``local[N]`` / ``local[*]`` become ``local[N,F]``.

    Spark's local masters give a failed task no second attempt unless the
    master string says how many (``local[N,F]``, F attempts in all). Any
    other master (``local[N,F]`` already, a cluster URL) is returned as given:
    a cluster manager has its own ``spark.task.maxFailures`` (4 by default).
    """
    match = _LOCAL.fullmatch(master.strip())
    if match is None:
        return master
    return f"local[{match['threads'] or 1},{attempts}]"


def local_session(master: str = "local[2]", *, app: str = "polars-cumdev") -> Any:
    """A ``SparkSession`` for ``master`` tuned for this package's tasks.

    Python workers use this interpreter; Polars in each is limited to the
    cores of one task (``POLARS_MAX_THREADS=1``); Arrow batches of 100,000
    rows; no web UI. A local master without retries gets them
    (:func:`with_retries`: ``local[2]`` runs as ``local[2,4]``), so that one
    transient worker error (a killed Python worker, a full temporary disk)
    is retried instead of failing the job.
    """
    require("pyspark", "spark")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(with_retries(master))
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.executorEnv.POLARS_MAX_THREADS", "1")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )


@without_pandas_warning
@spark_errors
def screen(
    sdf: Any,
    by: str | Sequence[str],
    score: str,
    response: str,
    weight: str | None = None,
    *,
    variance: str = "auto",
    ranges: int | Sequence[float] | None = None,
    level: float = LEVEL,
    log: Callable[[str], None] | None = None,
) -> pl.DataFrame:
    """The screen of a Spark DataFrame; see :func:`polars_cumdev.spark.screen`."""
    note = steps.clock(log)
    request = spark_request("screen", sdf, by, score, response, weight, variance)
    probe_spark(sdf.sparkSession)
    note("the executors import polars_cumdev")
    from pyspark import StorageLevel
    from pyspark.sql import functions as sf

    data = sdf.select(*request.columns)
    rows, cuts = rows_and_cuts(data, score, ranges)
    note(f"counted {rows} rows; {len(cuts) + 1} score ranges")

    def summarize(batches: Iterator[Any]) -> Iterator[Any]:
        part = steps.summarize_part(partition_frame(batches, request), request, cuts)
        yield payload_batch([{"range": -1, PAYLOAD: steps.pack(part)}])

    parts = [p for _, p in collect_payloads(data.mapInArrow(summarize, PAYLOAD_SCHEMA))]
    note(f"pass 1: checks and cell summaries of {len(parts)} partitions")
    plan = steps.plan_screen(request, parts, cuts, count_below(data, weight), level)
    note(f"planned: {plan.queries.height} queries")
    count = plan.ranges
    parts = shuffle_partitions(count, rows, data.sparkSession.sparkContext.defaultParallelism)
    routes = routing_keys(data.sparkSession, parts)
    index = range_of(sf.col(score).cast("double"), plan.cuts)
    # Consecutive ranges share a partition (each range whole in one task).
    keys = [routes[r * parts // count] for r in range(count)]
    route = sf.element_at(sf.array(*[sf.lit(k) for k in keys]), index + 1)
    shuffled = data.withColumn(ROUTE, route).repartition(parts, ROUTE).drop(ROUTE)
    # Kept for pass 3, which reads the same shuffled rows: without, Spark shuffled
    # them again (pass 3 at 1e7 rows: 14.1 s, kept 8.6 s; pass 2 14.99 -> 16.90 s).
    shuffled = shuffled.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return _ranges(shuffled, request, plan, note)
    finally:
        shuffled.unpersist()


def _ranges(
    shuffled: Any, request: Request, plan: Any, note: Callable[[str], None]
) -> pl.DataFrame:
    """Passes 2 and 3 on the rows shuffled by range (see the module)."""
    from pyspark.sql import functions as sf

    count = plan.ranges
    shipped = steps.task_plan(plan)

    def step(batches: Iterator[Any]) -> Iterator[Any]:
        chunk = partition_frame(batches, request)
        if not chunk.height:
            return
        pieces = steps.split_part(chunk, request, shipped.cuts)
        del chunk
        for r, rows_r in enumerate(pieces):
            if rows_r.height:
                result = steps.run_range(rows_r, shipped, r)
                yield payload_batch([{"range": r, PAYLOAD: steps.pack(result)}])

    results: list[Any] = [None] * count
    for r, result in collect_payloads(shuffled.mapInArrow(step, PAYLOAD_SCHEMA)):
        if results[r] is not None:
            raise CumdevError(f"internal error: score range {r} was split between two tasks")
        results[r] = result
    note("pass 2: shuffled by range and stepped")

    def located(locating: Any, cut: Any = None) -> tuple[list, list]:
        """Pass 3: the second steps for ``locating`` (and, given ``cut``, every partition's
        population sums between the midpoints, :func:`.finite.sum_intervals`, first)."""
        flagged = {} if locating is None else {r: locating.for_range(r) for r in locating.ranges}

        def points(batches: Iterator[Any]) -> Iterator[Any]:
            chunk = partition_frame(batches, request)
            if not chunk.height:
                return
            if cut is not None:
                sums = finite.sum_intervals(request.standardize(chunk), cut)
                yield payload_batch([{"range": -1, PAYLOAD: steps.pack(sums)}])
            if not flagged:
                return
            for r, rows_r in enumerate(steps.split_part(chunk, request, shipped.cuts)):
                if rows_r.height and r in flagged:
                    found = steps.run_points(rows_r, shipped, r, flagged[r])
                    yield payload_batch([{"range": r, PAYLOAD: steps.pack(found)}])

        rows = shuffled
        if cut is None and len(flagged) < count:  # only the ranges holding a flagged cell
            index = range_of(sf.col(request.score).cast("double"), plan.cuts)
            rows = shuffled.where(index.isin(sorted(flagged)))
        sums, outputs = [], []
        for r, found in collect_payloads(rows.mapInArrow(points, PAYLOAD_SCHEMA)):
            (sums if r < 0 else outputs).append(found)
        if len(outputs) != len(flagged):
            raise CumdevError("internal error: a score range was split between two tasks")
        return sums, outputs

    # The finite-sample p-values (polars_cumdev.engines.cluster.finite) before any flag;
    # the population sums they need are read in pass 3's job.
    stats, locating, outputs = finite.combine_and_locate(
        plan,
        results,
        jobs.batches(shuffled, request),
        lambda locating: located(locating)[1],
        lambda cut, locating: located(locating, cut),
    )
    if locating is not None:
        note(f"pass 3: {locating.groups.height} groups located")
    out = steps.finish_screen(plan, stats, locating, outputs)
    note("combined")
    return out
