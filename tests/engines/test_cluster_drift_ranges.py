"""calibration_drift on the engines by score ranges: (group, window) pairs as the step's groups.

The windowed rows are calibrated as ``calibration(by=)`` calibrates on the
engines: each score range walked by one task, so that no (group, window)
has to fit in one task. With the same cuts the table is that of the
in-process partitioned run (:func:`polars_cumdev.partitioned.calibration_partitioned`
of the rows windowed in process, keyed by (group, window start), then
:func:`polars_cumdev.drift.family_wise`), bit for bit, and the one-pass
:func:`polars_cumdev.drift.calibration_drift`'s to 1e-12 relative with the
same ``flagged`` decision. Cases: weights, groups, overlapping windows,
windows of one to three rows, rows shuffled across parts; Dask on a
2-worker LocalCluster, Spark on ``local[2]`` with two or three ranges
(each Spark task costs about a quarter second). Slow: each starts a cluster.
"""

from __future__ import annotations

import polars as pl
import pytest
from cluster_cases import assert_drift_same, drift_data, drift_expected

from polars_cumdev.drift import family_wise, rolling_windows
from polars_cumdev.partitioned import calibration_partitioned

pytestmark = pytest.mark.slow


def sparse_weeks(seed: int) -> pl.DataFrame:
    """drift_data with week 2 cut to one row, week 3 to two and week 6 to three (per frame)."""
    df = drift_data(seed, weeks=8, per_week=300)
    week = pl.col("ts").dt.truncate("1w")
    starts = df.select(week.unique().sort()).to_series()
    keep = {starts[2]: 1, starts[3]: 2, starts[6]: 3}
    place = pl.int_range(pl.len()).over(week)
    limit = week.replace_strict(keep, default=None, return_dtype=pl.Int64)
    return df.filter(limit.is_null() | (place < limit))


def partitioned_drift(df: pl.DataFrame, ranges, **options) -> pl.DataFrame:
    """The in-process partitioned run: windows in process, calibration by ranges, adjusted."""
    every, period = options.get("every", "1w"), options.get("period")
    by = options.get("by")
    groups = [] if by is None else [by]
    if period is None:
        windowed = df.with_columns(pl.col("ts").dt.truncate(every))
    else:
        windowed = rolling_windows(df.lazy(), "ts", every=every, period=period).collect()
    keys = [*groups, "ts"]
    table = calibration_partitioned(windowed, "score", "response", "w", by=keys, ranges=ranges)
    adjustment = options.get("adjustment", "holm")
    adjusted = family_wise(table.lazy(), alpha=0.05, adjustment=adjustment)
    return adjusted.sort(keys).collect()


#: (options, keys, ranges): groups; overlapping windows; days under Bonferroni.
CASES = [
    ({"by": "g"}, ["g", "ts"], 3),
    ({"period": "3w"}, ["ts"], 4),
    ({"every": "1d", "adjustment": "bonferroni", "by": "g"}, ["g", "ts"], 2),
]


def test_the_in_process_partitioned_run_is_the_one_pass_drift():
    """The reference the engines are held to: within 1e-12 of the one-pass drift, few-row
    windows included (the same check the engines pass below, in process)."""
    df = sparse_weeks(7)
    for options, keys, ranges in CASES:
        assert_drift_same(
            drift_expected(df, **options), partitioned_drift(df, ranges, **options), keys
        )


def to_dask(df: pl.DataFrame, parts: int):
    import dask.dataframe as dd

    return dd.from_pandas(df.to_pandas(use_pyarrow_extension_array=True), npartitions=parts)


def test_dask_drift_by_ranges(client):
    import polars_cumdev.dask as cdask

    df = sparse_weeks(3)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=2)
    for parts, (options, keys, ranges) in zip([3, 5, 4], CASES, strict=True):
        actual = cdask.calibration_drift(
            to_dask(shuffled, parts), "score", "response", "w", time="ts", scheduler=client,
            ranges=ranges, **options,
        )  # fmt: skip
        assert actual.equals(partitioned_drift(df, ranges, **options)), options
        assert_drift_same(drift_expected(df, **options), actual, keys)
    # The default range count (one range at this size) and the planted week flagged.
    actual = cdask.calibration_drift(
        to_dask(df, 2), "score", "response", time="ts", scheduler=client
    )
    expected = drift_expected(df.drop("w").with_columns(w=pl.lit(1.0)))
    assert_drift_same(expected, actual, ["ts"])
    assert actual["flagged"].any()


def test_spark_drift_by_ranges(spark):
    import polars_cumdev.spark as cspark

    df = sparse_weeks(4)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=6)
    for options, keys, ranges in CASES[:2]:
        source = spark.createDataFrame(shuffled.to_arrow()).repartition(3)
        actual = cspark.calibration_drift(
            source, "score", "response", "w", time="ts", ranges=ranges, **options
        )
        if actual.schema["ts"] != df.schema["ts"]:  # Spark's TimestampType: the session's zone
            actual = actual.with_columns(pl.col("ts").dt.replace_time_zone(None))
        assert actual.equals(partitioned_drift(df, ranges, **options)), options
        assert_drift_same(drift_expected(df, **options), actual, keys)
