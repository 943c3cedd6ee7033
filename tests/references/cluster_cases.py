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
    "assert_drift_same",
    "assert_same",
    "assert_scores_same",
    "bad_frame",
    "calibration_expected",
    "drift_data",
    "drift_expected",
    "expected_error",
    "fix_case",
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


def drift_data(seed: int = 0, weeks: int = 8, per_week: int = 300) -> pl.DataFrame:
    """weekly_predictions (drift planted in week 5) with a group ``g`` and float weights ``w``."""
    from polars_cumdev.datasets import weekly_predictions

    df = weekly_predictions(
        weeks=weeks, per_week=per_week, drift_week=min(5, weeks - 1), shift=0.6, seed=seed
    )
    rng = np.random.default_rng(seed)
    return df.with_columns(
        g=pl.Series(rng.choice(["a", "b"], df.height)),
        w=pl.Series(rng.lognormal(0.0, 0.5, df.height)),
    ).drop("expected", "week")


def drift_expected(df: pl.DataFrame, **options) -> pl.DataFrame:
    """The in-process drift, its default (finite-sample) p-values, which the engines' give too."""
    from polars_cumdev.drift import calibration_drift

    lazy = calibration_drift(df.lazy(), "score", "response", "w", time="ts", **options)
    return lazy.collect()


def assert_drift_same(expected: pl.DataFrame, actual: pl.DataFrame, keys: list[str]) -> None:
    """Same rows and decisions; statistics to 1e-12 relative (a Spark time column in its zone)."""
    if actual.schema["ts"] != expected.schema["ts"]:  # Spark's TimestampType: the session's zone
        actual = actual.with_columns(pl.col("ts").dt.replace_time_zone(None))
    assert actual["ts"].to_list() == expected["ts"].to_list()  # the in-process order
    assert_frames_close(expected, actual, keys)
    assert actual["flagged"].to_list() == expected["flagged"].to_list()


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


def _scored(n: int, seed: int) -> pl.DataFrame:
    """Shrunk log-odds, shifted in the segment a=2 and for x > 1 (a fix has work to do)."""
    rng = np.random.default_rng(seed)
    a, x = rng.integers(0, 4, n), rng.normal(size=n)
    t = 1.2 * rng.normal(size=n) + 0.3 * x
    truth = t + 0.8 * (a == 2) + 0.5 * (x > 1)
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.float64)
    p = 1 / (1 + np.exp(-0.8 * t))
    return pl.DataFrame(
        {"id": np.arange(n), "a": a, "x": x, "p": p, "y": y, "note": [f"row {i}" for i in range(n)]}
    )


def fix_case(rows: int = 3000):
    """A fitted Recalibration (global map and segment shifts) and fresh rows to score."""
    import polars_cumdev as pc
    from polars_cumdev.recalibration import recalibrate

    family = pc.segments(categorical=["a"], numerical=["x"], depth=1, levels=4)
    fix = recalibrate(_scored(4000, 1), "p", "y", segments=family)
    assert fix.monotone is not None or fix.corrections  # not the identity
    return fix, _scored(rows, 2)


def assert_scores_same(expected: pl.DataFrame, actual: pl.DataFrame) -> None:
    """Same columns and rows (by ``id``); the recalibrated scores the same bits."""
    actual = actual.sort("id")
    assert actual.columns == expected.columns
    assert actual.height == expected.height
    for column in expected.columns:
        if expected[column].dtype == pl.Float64:
            bits = expected[column].to_numpy().view(np.int64)
            assert np.array_equal(actual[column].to_numpy().view(np.int64), bits), column
        else:
            assert actual[column].to_list() == expected[column].to_list(), column
