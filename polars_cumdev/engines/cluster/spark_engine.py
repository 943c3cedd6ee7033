"""The cluster screen on Spark: Arrow batches into Polars on the executors, small results back.

- cut points: the quantiles of a sample of the distinct scores (each
  partition's sample and row count taken in Python, merged on the executors
  into the same sample however the data is partitioned: the cuts, hence
  the bits of the result, depend on the data alone);
- pass 1 (``mapInArrow``): each partition's check counts and cell summaries,
  returned as one small pickled row per partition;
- pass 2: each row is routed by its score range (an index computed in the
  JVM, mapped to routing keys chosen so that a range lies whole in one
  shuffle partition, consecutive ranges sharing one: :func:`_partitions`),
  ``repartition`` shuffles only the columns the screen reads, and
  ``mapInArrow`` runs the step of each range of a partition;
- pass 3, only when some significant group has D > 2 sigma: the same shuffled rows
  (kept from pass 2, in memory or on disk), stepped again for those groups
  in the ranges holding them (their located stretch).

The driver raises a failed check with the in-process message, plans the
ranges and combines the range results. The Python workers convert with
:func:`polars.from_arrow` (no pandas).
"""

from __future__ import annotations

import functools
import numbers
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import finite, require, steps
from polars_cumdev.engines.cluster.failures import spark_errors
from polars_cumdev.engines.cluster.probe import probe_spark
from polars_cumdev.engines.cluster.request import Kind, Request, make_request
from polars_cumdev.engines.cluster.spark_files import check_spark_files
from polars_cumdev.engines.partitioned import ROWS_PER_RANGE
from polars_cumdev.engines.partitioned import cuts as cutting
from polars_cumdev.errors import CumdevError
from polars_cumdev.method.findings import LEVEL

__all__ = ["LOCAL_ATTEMPTS", "local_session", "screen", "with_retries"]

_PAYLOAD = "payload"
_ROUTE = "__cumdev_route"


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


def _polars_schema(sdf: Any) -> pl.Schema:
    """The Polars schema of a Spark DataFrame (through its Arrow schema)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    # A TimestampType column reaches the Python workers in the session's time zone.
    zone = sdf.sparkSession.conf.get("spark.sql.session.timeZone")
    return pl.from_arrow(to_arrow_schema(sdf.schema, timezone=zone).empty_table()).schema


def _frame(batches: Iterator[Any], request: Request) -> pl.DataFrame:
    """A partition's Arrow batches as one Polars frame (the request's schema when empty)."""
    import pyarrow as pa

    batches = list(batches)
    if not batches:
        return request.empty()
    return request.conform(pl.from_arrow(pa.Table.from_batches(batches)))


def _payload(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_pylist(rows, schema=_payload_schema())


def _payload_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("range", pa.int64()), (_PAYLOAD, pa.binary())])


_SPARK_SCHEMA = f"range long, {_PAYLOAD} binary"


def _collect(frame: Any) -> list[tuple[int, object]]:
    return [(row["range"], steps.unpack(row[_PAYLOAD])) for row in frame.collect()]


def _count_below(data: Any, weight: str | None):
    from pyspark.sql import functions as sf

    def count(threshold: float) -> int:
        return data.where(sf.col(weight).cast("double") < sf.lit(threshold)).count()

    return count


def _cuts(data: Any, score: str, ranges: int | Sequence[float] | None, rows: int) -> list[float]:
    """Cut points: quantiles of the bottom-k sample of the distinct scores.

    Each partition's sample (:func:`polars_cumdev.engines.partitioned.cuts.sample_scores`,
    of the score column only) is one small row; the executors merge them in
    a tree and the driver gets the merged sample
    (:mod:`polars_cumdev.engines.partitioned.cuts`): the cuts depend on the
    data alone, not on its partitioning, its row order or the cluster.
    """
    if ranges is None:
        ranges = steps.default_ranges(rows)
    if not isinstance(ranges, numbers.Integral) or isinstance(ranges, bool):
        return steps.cuts_from_sample([], ranges)  # the cut points given (or a clear error)
    ranges = int(ranges)
    if ranges <= 1 or rows == 0:
        return steps.cuts_from_sample([], ranges)
    return cutting.quantile_cuts(_sample(data, score)[1], ranges)


def _rows_and_cuts(
    data: Any, score: str, ranges: int | Sequence[float] | None
) -> tuple[int, list[float]]:
    """The row count and :func:`_cuts`, from one job when the cuts are to be sampled.

    The partitions' row counts travel with their samples (a separate
    ``count()`` was one more job and one more read of the input).
    """
    given = ranges is not None and (
        not isinstance(ranges, numbers.Integral) or isinstance(ranges, bool) or int(ranges) <= 1
    )
    if given:
        cuts = steps.cuts_from_sample([], ranges)  # the cut points given (or a clear error)
        return data.count(), cuts
    rows, sample = _sample(data, score)
    count = steps.default_ranges(rows) if ranges is None else int(ranges)
    if count <= 1 or rows == 0:
        return rows, steps.cuts_from_sample([], count)
    return rows, cutting.quantile_cuts(sample, count)


def _sample(data: Any, score: str) -> tuple[int, Any]:
    """The rows of ``data`` and the merged sample of its distinct scores (one job)."""
    size = cutting.SAMPLE_SIZE

    def sample(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        batches = list(batches)
        if batches:
            scores = pl.from_arrow(pa.Table.from_batches(batches)).get_column(score)
            found = (scores.len(), cutting.sample_scores(scores, size))
            yield _payload([{"range": -1, _PAYLOAD: steps.pack(found)}])

    def merge(left: bytes, right: bytes) -> bytes:
        (rows_l, left_s), (rows_r, right_s) = steps.unpack(left), steps.unpack(right)
        joined = cutting.merge_samples([left_s, right_s], size)
        return steps.pack((rows_l + rows_r, joined))

    payloads = data.select(score).mapInArrow(sample, _SPARK_SCHEMA).rdd.map(lambda row: row[1])
    # Merged in a tree on the executors (the merge is exact, so its order does
    # not matter): the driver receives one sample, whatever the partitions.
    empty = steps.pack((0, cutting.merge_samples([])))
    rows, merged = steps.unpack(payloads.treeAggregate(empty, merge, merge, depth=2))
    return int(rows), merged


def _range_of(score: Any, cuts: Sequence[float]) -> Any:
    """The JVM's range index: the number of cuts below the score, by a balanced CASE tree."""
    from pyspark.sql import functions as sf

    def index(lo: int, hi: int) -> Any:  # ranges lo..hi
        if lo == hi:
            return sf.lit(lo)
        mid = (lo + hi) // 2  # cut ``mid`` separates range mid from mid + 1
        return sf.when(score <= sf.lit(cuts[mid]), index(lo, mid)).otherwise(index(mid + 1, hi))

    return index(0, len(cuts))


def _partitions(ranges: int, rows: int, slots: int) -> int:
    """Shuffle partitions for ``ranges`` score ranges of ``rows`` rows in all on ``slots`` slots.

    A task costs about a quarter second of its own in ``local[2]`` (one
    task per range was 64 tasks for the two passes over 1e7 rows in 32
    ranges): consecutive ranges share a partition, with as many partitions
    as the slots (a multiple of them) and at least one per
    :data:`polars_cumdev.engines.partitioned.ROWS_PER_RANGE` rows, so that a
    task holds no more rows than one range of the in-process partitioned
    screen. Each range stays whole in one task, so the result does not
    depend on this count.
    """
    wanted = max(1, slots, -(-max(0, rows) // ROWS_PER_RANGE))
    wanted = -(-wanted // max(1, slots)) * max(1, slots)
    return max(1, min(ranges, wanted))


_ROUTES: dict[int, list[int]] = {}


def _routes(spark: Any, count: int) -> list[int]:
    """Keys whose hash partitions (``repartition(count, key)``) are 0, 1, ..., count - 1.

    Found by a small Spark job (Spark's own hash), once per ``count``: the
    hash is a fixed function (Murmur3, seed 42).
    """
    from pyspark.sql import functions as sf

    if count in _ROUTES:
        return _ROUTES[count]
    found: dict[int, int] = {}
    size = 64 * count
    while len(found) < count:
        ids = spark.range(0, size).select(sf.col("id").cast("int").alias("k"))
        rows = ids.select("k", sf.pmod(sf.hash("k"), sf.lit(count)).alias("p")).collect()
        for row in rows:
            found.setdefault(row["p"], row["k"])
        size *= 4
    _ROUTES[count] = [found[p] for p in range(count)]
    return _ROUTES[count]


def _request(kind: Kind, sdf: Any, by, score, response, weight, variance) -> Request:
    require("pyspark", "spark")
    require("pyarrow", "spark")
    keys = [] if by is None else [by] if isinstance(by, str) else list(by)
    names = [c for c in [*keys, score, response, weight] if isinstance(c, str)]
    # The files behind the frame are checked against each other first, as the
    # in-process Parquet screen and the Dask engine check them (same message).
    check_spark_files(sdf, names)
    return make_request(kind, _polars_schema(sdf), by, score, response, weight, variance)


#: The one warning PySpark 4 gives on every call with pandas 3 installed (the
#: ``[spark]`` extra pins ``pandas<3``; an environment may still hold pandas 3).
_PANDAS_WARNING = "PySpark does not yet fully support pandas"


def _without_pandas_warning(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``function`` with exactly PySpark's pandas-3 FutureWarning silenced."""

    @functools.wraps(function)
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_PANDAS_WARNING, category=FutureWarning)
            return function(*args, **kwargs)

    return quiet


@_without_pandas_warning
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
    request = _request("screen", sdf, by, score, response, weight, variance)
    probe_spark(sdf.sparkSession)
    note("the executors import polars_cumdev")
    from pyspark import StorageLevel
    from pyspark.sql import functions as sf

    data = sdf.select(*request.columns)
    rows, cuts = _rows_and_cuts(data, score, ranges)
    note(f"counted {rows} rows; {len(cuts) + 1} score ranges")

    def summarize(batches: Iterator[Any]) -> Iterator[Any]:
        part = steps.summarize_part(_frame(batches, request), request, cuts)
        yield _payload([{"range": -1, _PAYLOAD: steps.pack(part)}])

    parts = [p for _, p in _collect(data.mapInArrow(summarize, _SPARK_SCHEMA))]
    note(f"pass 1: checks and cell summaries of {len(parts)} partitions")
    plan = steps.plan_screen(request, parts, cuts, _count_below(data, weight), level)
    note(f"planned: {plan.queries.height} queries")
    count = plan.ranges
    parts = _partitions(count, rows, data.sparkSession.sparkContext.defaultParallelism)
    routes = _routes(data.sparkSession, parts)
    index = _range_of(sf.col(score).cast("double"), plan.cuts)
    # Consecutive ranges share a partition (each range whole in one task).
    keys = [routes[r * parts // count] for r in range(count)]
    route = sf.element_at(sf.array(*[sf.lit(k) for k in keys]), index + 1)
    shuffled = data.withColumn(_ROUTE, route).repartition(parts, _ROUTE).drop(_ROUTE)
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
    count = plan.ranges
    shipped = steps.task_plan(plan)

    def step(batches: Iterator[Any]) -> Iterator[Any]:
        chunk = _frame(batches, request)
        if not chunk.height:
            return
        pieces = steps.split_part(chunk, request, shipped.cuts)
        del chunk
        for r, rows_r in enumerate(pieces):
            if rows_r.height:
                result = steps.run_range(rows_r, shipped, r)
                yield _payload([{"range": r, _PAYLOAD: steps.pack(result)}])

    results: list[Any] = [None] * count
    for r, result in _collect(shuffled.mapInArrow(step, _SPARK_SCHEMA)):
        if results[r] is not None:
            raise CumdevError(f"internal error: score range {r} was split between two tasks")
        results[r] = result
    note("pass 2: shuffled by range and stepped")
    # The finite-sample p-values (polars_cumdev.engines.cluster.finite) before any flag.
    stats, locating = finite.combine_ranges(plan, results, batches(shuffled, request))
    outputs: list[Any] = []
    if locating is not None:
        flagged = {r: locating.for_range(r) for r in locating.ranges}

        def points(batches: Iterator[Any]) -> Iterator[Any]:
            chunk = _frame(batches, request)
            if not chunk.height:
                return
            for r, rows_r in enumerate(steps.split_part(chunk, request, shipped.cuts)):
                if rows_r.height and r in flagged:
                    found = steps.run_points(rows_r, shipped, r, flagged[r])
                    yield _payload([{"range": r, _PAYLOAD: steps.pack(found)}])

        outputs = [found for _, found in _collect(shuffled.mapInArrow(points, _SPARK_SCHEMA))]
        if len(outputs) != len(flagged):
            raise CumdevError("internal error: a score range was split between two tasks")
        note(f"pass 3: {locating.groups.height} groups located")
    out = steps.finish_screen(plan, stats, locating, outputs)
    note("combined")
    return out


def batches(data: Any, request: Request) -> finite.MapBatches:
    """Map a function over the standardized rows of each partition of ``data`` and gather
    the small results (:mod:`polars_cumdev.engines.cluster.finite`)."""

    def run(function: Callable[[pl.DataFrame], object]) -> list:
        def task(chunks: Iterator[Any]) -> Iterator[Any]:
            chunk = _frame(chunks, request)
            if chunk.height:
                found = function(request.standardize(chunk))
                yield _payload([{"range": -1, _PAYLOAD: steps.pack(found)}])

        return [found for _, found in _collect(data.mapInArrow(task, _SPARK_SCHEMA))]

    return run
