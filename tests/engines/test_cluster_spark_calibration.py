"""Spark's calibration(by=) by score ranges: the bits of the in-process ranges.

Each range is walked by one task (local[2]; a few ranges: each task costs
about a quarter second there); with the same cuts the table is that of
:func:`polars_cumdev.partitioned.calibration_partitioned`, bit for bit, and
the in-process calibration's to rounding (simulated p-values and located
stretches included).
"""

from __future__ import annotations

import shutil

import pytest
from calibration_cases import assert_same_table, calibration_data

from polars_cumdev.calibration import calibration
from polars_cumdev.partitioned import calibration_partitioned

pytestmark = pytest.mark.slow

pytest.importorskip("pyspark", reason="the spark extra is not installed")
pytest.importorskip("pyarrow", reason="the spark extra is not installed")
if shutil.which("java") is None:  # pragma: no cover - CI installs Java
    pytest.skip(
        "Spark needs Java (apt-get install openjdk-17-jre-headless)", allow_module_level=True
    )

import polars_cumdev.spark as cspark  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    session = cspark.local_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.parametrize(("by", "ranges", "soft"), [("g", 4, False), (None, 2, True)])
def test_same_bits_as_the_in_process_ranges(spark, by, ranges, soft):
    df = calibration_data(21, soft=soft)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=5)
    source = spark.createDataFrame(shuffled.to_arrow()).repartition(3)
    actual = cspark.calibration(source, "s", "r", "w", by=by, ranges=ranges)
    local = calibration_partitioned(df, "s", "r", "w", by=by, ranges=ranges)
    assert actual.equals(local)
    assert_same_table(calibration(df, "s", "r", "w", by=by), actual)
    if by:  # simulated p-values and located stretches were exercised
        assert "simulated" in actual["p_method"].to_list()
        assert actual["share"].is_not_null().any()
