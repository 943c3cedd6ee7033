"""Calibration by score ranges equals the one-pass calibration.

:func:`polars_cumdev.partitioned.calibration_partitioned` and
:func:`polars_cumdev.partitioned.calibration_parquet` must return the table of
``polars_cumdev.calibration.calibration(..., by=...)``: the same columns,
rows, order, notes, p_method (the same groups simulated, with the same
draws), located stretches, and the statistics to a relative error of 1e-12
(with an absolute floor for C and its z, as for the partitioned screen), for
1, 2, 7 and 16 score ranges; ties straddling cut points, weights, soft
labels, no grouping; the same bits whatever the row order.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev.calibration import calibration
from polars_cumdev.errors import CumdevError
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.partitioned import calibration_parquet, calibration_partitioned

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


@pytest.mark.parametrize("ranges", [1, 2, 7, 16])
@pytest.mark.parametrize(("seed", "soft", "weighted"), [(1, False, True), (2, True, False)])
def test_ranges_match_calibration(ranges, seed, soft, weighted):
    df = calibration_data(seed, soft=soft)
    weight = "w" if weighted else None
    expected = calibration(df, "s", "r", weight, by="g")
    actual = calibration_partitioned(df, "s", "r", weight, by="g", ranges=ranges)
    assert_same_table(expected, actual)


def test_the_data_cover_the_hard_cases():
    """Simulated p-values, located stretches and not-significant groups all occur."""
    table = calibration(calibration_data(1), "s", "r", "w", by="g")
    assert "simulated" in table["p_method"].to_list()
    located = table["share"].is_not_null().sum()
    assert 0 < located < table.height


@pytest.mark.parametrize("ranges", [1, 7])
def test_without_groups(ranges):
    df = calibration_data(3, soft=True)
    expected = calibration(df, "s", "r", "w")
    actual = calibration_partitioned(df, "s", "r", "w", ranges=ranges)
    assert_same_table(expected, actual)


def test_cuts_on_tied_scores_and_empty_ranges():
    """Cut points on grid scores held by many rows (a tie stays in one range), and
    cuts with no score between them (empty ranges)."""
    df = calibration_data(4)
    cuts = [0.0, 0.25, 0.375, 0.3750001, 0.375002, 0.5, 17 / 64, 0.99]
    expected = calibration(df, "s", "r", "w", by="g")
    actual = calibration_partitioned(df, "s", "r", "w", by="g", ranges=cuts)
    assert_same_table(expected, actual)


def test_row_order_gives_the_same_bits():
    df = calibration_data(5)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=9)
    one = calibration_partitioned(df, "s", "r", "w", by="g", ranges=7)
    two = calibration_partitioned(shuffled, "s", "r", "w", by="g", ranges=7)
    assert one.equals(two)


def test_lazy_frame_and_two_keys():
    df = calibration_data(6).with_columns((pl.col("w") > 1.5).alias("heavy"))
    expected = calibration(df, "s", "r", by=["g", "heavy"])
    actual = calibration_partitioned(df.lazy(), "s", "r", by=["g", "heavy"], ranges=5)
    assert_same_table(expected, actual)


@pytest.mark.parametrize("column", ["s", "r", "w", "g"])
def test_nulls_refused_as_in_process(column):
    df = calibration_data(7, rows=400)
    df = df.with_columns(
        pl.when(pl.int_range(pl.len()) == 17).then(None).otherwise(pl.col(column)).alias(column)
    )
    try:
        expected = calibration(df, "s", "r", "w", by="g")
    except CumdevError as error:
        with pytest.raises(type(error)) as caught:
            calibration_partitioned(df, "s", "r", "w", by="g", ranges=3)
        assert str(caught.value) == str(error)
    else:  # (a null key is a group of its own)
        assert_same_table(expected, calibration_partitioned(df, "s", "r", "w", by="g", ranges=3))


def test_parquet_ranges(tmp_path):
    df = calibration_data(8)
    for i, part in enumerate(df.iter_slices(1000)):
        part.write_parquet(tmp_path / f"part{i}.parquet", row_group_size=300)
    expected = calibration(df, "s", "r", "w", by="g")
    actual = calibration_parquet(str(tmp_path / "*.parquet"), "s", "r", "w", by="g", ranges=7)
    assert_same_table(expected, actual)
    assert actual.equals(calibration_partitioned(df, "s", "r", "w", by="g", ranges=7))
