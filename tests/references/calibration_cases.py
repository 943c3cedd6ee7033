"""Predictions and a comparison shared by the tests of calibration by score ranges.

``calibration_data`` draws seeded predictions with ties, skewed groups, planted
miscalibration and a small group whose p-value is simulated; ``assert_same_table``
compares two calibration tables column by column.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_cumdev.method.location import LOCATION_COLUMNS

RTOL = 1e-12
RTOL_LOCATION = 1e-9
ATOL_C = 1e-14
EXACT = ("n", "n_scores", "significant", "note", "p_method")
OF_C = ("ecce_r", "ecce_mad", "delta")


def calibration_data(seed: int, rows: int = 3000, *, soft: bool = False) -> pl.DataFrame:
    """Seeded predictions with ties on a grid of 1/64, six skewed groups.

    ``g1`` is too high above 0.5 and ``g2`` too low below 0.4 (stretches to
    locate); ``g5`` has few rows, scores near 0.02 and too many events (its
    Kuiper p-value is simulated, finite-sample); ``g6`` has a single score.
    """
    rng = np.random.default_rng(seed)
    g = rng.choice(7, size=rows, p=[0.39, 0.25, 0.15, 0.1, 0.07, 0.03, 0.01])
    g[:7] = np.arange(7)
    s = rng.random(rows)
    s = np.where(g == 5, 0.01 + 0.03 * rng.random(rows), s)
    s = np.where(g == 6, 0.375, s)
    grid = rng.random(rows) < 0.5
    s = np.where(grid, np.round(s * 64.0) / 64.0, np.round(s, 5))
    p = s + 0.15 * (g == 1) * (s > 0.5) - 0.1 * (g == 2) * (s < 0.4) + 0.2 * (g == 5)
    p = np.clip(p, 0.0, 1.0)
    if soft:
        r = np.round(0.5 * rng.random(rows) + 0.5 * p, 3)
    else:
        r = (rng.random(rows) < p).astype(np.int64)
    w = np.round(rng.uniform(0.2, 3.0, rows), 2)
    return pl.DataFrame({"g": [f"g{i}" for i in g], "s": s, "r": r, "w": w})


def assert_same_table(expected: pl.DataFrame, actual: pl.DataFrame) -> None:
    """Same columns, rows and order; labels exact; floats to RTOL (see the module)."""
    assert actual.columns == expected.columns
    assert actual.height == expected.height
    keys = [c for c in expected.columns if c not in (*EXACT, "weight") and not c.startswith("ecce")]
    keys = [c for c in keys if c not in ("delta", "sigma", *LOCATION_COLUMNS)]
    for column in (*keys, *EXACT):
        if column in expected.columns:
            assert actual[column].to_list() == expected[column].to_list(), column
    sigma = expected["sigma"].cast(pl.Float64).to_numpy()
    for column in expected.columns:
        if column in (*keys, *EXACT) or not expected[column].dtype.is_float():
            continue
        x = expected[column].to_numpy()
        y = actual[column].to_numpy()
        assert np.array_equal(np.isnan(x), np.isnan(y)), column
        if column in LOCATION_COLUMNS:
            atol, rtol = 0.0, RTOL_LOCATION
        elif column in OF_C:
            atol, rtol = ATOL_C, RTOL
        elif column.endswith("_z"):
            atol, rtol = ATOL_C / np.where(sigma > 0, sigma, 1.0), RTOL
        else:
            atol, rtol = 1e-15, RTOL
        bad = (np.abs(y - x) > rtol * np.abs(x) + atol) & ~np.isnan(x)
        assert not bad.any(), f"{column}: expected {x[bad]}, got {y[bad]}"
