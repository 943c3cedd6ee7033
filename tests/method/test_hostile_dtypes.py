"""Issue 25, items 2 and 11: dtypes that float64 or NumPy cannot hold as they are.

Scores that float64 cannot hold exactly are refused (never merged), whatever
their integer or decimal dtype; dtypes NumPy or Numba cannot read (Int128,
UInt128, Decimal, Float16) give the same numbers on the compiled kernel as on
the Polars plan; Object keys are refused clearly on both engines.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev.errors import ColumnTypeError, InvalidValuesError

ENGINES = ("polars", "kernel")
BIG = 2**60


def _wide_scores(dtype: pl.DataType) -> pl.DataFrame:
    n = 40
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {
            "g": ["a", "b"] * (n // 2),
            "s": [BIG + i for i in range(n)],
            "r": rng.random(n),
            "r2": rng.random(n),
            "w": rng.uniform(0.5, 2.0, n),
        }
    )
    return frame.with_columns(pl.col("s").cast(dtype))


WIDE = [pl.Int64, pl.UInt64, pl.Int128, pl.UInt128, pl.Decimal(38, 0), pl.Decimal(38, 2)]


@pytest.mark.parametrize("dtype", WIDE, ids=str)
@pytest.mark.parametrize("engine", ENGINES)
def test_scores_beyond_float64_are_refused_by_screen_and_curve(dtype, engine):
    df = _wide_scores(dtype)
    with pytest.raises(InvalidValuesError, match="'s'"):
        df.cumdev.screen("g", "s", "r", "w", engine=engine)
    with pytest.raises(InvalidValuesError, match="'s'"):
        df.cumdev.curve(pl.col("g") == "a", "s", "r", "w", engine=engine)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", WIDE, ids=str)
def test_scores_beyond_float64_are_refused_by_paired_and_compare(dtype):
    df = _wide_scores(dtype)
    with pytest.raises(InvalidValuesError, match="'s'"):
        df.cumdev.paired("s", "r", "r2", "w", by="g")
    with pytest.raises(InvalidValuesError, match="'s'"):
        df.cumdev.compare(pl.col("g") == "a", pl.col("g") == "b", "s", "r", "w")


@pytest.mark.parametrize("dtype", [pl.UInt128, pl.Decimal(38, 0), pl.Decimal(20, 3)], ids=str)
def test_exact_wide_scores_are_kept(dtype):
    """Values float64 holds exactly pass, with every distinct score kept."""
    df = _wide_scores(pl.Int64).with_columns((pl.col("s") - BIG).cast(dtype))
    for engine in ENGINES:
        out = df.cumdev.screen("g", "s", "r", "w", engine=engine).sort("g")
        assert out.get_column("n_scores").to_list() == [20, 20]


def _small() -> pl.DataFrame:
    rng = np.random.default_rng(3)
    n = 60
    return pl.DataFrame(
        {
            "g": rng.integers(1, 4, n),
            "s": rng.integers(0, 30, n),
            "r": rng.integers(0, 2, n),
            "w": rng.integers(8, 33, n) / 16.0,  # exact in 4 decimals
        }
    )


CASTS = {
    "score Int128": ("s", pl.Int128),
    "score UInt128": ("s", pl.UInt128),
    "score Float16": ("s", pl.Float16),
    "score Decimal": ("s", pl.Decimal(10, 2)),
    "response Int128": ("r", pl.Int128),
    "response UInt128": ("r", pl.UInt128),
    "response Decimal": ("r", pl.Decimal(10, 3)),
    "weight Decimal": ("w", pl.Decimal(12, 4)),
    "key Int128": ("g", pl.Int128),
    "key UInt128": ("g", pl.UInt128),
    "key Decimal": ("g", pl.Decimal(10, 3)),
}


def _same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.columns == b.columns and a.height == b.height
    for name in a.columns:
        x, y = a.get_column(name), b.get_column(name)
        if x.dtype.is_float():
            np.testing.assert_allclose(
                x.to_numpy().astype(float), y.to_numpy().astype(float), rtol=1e-12, atol=1e-15
            )
        else:
            assert x.to_list() == y.to_list(), name


@pytest.mark.parametrize("case", list(CASTS))
@pytest.mark.slow
def test_kernel_reads_every_numeric_dtype_as_the_plan_does(case):
    column, dtype = CASTS[case]
    df = _small().with_columns(pl.col(column).cast(dtype))
    plan = df.cumdev.screen("g", "s", "r", "w", engine="polars").sort("g")
    compiled = df.cumdev.screen("g", "s", "r", "w", engine="kernel").sort("g")
    _same(plan, compiled)
    # ... and as the plain Float64 frame does (the casts lose nothing here).
    plain = _small().cumdev.screen("g", "s", "r", "w", engine="polars").sort("g")
    _same(plain.drop("g"), plan.drop("g"))
    calibrated = df.with_columns((pl.col("s").cast(pl.Float64) / 30.0).alias("p"))
    one = calibrated.cumdev.calibration("p", "r", "w", by="g", engine="polars").sort("g")
    two = calibrated.cumdev.calibration("p", "r", "w", by="g", engine="kernel").sort("g")
    _same(one, two)


@pytest.mark.parametrize("engine", ENGINES)
def test_object_keys_are_refused(engine):
    df = _small().with_columns(pl.col("g").map_elements(lambda x: object(), return_dtype=pl.Object))
    with pytest.raises(ColumnTypeError, match=r"'g'.*Object"):
        df.cumdev.screen("g", "s", "r", "w", engine=engine)
    with pytest.raises(ColumnTypeError, match=r"'g'.*Object"):
        df.with_columns(p=pl.col("s") / 30.0).cumdev.calibration(
            "p", "r", "w", by="g", engine=engine
        )
    with pytest.raises(ColumnTypeError, match=r"'g'.*Object"):
        df.cumdev.paired("s", "r", "r", "w", by="g")
