"""Cases shared by the Spark and Dask tests: data, bad inputs, and comparisons with in-process.

Each engine test module turns a Polars frame into its engine's frame and
calls its ``screen``/``calibration``; the expected results and errors are
those of the in-process functions on the same Polars frame.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from engine_cases import assert_same, make_data, planted, rare_groups

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev import CumdevError
from polars_cumdev.calibration import calibration
from polars_cumdev.subpopulation import screen

__all__ = [
    "BAD_CASES",
    "DATASETS",
    "assert_same",
    "bad_frame",
    "calibration_expected",
    "expected_error",
    "make_data",
    "null_keys",
    "planted",
    "rare_groups",
    "screen_expected",
]

# (seed, response, weighted): ties, weights, continuous responses, groups
# confined to one range and a single-score group (see test_partitioned.make_data).
DATASETS = [(11, "binary", True), (13, "continuous", True), (12, "binary", False)]
RANGES = [1, 2, 7, 64]


def screen_expected(
    df: pl.DataFrame,
    weight: str | None = "w",
    variance: str = "auto",
    level: float = 0.05,
    by: str | list[str] = "g",
):
    # The range and cluster engines simulate the same groups as in-process (p_method).
    return screen(df, by, "s", "r", weight, variance=variance, level=level)


def calibration_expected(df: pl.DataFrame, by: str | list[str] | None):
    """The in-process calibration, finite-sample p-values included (the engines simulate
    the same groups: polars_cumdev.engines.cluster.finite)."""
    return calibration(df, "s", "r", "w", by=by)


def null_keys(seed: int = 5) -> pl.DataFrame:
    """make_data with a null group key on a tenth of the rows."""
    df = make_data(seed, rows=600)
    hit = pl.int_range(pl.len()) % 10 == 3
    return df.with_columns(pl.when(hit).then(None).otherwise(pl.col("g")).alias("g"))


def _plant(df: pl.DataFrame, column: str, value, rows) -> pl.DataFrame:
    hit = pl.int_range(pl.len()).is_in(list(rows))
    dtype = df.schema[column]
    new = pl.when(hit).then(pl.lit(value, dtype=dtype)).otherwise(pl.col(column))
    return df.with_columns(new.alias(column))


# name -> (column, planted value, rows); row 450 lies in the last of four partitions.
BAD_CASES = {
    "nan score in one partition": ("s", float("nan"), [450]),
    "null score": ("s", None, [3, 350]),
    "infinite response": ("r", float("inf"), [10]),
    "zero weight": ("w", 0.0, [7, 8]),
    "null weight": ("w", None, [100]),
    "weights too spread": ("w", 1e-200, [20, 470]),
    "nan score and zero weight": None,
    "empty frame": None,
}


def bad_frame(name: str) -> pl.DataFrame:
    """make_data(31, 480 rows) with the bad values of ``name`` planted (float response)."""
    df = make_data(31, rows=480).with_columns(pl.col("r").cast(pl.Float64))
    if name == "empty frame":
        return df.clear()
    if name == "nan score and zero weight":
        return _plant(_plant(df, "s", float("nan"), [5]), "w", 0.0, [300])
    column, value, rows = BAD_CASES[name]
    return _plant(df, column, value, rows)


def expected_error(call) -> tuple[type, str]:
    """The class and message of the error ``call()`` raises."""
    with pytest.raises(CumdevError) as info:
        call()
    return type(info.value), str(info.value)


def assert_frames_close(expected: pl.DataFrame, actual: pl.DataFrame, by: list[str]) -> None:
    """Same columns and rows; floats to 1e-12 relative (calibration, location included)."""
    assert actual.columns == expected.columns
    left, right = expected.sort(by, nulls_last=True), actual.sort(by, nulls_last=True)
    for column in left.columns:
        x, y = left[column], right[column]
        if x.dtype.is_float():
            a, b = x.to_numpy(), y.to_numpy()
            assert np.array_equal(np.isnan(a), np.isnan(b)), column
            ok = np.isnan(a) | (np.abs(a - b) <= 1e-12 * np.abs(a) + 1e-15)
            assert ok.all(), column
        else:
            assert x.to_list() == y.to_list(), column
