"""Segments' rows repeated in their range's task (engines/cluster/repeats.py), on local clusters.

Multicalibration on Dask and Spark shuffles each row once and repeats it, once per feature
subset, in the task of its score range. Before, the rows were repeated first and all the
copies shuffled. Both must give the same statistics bit for bit: the same cuts (those of
the repeated rows), the same rows in each range. Here the rows are repeated beforehand
with the same function (``repeated_rows``) and calibrated by ranges as any grouped rows
are; the statistics are compared with ``DataFrame.equals``. Ties, weights, nulls and NaN
in the features, a continuous feature cut in levels; 40 ranges, so that every range holds
copies of many rows. Slow: each starts a cluster.
"""

from __future__ import annotations

from functools import partial

import polars as pl
import pytest
from segment_cases import MIXED, mixed_features

from polars_cumdev.engines.cluster import steps
from polars_cumdev.engines.cluster.repeats import Repeat
from polars_cumdev.engines.cluster.segment_engines import _tables, prepare_request, segment_request
from polars_cumdev.engines.cluster.segment_levels import levels_from_tables, merge_tables
from polars_cumdev.engines.cluster.segments import Layout, repeated_rows
from polars_cumdev.engines.partitioned.calibration_drivers import located_statistics

pytestmark = pytest.mark.slow

RANGES = 40


def case(parts: int):
    """The loaded parts, their request, the segments' request and the repetition."""
    df = mixed_features(7, rows=2500).with_columns(pl.col("s").round(2))  # tied scores
    request = prepare_request(df.schema, MIXED, "s", "y", "w")
    chunks = [request.conform(c) for c in df.select(request.columns).iter_slices(-(-2500 // parts))]
    tables = merge_tables([_tables(c, request, MIXED)[1] for c in chunks], len(MIXED.features))
    layout = Layout.of(levels_from_tables(tables, MIXED, pl.Schema(dict(request.schema))), MIXED)
    repeat = Repeat(
        request, len(layout.subsets), partial(repeated_rows, request=request, layout=layout)
    )
    return chunks, segment_request(request), repeat


def assert_same_bits(statistics, first, loaded, repeat) -> pl.DataFrame:
    """The cuts and statistics of ``loaded`` repeated in the tasks are those of ``first``
    (repeated before), with ``RANGES`` and with the default ranges (the rows counted with
    their copies); the statistics of the default ranges."""
    for ranges in (RANGES, None):
        cuts, expected = statistics(first, ranges)
        got_cuts, got = statistics(loaded, ranges, repeat)
        assert len(cuts) > 3
        assert got_cuts == cuts
        assert got.equals(expected, null_equal=True)
    return expected


def test_dask_repeats_in_the_range_tasks_with_the_bits_of_repeating_first(client, monkeypatch):
    from polars_cumdev.engines.cluster import dask_calibration

    monkeypatch.setattr(
        steps, "MIN_RANGE_ROWS", 1000
    )  # default: 3 ranges of the rows, more of the copies
    chunks, grouped, repeat = case(3)
    parts = client.scatter(chunks)
    first = client.scatter([repeat.rows(c) for c in chunks])  # every copy shuffled

    def statistics(frames, ranges, repeat=None):
        keys, cuts, scale, _, cells_of, points_of = dask_calibration._ranged(
            client, frames, grouped, ranges, steps.clock(None), repeat
        )
        return cuts, located_statistics(keys, scale, cells_of, points_of)

    expected = assert_same_bits(statistics, first, parts, repeat)
    public, _ = dask_calibration.segment_statistics(client, parts, grouped, repeat)
    assert public.equals(expected, null_equal=True)


def test_spark_repeats_in_the_range_tasks_with_the_bits_of_repeating_first(spark, monkeypatch):
    from polars_cumdev.engines.cluster import spark_calibration

    monkeypatch.setattr(
        steps, "MIN_RANGE_ROWS", 1000
    )  # default: 3 ranges of the rows, more of the copies
    chunks, grouped, repeat = case(2)
    loaded = spark.createDataFrame(pl.concat(chunks).to_arrow()).repartition(3)
    first = pl.concat([repeat.rows(c) for c in chunks]).select(grouped.columns)
    first = spark.createDataFrame(first.to_arrow()).repartition(3)  # every copy shuffled

    def statistics(data, ranges, repeat=None):
        keys, cuts, scale, shuffled, cells_of, points_of = spark_calibration._ranged(
            data, grouped, ranges, steps.clock(None), repeat
        )
        try:
            return cuts, located_statistics(keys, scale, cells_of, points_of)
        finally:
            shuffled.unpersist()

    assert_same_bits(statistics, first, loaded, repeat)
