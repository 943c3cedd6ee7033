"""Drift and recalibrated scores where the data live (issue 39, items 2 and 3), on local clusters.

``calibration_drift`` on Spark (``local[2]``) and Dask (a ``LocalCluster`` of two processes)
gives the in-process table: same rows, order and ``flagged`` decision, statistics to 1e-12
relative (the engines calibrate the windows by score ranges, in process one pass; the bits
of the in-process ranges: test_cluster_drift_ranges.py); ``apply`` gives the in-process
recalibrated scores bit for bit, the other columns untouched. The same calls against
clusters of separate processes: tests/engines/test_real_clusters.py. Slow: each starts a
cluster.
"""

from __future__ import annotations

import polars as pl
import pytest
from cluster_cases import (
    assert_drift_same,
    assert_scores_same,
    drift_data,
    drift_expected,
    expected_error,
    fix_case,
)

from polars_cumdev import CumdevError
from polars_cumdev.errors import ColumnNotFoundError

pytestmark = pytest.mark.slow

#: (options, keys): disjoint weeks, per group, overlapping 3-week windows, days under Bonferroni.
DRIFTS = [
    ({}, ["ts"]),
    ({"by": "g"}, ["g", "ts"]),
    ({"period": "3w", "by": "g"}, ["g", "ts"]),
    ({"every": "1d", "adjustment": "bonferroni"}, ["ts"]),
]


def to_dask(df: pl.DataFrame, parts: int = 5):
    import dask.dataframe as dd

    return dd.from_pandas(df.to_pandas(use_pyarrow_extension_array=True), npartitions=parts)


def test_dask_drift_equals_in_process(client):
    import polars_cumdev.dask as cdask

    df = drift_data(3)
    source = to_dask(df.sample(fraction=1.0, shuffle=True, seed=1))
    for options, keys in DRIFTS:
        actual = cdask.calibration_drift(
            source, "score", "response", "w", time="ts", scheduler=client, **options
        )
        assert_drift_same(drift_expected(df, **options), actual, keys)
        if not options:  # the planted week, found on the cluster too
            assert actual["flagged"].any()


def test_spark_drift_equals_in_process(spark):
    import polars_cumdev.spark as cspark

    df = drift_data(4)
    source = spark.createDataFrame(df.to_arrow()).repartition(3)
    for options, keys in DRIFTS[:3]:
        actual = cspark.calibration_drift(source, "score", "response", "w", time="ts", **options)
        assert_drift_same(drift_expected(df, **options), actual, keys)


def test_drift_refuses_what_in_process_refuses(client, spark):
    import polars_cumdev.dask as cdask
    import polars_cumdev.spark as cspark

    df = drift_data(5, weeks=4, per_week=100)
    untimed = df.with_columns(
        pl.when(pl.int_range(pl.len()) % 97 == 3).then(None).otherwise("ts").alias("ts")
    )
    cases = [
        (untimed, {}),
        (df, {"every": "weekly"}),
        (df, {"period": "5d"}),
        (df, {"adjustment": "bh"}),
        (df.drop("w"), {}),
    ]
    for frame, options in cases:
        expected = expected_error(lambda f=frame, o=options: drift_expected(f, **o))
        for engine in ("dask", "spark"):
            with pytest.raises(CumdevError) as info:
                if engine == "dask":
                    source = to_dask(frame)
                    cdask.calibration_drift(
                        source, "score", "response", "w", time="ts", scheduler=client, **options
                    )
                else:
                    source = spark.createDataFrame(frame.to_arrow())
                    cspark.calibration_drift(source, "score", "response", "w", time="ts", **options)
            assert (type(info.value), str(info.value)) == expected, (engine, options)


def test_dask_apply_same_bits(client):
    import polars_cumdev.dask as cdask

    fix, rows = fix_case()
    expected = fix.apply(rows)
    scored = cdask.apply(to_dask(rows, 4), fix, scheduler=client)
    actual = pl.from_pandas(scored.compute())
    assert_scores_same(expected, actual)
    again = cdask.apply(to_dask(rows, 3), fix, name="p", scheduler=client)  # replaced in place
    assert_scores_same(rows.with_columns(fix.expr()), pl.from_pandas(again.compute()))


def test_spark_apply_same_bits(spark):
    import polars_cumdev.spark as cspark

    fix, rows = fix_case()
    expected = fix.apply(rows)
    scored = cspark.apply(spark.createDataFrame(rows.to_arrow()).repartition(3), fix)
    assert_scores_same(expected, pl.from_arrow(scored.toArrow()))
    again = cspark.apply(spark.createDataFrame(rows.to_arrow()), fix, name="p")
    assert_scores_same(rows.with_columns(fix.expr()), pl.from_arrow(again.toArrow()))


def test_apply_missing_column_is_the_in_process_error(client, spark):
    import polars_cumdev.dask as cdask
    import polars_cumdev.spark as cspark

    fix, rows = fix_case(50)
    lacking = rows.drop("x")
    expected = expected_error(lambda: fix.apply(lacking))
    assert expected[0] is ColumnNotFoundError and "'x'" in expected[1]
    for run in (
        lambda: cdask.apply(to_dask(lacking, 2), fix, scheduler=client),
        lambda: cspark.apply(spark.createDataFrame(lacking.to_arrow()), fix),
    ):
        with pytest.raises(CumdevError) as info:
            run()
        assert (type(info.value), str(info.value)) == expected
    wrong = rows.with_columns(pl.col("a").cast(pl.String) + "x")  # "a" = 2 compares a string
    with pytest.raises(CumdevError, match="cannot read the frame's columns"):
        cspark.apply(spark.createDataFrame(wrong.to_arrow()), fix)


# --------------------------------------------------------------------------
# multicalibration where the data live (issue 39, item 1), on the same clusters.
# --------------------------------------------------------------------------


def test_dask_multicalibration_equals_in_process(client):
    """Weighted rows with nulls, NaN and a continuous feature (a segment's p simulated);
    the echo test's data (echoes named); soft labels (bounded); parts of different counts
    give the same table."""
    from segment_cases import (
        ECHOING,
        MIXED,
        SOFT,
        assert_family_same,
        echoing_cell,
        expected,
        soft_labels,
    )
    from segment_cases import mixed_features as mixed

    import polars_cumdev.dask as cdask

    df = mixed(3)
    want = expected(df, MIXED)
    assert "simulated" in want["p_method"].to_list()  # the finite-sample step is exercised
    tables = []
    for parts in (3, 5):
        source = to_dask(df.sample(fraction=1.0, shuffle=True, seed=parts), parts)
        got = cdask.multicalibration(source, "s", "y", "w", segments=MIXED, scheduler=client)
        assert_family_same(want, got)
        tables.append(got)
    # the same bits whatever the partitioning and row order (every sum made in ranges)
    assert tables[0].equals(tables[1], null_equal=True)
    df = echoing_cell(1)
    want = expected(df, ECHOING, None)
    assert "echo" in want["finding"].to_list()
    got = cdask.multicalibration(to_dask(df, 4), "s", "y", segments=ECHOING, scheduler=client)
    assert_family_same(want, got)
    df = soft_labels(1)  # soft labels: the small candidates bounded, as in process
    want = expected(df, SOFT)
    assert "bound" in want["p_method"].to_list()
    got = cdask.multicalibration(to_dask(df, 2), "s", "y", "w", segments=SOFT, scheduler=client)
    assert_family_same(want, got)


def test_spark_multicalibration_equals_in_process(spark):
    """The Dask test's first and soft-label cases (the echoes and the driver's steps are
    shared code)."""
    from segment_cases import MIXED, SOFT, assert_family_same, expected, soft_labels
    from segment_cases import mixed_features as mixed

    import polars_cumdev.spark as cspark

    df = mixed(5, rows=2000)
    source = spark.createDataFrame(df.to_arrow()).repartition(3)
    want = expected(df, MIXED)
    assert "simulated" in want["p_method"].to_list()
    assert_family_same(want, cspark.multicalibration(source, "s", "y", "w", segments=MIXED))
    df = soft_labels(2)  # soft labels: the small candidates bounded, as in process
    want = expected(df, SOFT)
    assert "bound" in want["p_method"].to_list()
    source = spark.createDataFrame(df.to_arrow()).repartition(2)
    assert_family_same(want, cspark.multicalibration(source, "s", "y", "w", segments=SOFT))


def test_multicalibration_refuses_what_in_process_refuses(client, spark):
    from segment_cases import MIXED, expected
    from segment_cases import mixed_features as mixed

    import polars_cumdev.dask as cdask
    import polars_cumdev.spark as cspark

    df = mixed(6, rows=400)
    nulls = df.with_columns(
        pl.when(pl.int_range(pl.len()) == 350).then(None).otherwise("s").alias("s")
    )
    for frame, options in [(nulls, {}), (df, {"level": 2.0})]:
        want = expected_error(lambda f=frame, o=options: expected(f, MIXED, **o))
        with pytest.raises(CumdevError) as info:
            cdask.multicalibration(
                to_dask(frame, 3), "s", "y", "w", segments=MIXED, scheduler=client, **options
            )
        assert (type(info.value), str(info.value)) == want
        with pytest.raises(CumdevError) as info:
            cspark.multicalibration(
                spark.createDataFrame(frame.to_arrow()), "s", "y", "w", segments=MIXED, **options
            )
        assert (type(info.value), str(info.value)) == want
    with pytest.raises(CumdevError, match="method='holm'"):
        cdask.multicalibration(
            to_dask(df), "s", "y", "w", segments=MIXED, method="bootstrap", scheduler=client
        )
