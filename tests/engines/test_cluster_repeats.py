"""Segments' rows repeated in their range's task (engines/cluster/repeats.py), on local clusters.

Multicalibration on Dask and Spark shuffles each row once; the task of its score range
walks it into its segment in every feature subset, without making the copies
(``RepeatedRange``). Both must give the statistics of the copies made beforehand and
calibrated by ranges as any grouped rows are, bit for bit: the same cuts (those of the
copies), each segment's rows walked in the same order. The copies are made by the same
function (``Repeat.rows``); the statistics are compared with ``DataFrame.equals``. Ties,
weights, nulls and NaN in the features, a continuous feature cut in levels; 40 ranges,
so that every range holds copies of many rows. On Dask, also: the stretches located for
some segments only, and each segment's largest weight returned by the range steps.
Slow: each starts a cluster."""

from __future__ import annotations

from functools import partial

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from segment_cases import MIXED, mixed_features

from polars_cumdev.engines.cluster import steps
from polars_cumdev.engines.cluster.finite import OTHER, group_maxima
from polars_cumdev.engines.cluster.repeats import Repeat, range_sums
from polars_cumdev.engines.cluster.segment_engines import _tables, prepare_request, segment_request
from polars_cumdev.engines.cluster.segment_levels import levels_from_tables, merge_tables
from polars_cumdev.engines.cluster.segments import SEGMENT, Layout, segment_numbers, segment_sums
from polars_cumdev.engines.partitioned.calibration_drivers import locate_chosen
from polars_cumdev.engines.partitioned.calibration_ranges import combine
from polars_cumdev.engines.partitioned.columns import WMAX
from polars_cumdev.method.location import LOCATION_COLUMNS

pytestmark = pytest.mark.slow

RANGES = 40
ROWS = 2500


def case(parts: int):
    """The loaded parts, the segments' request, the repetition and the segments' layout."""
    df = mixed_features(7, rows=ROWS).with_columns(pl.col("s").round(2))  # tied scores
    request = prepare_request(df.schema, MIXED, "s", "y", "w")
    chunks = [request.conform(c) for c in df.select(request.columns).iter_slices(-(-ROWS // parts))]
    tables = merge_tables([_tables(c, request, MIXED)[1] for c in chunks], len(MIXED.features))
    layout = Layout.of(levels_from_tables(tables, MIXED, pl.Schema(dict(request.schema))), MIXED)
    repeat = Repeat(request, len(layout.subsets), partial(segment_numbers, layout=layout))
    return chunks, segment_request(request), repeat, layout


def all_located(keys, scale, cells_of, points_of) -> pl.DataFrame:
    """Every segment's statistics with every stretch with T > 0 located."""
    stats, joined = combine(cells_of(), keys, scale)
    return locate_chosen(joined, keys, points_of, stats)


def merged(maxima: pl.DataFrame) -> pl.DataFrame:
    """Per-batch maxima added up per segment, in segment order."""
    return maxima.group_by(SEGMENT).agg(pl.col(WMAX).max(), pl.col(OTHER).sum()).sort(SEGMENT)


def assert_same_bits(statistics, first, loaded, repeat) -> pl.DataFrame:
    """The cuts and statistics of ``loaded`` repeated in the tasks are those of ``first``
    (repeated before), with ``RANGES`` and with the default ranges (counted from the rows
    shuffled, ``steps.default_ranges(2500, copies)``, given to ``first`` as a count); the
    statistics of the default ranges."""
    default = steps.default_ranges(ROWS, repeat.copies)
    assert default != steps.default_ranges(ROWS * repeat.copies)  # (the copies' count differs)
    for ranges, counted in ((RANGES, RANGES), (None, default)):
        cuts, expected = statistics(first, counted)
        got_cuts, got = statistics(loaded, ranges, repeat)
        assert len(cuts) > 3
        assert got_cuts == cuts
        assert got.equals(expected, null_equal=True)
    return expected


def test_dask_repeats_in_the_range_tasks_with_the_bits_of_repeating_first(client, monkeypatch):
    from polars_cumdev.engines.cluster import dask_calibration

    monkeypatch.setattr(steps, "MIN_RANGE_ROWS", 100)  # default: 25 ranges of the rows
    chunks, grouped, repeat, layout = case(3)
    parts = client.scatter(chunks)
    first = client.scatter([repeat.rows(c) for c in chunks])  # every copy shuffled

    def statistics(frames, ranges, repeat=None):
        keys, cuts, scale, _, cells_of, points_of = dask_calibration._ranged(
            client, frames, grouped, ranges, steps.clock(None), repeat
        )
        return cuts, all_located(keys, scale, cells_of, points_of)

    expected = assert_same_bits(statistics, first, parts, repeat)
    stats, maxima, batches, locate = dask_calibration.segment_statistics(
        client, parts, grouped, repeat
    )
    assert locate(stats, None).equals(expected, null_equal=True)
    # The maxima the range steps return are those a pass over the repeated rows finds.
    segments = stats.select(SEGMENT)
    found = [
        f for f in batches(lambda rows: group_maxima(rows, [SEGMENT], segments)) if f is not None
    ]
    assert_frame_equal(merged(pl.concat(found)), merged(maxima))
    # So are the segments' rows, W and W R (the family kept), to rounding.
    total = int(maxima[SEGMENT].max()) + 1
    expected_sums = sum(segment_sums(c, repeat.source, layout)[:total] for c in chunks)
    got_sums = range_sums(maxima, total)
    assert np.array_equal(got_sums[:, 0], expected_sums[:, 0])
    np.testing.assert_allclose(got_sums, expected_sums, rtol=1e-13, atol=0)
    # Locating only some segments (the significant ones, in the audit) gives theirs
    # unchanged and leaves every other segment's stretch null.
    located = expected.filter(pl.col(LOCATION_COLUMNS[0]).is_not_null())[SEGMENT]
    assert located.len() >= 4
    some = located.gather_every(2)
    got = locate(stats, pl.col(SEGMENT).is_in(some.implode()))
    wanted = expected.with_columns(
        pl.when(pl.col(SEGMENT).is_in(some.implode())).then(pl.col(c)).alias(c)
        for c in LOCATION_COLUMNS
    )
    assert got.equals(wanted, null_equal=True)


def test_spark_repeats_in_the_range_tasks_with_the_bits_of_repeating_first(spark, monkeypatch):
    from polars_cumdev.engines.cluster import spark_calibration

    monkeypatch.setattr(steps, "MIN_RANGE_ROWS", 100)  # default: 25 ranges of the rows
    chunks, grouped, repeat, _ = case(2)
    loaded = spark.createDataFrame(pl.concat(chunks).to_arrow()).repartition(3)
    first = pl.concat([repeat.rows(c) for c in chunks]).select(grouped.columns)
    first = spark.createDataFrame(first.to_arrow()).repartition(3)  # every copy shuffled

    def statistics(data, ranges, repeat=None):
        keys, cuts, scale, shuffled, cells_of, points_of = spark_calibration._ranged(
            data, grouped, ranges, steps.clock(None), repeat
        )
        try:
            return cuts, all_located(keys, scale, cells_of, points_of)
        finally:
            shuffled.unpersist()

    assert_same_bits(statistics, first, loaded, repeat)
