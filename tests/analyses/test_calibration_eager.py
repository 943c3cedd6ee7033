"""Calibration of a frame in memory runs the kernel at once: the same numbers as its plan.

For a DataFrame on the compiled engine, ``calibration`` reads the rows and
runs the kernel's statistics when called (``compiled.eager``), instead of
building a plan around a kernel node; a LazyFrame keeps the node. Both hand
the same checked, ordered rows to the same function, so every column must
agree bit for bit (held here to 1e-12 relative at most, as the issue asks,
and checked exactly), with ties, weights, groups, and finite-sample p-values.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_cumdev
from polars_cumdev.method import compiled


def _frame(seed: int, n: int, ties: bool) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if ties:
        p = np.round(p, 1)
    truth = np.clip(p + 0.05 * np.sin(5 * p), 0.0, 1.0)
    y = (rng.uniform(size=n) < truth).astype(np.int64)
    w = rng.lognormal(0.0, 0.6, size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    return pl.DataFrame({"p": p, "y": y, "w": w, "g": g})


@pytest.fixture
def no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building a kernel node fail: what passes did not build one."""

    def refuse(*args: object, **kwargs: object) -> pl.LazyFrame:
        raise AssertionError("a kernel node was built for a frame in memory")

    monkeypatch.setattr(compiled, "node", refuse)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("by", [None, "g"])
def test_in_memory_equals_the_plan(seed: int, ties: bool, weight: str | None, by: str | None):
    df = _frame(seed, 2000, ties)
    lazy = polars_cumdev.calibration(df.lazy(), "p", "y", weight, by=by, engine="kernel")
    eager = polars_cumdev.calibration(df, "p", "y", weight, by=by, engine="kernel")
    planned = lazy.collect()
    for name, dtype in planned.schema.items():
        if dtype == pl.Float64:
            a, b = planned[name].to_numpy(), eager[name].to_numpy()
            assert np.array_equal(np.isnan(a), np.isnan(b)), name
            ok = ~np.isnan(a)
            np.testing.assert_allclose(b[ok], a[ok], rtol=1e-12, atol=0.0, err_msg=name)
    assert_frame_equal(eager, planned, check_exact=True)


def test_in_memory_builds_no_node(no_node: None) -> None:
    df = _frame(2, 3000, True)
    out = polars_cumdev.calibration(df, "p", "y", "w", engine="kernel")
    assert out.height == 1
    with pytest.raises(AssertionError, match="kernel node"):
        polars_cumdev.calibration(df.lazy(), "p", "y", engine="kernel").collect()


def test_finite_sample_pvalues_in_memory() -> None:
    """Rare events: the asymptotic tail fails, both paths simulate the same p-values."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.0, 0.02, size=300)
    y = (rng.uniform(size=300) < 5 * p).astype(np.float64)
    df = pl.DataFrame({"p": p, "y": y})
    eager = polars_cumdev.calibration(df, "p", "y", engine="kernel")
    planned = polars_cumdev.calibration(df.lazy(), "p", "y", engine="kernel").collect()
    assert eager["p_method"].to_list() == ["simulated"]
    assert_frame_equal(eager, planned, check_exact=True)


def test_bad_values_named_in_memory() -> None:
    df = _frame(4, 200, False).with_columns(
        pl.when(pl.int_range(pl.len()) < 2).then(None).otherwise(pl.col("p")).alias("p")
    )
    with pytest.raises(polars_cumdev.InvalidValuesError, match="p"):
        polars_cumdev.calibration(df, "p", "y", engine="kernel")
