"""Data and comparisons for multicalibration on the cluster engines (issue 39, item 1)."""

from __future__ import annotations

import numpy as np
import polars as pl

import polars_cumdev as pc
from polars_cumdev.multicalibration import multicalibration


def mixed_features(seed: int, rows: int = 3000) -> pl.DataFrame:
    """Weighted rows with tied scores, a string feature with nulls, a small integer one, a
    continuous one with NaN and nulls, and a planted cell ``a = 'x' & b = 1``."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0, 1, rows).round(3)
    a = rng.choice(["x", "y", "z", None], rows)
    b = rng.integers(0, 4, rows)
    x = rng.normal(size=rows)
    x[rng.random(rows) < 0.03] = np.nan
    p = np.clip(s + 0.25 * (a == "x") * (b == 1), 0, 1)
    y = (rng.random(rows) < p).astype(float)
    w = rng.uniform(0.5, 2.0, rows)
    a_column = pl.Series("a", a.tolist(), dtype=pl.String)
    frame = pl.DataFrame({"s": s, "y": y, "w": w, "a": a_column, "b": b, "x": x})
    missing = pl.int_range(pl.len()) % 41 == 5
    return frame.with_columns(pl.when(missing).then(None).otherwise(pl.col("x")).alias("x"))


#: A depth-2 family over a string, an integer and a continuous feature.
MIXED = pc.segments(categorical=["a", "b"], numerical=["x"], depth=2, min_rows=30)


def echoing_cell(seed: int = 1, rows: int = 6000) -> pl.DataFrame:
    """tests/analyses/test_multicalibration_echoes.py's planted cell and its siblings."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.95, rows)
    a, b = rng.integers(0, 6, rows), rng.integers(0, 6, rows)
    c = (s + rng.normal(0, 0.1, rows) < 0.6).astype(int)
    p = np.clip(s + 0.4 * ((a == 0) & (b == 0) & (s < 0.6)), 0, 1)
    y = (rng.random(rows) < p).astype(float)
    return pl.DataFrame(
        {"s": s, "y": y, "a": a.astype(str), "b": b.astype(str), "c": c.astype(str)}
    )


#: The echo test's family.
ECHOING = pc.segments(["a", "b", "c"], depth=2, levels=6, min_rows=10)


def soft_labels(seed: int, rows: int = 3000) -> pl.DataFrame:
    """Soft labels (Beta, mean the score, or 0.2 more in ``a = '3'``) on scores near 0, log-normal
    weights, two string features: small segments with few effective events, so candidates get
    the conservative bound (``p_method`` "bound", docs/method.md "Soft labels")."""
    rng = np.random.default_rng(seed)
    s = rng.beta(1.0, 12.0, rows)
    a, b = rng.integers(0, 12, rows).astype(str), rng.integers(0, 3, rows).astype(str)
    m = np.clip(s + 0.2 * (a == "3"), 1e-6, 1 - 1e-6)
    y = rng.beta(0.5 * m, 0.5 * (1 - m))
    return pl.DataFrame({"s": s, "y": y, "w": rng.lognormal(0.0, 0.5, rows), "a": a, "b": b})


#: The soft labels' family: 12 x 3 levels, depth 2.
SOFT = pc.segments(categorical=["a", "b"], depth=2, levels=12, min_rows=10)


def expected(frame: pl.DataFrame, family, weight: str | None = "w", **options) -> pl.DataFrame:
    return multicalibration(frame, "s", "y", weight, segments=family, **options)


def assert_family_same(expected: pl.DataFrame, actual: pl.DataFrame) -> None:
    """Same columns, rows and order; text, integers and decisions equal; floats to 1e-12
    relative (nulls at the same places)."""
    assert actual.columns == expected.columns
    assert actual.height == expected.height
    assert actual["condition"].to_list() == expected["condition"].to_list()
    for column in expected.columns:
        x, y = expected[column], actual[column]
        assert x.null_count() == y.null_count(), column
        if x.dtype == pl.Float64:
            a, b = x.to_numpy(), y.to_numpy()
            both = ~np.isnan(a)
            assert np.array_equal(np.isnan(a), np.isnan(b)), column
            scale = np.maximum(np.abs(a[both]), 1.0)
            assert np.all(np.abs(a[both] - b[both]) <= 1e-12 * scale), column
        else:
            assert x.to_list() == y.to_list(), column
