"""Score ranges on Spark: where to cut, and how to send each range whole to one task.

The screen (:mod:`.spark_engine`) and the calibration by score ranges
(:mod:`.spark_calibration`) both split the rows by score, as the in-process
range-partitioned engine does (:mod:`polars_cumdev.engines.partitioned`):

- the cut points are quantiles of a sample of the distinct scores, each
  partition's sample merged on the executors into the same sample however
  the data is partitioned (:func:`sampled_cuts`, :func:`rows_and_cuts`), so
  that the cuts, hence the bits of the result, depend on the data alone;
- a row's range is computed in the JVM (:func:`range_of`), then mapped to a
  routing key (:data:`ROUTE`) whose hash partition is known
  (:func:`routing_keys`), consecutive ranges sharing one shuffle partition
  (:func:`shuffle_partitions`), so that ``repartition`` puts each range whole
  in one task.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator, Sequence
from typing import Any

import polars as pl

from polars_cumdev.engines.cluster import steps
from polars_cumdev.engines.cluster.spark_jobs import PAYLOAD, PAYLOAD_SCHEMA, payload_batch
from polars_cumdev.engines.partitioned import ROWS_PER_RANGE
from polars_cumdev.engines.partitioned import cuts as cutting

__all__ = [
    "ROUTE",
    "range_of",
    "routing_keys",
    "rows_and_cuts",
    "sampled_cuts",
    "shuffle_partitions",
]

#: The column holding each row's routing key while it is shuffled.
ROUTE = "__cumdev_route"


def sampled_cuts(
    data: Any, score: str, ranges: int | Sequence[float] | None, rows: int, copies: int = 1
) -> list[float]:
    """Cut points: quantiles of the bottom-k sample of the distinct scores.

    Each partition's sample (:func:`polars_cumdev.engines.partitioned.cuts.sample_scores`,
    of the score column only) is one small row; the executors merge them in
    a tree and the driver gets the merged sample
    (:mod:`polars_cumdev.engines.partitioned.cuts`): the cuts depend on the
    data alone, not on its partitioning, its row order or the cluster.
    ``rows`` counts ``data``'s rows; with ``copies``, the cuts are those of its rows
    each repeated ``copies`` times.
    """
    if ranges is None:
        ranges = steps.default_ranges(rows, copies)
    if not isinstance(ranges, numbers.Integral) or isinstance(ranges, bool):
        return steps.cuts_from_sample([], ranges)  # the cut points given (or a clear error)
    ranges = int(ranges)
    if ranges <= 1 or rows == 0:
        return steps.cuts_from_sample([], ranges)
    sample = _sample(data, score)[1]
    if copies != 1:  # the cuts of ``data``'s rows each repeated ``copies`` times
        sample = cutting.repeat_sample(sample, copies)
    return cutting.quantile_cuts(sample, ranges)


def rows_and_cuts(
    data: Any, score: str, ranges: int | Sequence[float] | None
) -> tuple[int, list[float]]:
    """The row count and :func:`sampled_cuts`, from one job when the cuts are to be sampled.

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
            yield payload_batch([{"range": -1, PAYLOAD: steps.pack(found)}])

    def merge(left: bytes, right: bytes) -> bytes:
        (rows_l, left_s), (rows_r, right_s) = steps.unpack(left), steps.unpack(right)
        joined = cutting.merge_samples([left_s, right_s], size)
        return steps.pack((rows_l + rows_r, joined))

    payloads = data.select(score).mapInArrow(sample, PAYLOAD_SCHEMA).rdd.map(lambda row: row[1])
    # Merged in a tree on the executors (the merge is exact, so its order does
    # not matter): the driver receives one sample, whatever the partitions.
    empty = steps.pack((0, cutting.merge_samples([])))
    rows, merged = steps.unpack(payloads.treeAggregate(empty, merge, merge, depth=2))
    return int(rows), merged


def range_of(score: Any, cuts: Sequence[float]) -> Any:
    """The JVM's range index: the number of cuts below the score, by a balanced CASE tree."""
    from pyspark.sql import functions as sf

    def index(lo: int, hi: int) -> Any:  # ranges lo..hi
        if lo == hi:
            return sf.lit(lo)
        mid = (lo + hi) // 2  # cut ``mid`` separates range mid from mid + 1
        return sf.when(score <= sf.lit(cuts[mid]), index(lo, mid)).otherwise(index(mid + 1, hi))

    return index(0, len(cuts))


def shuffle_partitions(ranges: int, rows: int, slots: int) -> int:
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


def routing_keys(spark: Any, count: int) -> list[int]:
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
