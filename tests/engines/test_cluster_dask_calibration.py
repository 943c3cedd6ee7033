"""Dask's calibration(by=) by score ranges: the bits of the in-process ranges.

Each range is walked by one task, so no group has to fit in one task; with
the same cuts the table is that of
:func:`polars_cumdev.partitioned.calibration_partitioned`, bit for bit, and
the in-process calibration's to rounding (simulated p-values and located
stretches included), on a 2-worker LocalCluster.
"""

from __future__ import annotations

import polars as pl
import pytest
from calibration_cases import assert_same_table, calibration_data

from polars_cumdev.calibration import calibration
from polars_cumdev.errors import CumdevError
from polars_cumdev.partitioned import calibration_partitioned

dd = pytest.importorskip("dask.dataframe", reason="the dask extra is not installed")
pytest.importorskip("distributed", reason="the dask extra is not installed")

import polars_cumdev.dask as cdask  # noqa: E402

pytestmark = pytest.mark.slow  # (a LocalCluster of its own: about 10 s to start)


@pytest.fixture(scope="module")
def client():
    client = cdask.local_cluster(2)
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()


def to_dask(df: pl.DataFrame, partitions: int = 4):
    return dd.from_pandas(df.to_pandas(use_pyarrow_extension_array=True), npartitions=partitions)


@pytest.mark.parametrize(("by", "ranges", "soft"), [("g", 7, False), (None, 3, True)])
def test_same_bits_as_the_in_process_ranges(client, by, ranges, soft):
    df = calibration_data(11, soft=soft)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    actual = cdask.calibration(
        to_dask(shuffled, 3), "s", "r", "w", by=by, scheduler=client, ranges=ranges
    )
    local = calibration_partitioned(df, "s", "r", "w", by=by, ranges=ranges)
    assert actual.equals(local)
    assert_same_table(calibration(df, "s", "r", "w", by=by), actual)
    if by:  # simulated p-values and located stretches were exercised
        assert "simulated" in actual["p_method"].to_list()
        assert actual["share"].is_not_null().any()


@pytest.mark.parametrize("ranges", [None, 1, 16])
def test_default_and_extreme_range_counts(client, ranges):
    df = calibration_data(12)
    actual = cdask.calibration(to_dask(df, 5), "s", "r", by="g", scheduler=client, ranges=ranges)
    assert_same_table(calibration(df, "s", "r", by="g"), actual)


def test_null_score_is_the_in_process_error(client):
    df = calibration_data(13, rows=500).with_columns(
        pl.when(pl.int_range(pl.len()) == 300).then(None).otherwise(pl.col("s")).alias("s")
    )
    with pytest.raises(CumdevError) as expected:
        calibration(df, "s", "r", "w", by="g")
    with pytest.raises(type(expected.value)) as info:
        cdask.calibration(to_dask(df), "s", "r", "w", by="g", scheduler=client, ranges=4)
    assert str(info.value) == str(expected.value)
