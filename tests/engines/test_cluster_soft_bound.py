"""Soft labels' bound on the cluster engines: Dask and Spark ``calibration(by=)`` equal
in-process (docs/method.md, "Soft labels: a bound valid at every size").

The groups meeting the criterion send their rows to the driver, which bounds them
with the in-process function on the same rows in the same order: the same
p-values (bit for bit) and ``p_method``. Marked slow (a local cluster each).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from cluster_cases import assert_frames_close, calibration_expected

pytestmark = pytest.mark.slow


def soft_groups(seed: int = 5, groups: int = 60) -> pl.DataFrame:
    """Soft labels near 0/1 (Beta with mean the score, concentration 0.1), scores from
    Beta(1, 12) on a grid of 1/1000 (ties), groups of 10-30 rows, log-normal weights
    (sigma 1), every fifth group's mean raised by 0.3: some groups are bounded."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups), rng.integers(10, 31, groups))
    s = np.clip(np.round(rng.beta(1.0, 12.0, g.size), 3), 1e-3, None)
    mean = np.clip(s + 0.3 * (g % 5 == 0), 1e-3, 0.999)
    r = rng.beta(0.1 * mean, 0.1 * (1.0 - mean))
    w = rng.lognormal(0.0, 1.0, g.size)
    return pl.DataFrame({"g": [f"g{x:02d}" for x in g], "s": s, "r": r, "w": w})


def _check(expected: pl.DataFrame, actual: pl.DataFrame, by: str | None) -> None:
    assert "bound" in expected["p_method"].to_list()
    assert_frames_close(expected, actual, ["g"] if by else ["n"])
    columns = ["ecce_r_p", "ecce_mad_p", "p_method"]
    left = expected.filter(pl.col("p_method") == "bound")
    right = actual.filter(pl.col("p_method") == "bound")
    if by:
        left, right = left.sort("g"), right.sort("g")
    assert left.select(columns).equals(right.select(columns))


@pytest.mark.parametrize("by", ["g", None])
def test_dask_soft_label_calibration_is_bounded_as_in_process(client, by):
    import dask.dataframe as dd

    import polars_cumdev.dask as cdask

    df = soft_groups() if by else soft_groups().filter(pl.col("g") == "g00")
    expected = calibration_expected(df, by)
    source = dd.from_pandas(df.to_pandas(use_pyarrow_extension_array=True), npartitions=4)
    actual = cdask.calibration(source, "s", "r", "w", by=by, scheduler=client)
    _check(expected, actual, by)


@pytest.mark.parametrize("by", ["g", None])
def test_spark_soft_label_calibration_is_bounded_as_in_process(spark, by):
    import polars_cumdev.spark as cspark

    df = soft_groups() if by else soft_groups().filter(pl.col("g") == "g00")
    expected = calibration_expected(df, by)
    source = spark.createDataFrame(df.to_arrow()).repartition(4)
    actual = cspark.calibration(source, "s", "r", "w", by=by)
    _check(expected, actual, by)
