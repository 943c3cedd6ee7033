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

import polars as pl
import pytest
from calibration_cases import assert_same_table, calibration_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polars_cumdev.calibration import calibration
from polars_cumdev.errors import CumdevError
from polars_cumdev.partitioned import calibration_parquet, calibration_partitioned


def test_seven_ranges_match_calibration():
    """The fast subset's case (the grid below is slow: about 5 s in all)."""
    df = calibration_data(1)
    expected = calibration(df, "s", "r", "w", by="g")
    assert_same_table(expected, calibration_partitioned(df, "s", "r", "w", by="g", ranges=7))


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_parquet_ranges(tmp_path):
    df = calibration_data(8)
    for i, part in enumerate(df.iter_slices(1000)):
        part.write_parquet(tmp_path / f"part{i}.parquet", row_group_size=300)
    expected = calibration(df, "s", "r", "w", by="g")
    actual = calibration_parquet(str(tmp_path / "*.parquet"), "s", "r", "w", by="g", ranges=7)
    assert_same_table(expected, actual)
    assert actual.equals(calibration_partitioned(df, "s", "r", "w", by="g", ranges=7))


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    rows=st.integers(7, 600),
    soft=st.booleans(),
    weighted=st.booleans(),
    cuts=st.lists(
        st.one_of(st.floats(-0.1, 1.1, allow_nan=False), st.integers(0, 64).map(lambda k: k / 64)),
        max_size=20,
    ),
)
def test_random_cuts_match_calibration(seed, rows, soft, weighted, cuts):
    """Any cut points (on tied grid scores, between them, outside the scores) give the
    in-process table: groups of a few rows, single points, empty ranges."""
    df = calibration_data(seed, rows=rows, soft=soft)
    weight = "w" if weighted else None
    expected = calibration(df, "s", "r", weight, by="g")
    assert_same_table(expected, calibration_partitioned(df, "s", "r", weight, by="g", ranges=cuts))
