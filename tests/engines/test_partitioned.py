"""The range-partitioned screen equals the one-pass screen.

:func:`polars_cumdev.engines.partitioned.screen_partitioned` and
:func:`polars_cumdev.engines.partitioned.screen_parquet` must return what
``polars_cumdev.subpopulation.screen(...).collect()`` returns, to a relative
error of 1e-12, for 1 to 64 score ranges: random data with exact ties,
weights, groups of very different sizes, groups confined to a narrow score
window (so they live in a single range and most ranges hold none of their
points), empty ranges and cut points placed exactly on scores and on
midpoints.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from engine_cases import assert_same, make_data, rare_groups
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from polars_cumdev.engines.partitioned import (
    RANGE,
    cell_summaries,
    cut_points,
    merge_cell_summaries,
    screen_parquet,
    screen_partitioned,
)
from polars_cumdev.errors import InvalidParameterError, InvalidValuesError
from polars_cumdev.method.prepare import prepare
from polars_cumdev.subpopulation import screen as _screen


def screen(*args, **kwargs):
    """The in-process screen, finite-sample p-values included (the range-partitioned
    screen simulates the same groups: polars_cumdev.engines.partitioned.finite)."""
    return _screen(*args, **kwargs)


def quantile_cuts(df: pl.DataFrame, ranges: int) -> list[float]:
    levels = np.arange(1, ranges) / ranges
    return np.unique(np.quantile(df["s"].to_numpy(), levels, method="lower")).tolist()


def cells_per_group(df: pl.DataFrame, cuts: list[float]) -> dict[str, int]:
    """Number of ranges holding at least one row of each group."""
    index = np.searchsorted(np.asarray(cuts), df["s"].to_numpy(), side="left")
    frame = df.select("g").with_columns(pl.Series("range", index))
    counts = frame.group_by("g").agg(pl.col("range").n_unique())
    return dict(counts.iter_rows())


DATASETS = [
    # (seed, response, weighted)
    (11, "binary", True),
    (12, "binary", False),
    (13, "continuous", True),
    (14, "continuous", False),
]
RANGE_COUNTS = [1, 2, 3, 5, 8, 16, 33, 64]


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "response", "weighted"), DATASETS)
@pytest.mark.parametrize("variance", ["bernoulli", "empirical"])
def test_quantile_ranges_match_screen(seed, response, weighted, variance):
    if variance == "bernoulli" and response != "binary":
        variance = "auto"  # resolves to the empirical form; Bernoulli needs 0/1 data
    df = make_data(seed, response=response, weighted=weighted)
    weight = "w" if weighted else None
    expected = screen(df, "g", "s", "r", weight, variance=variance)
    for ranges in RANGE_COUNTS:
        actual = screen_partitioned(df, "g", "s", "r", weight, ranges=ranges, variance=variance)
        assert_same(expected, actual, ["g"])


def test_grid_covers_the_hard_cases():
    """The data above do have single-range groups and ranges missing some groups."""
    df = make_data(11)
    cuts = quantile_cuts(df, 16)
    spread = cells_per_group(df, cuts)
    assert min(spread.values()) == 1  # a group living in a single range
    assert max(spread.values()) == len(cuts) + 1  # a group in every range
    assert any(v < len(cuts) + 1 for v in spread.values())  # ranges without some group


@pytest.mark.parametrize("variance", ["bernoulli", "empirical", "auto"])
@pytest.mark.slow
def test_cut_points_on_scores_midpoints_and_outside(variance):
    """Cuts equal to scores, to midpoints of consecutive scores, and beyond the data."""
    df = make_data(21, rows=900)
    grid = np.arange(65) / 64.0
    cuts = [
        -5.0,  # an empty first range
        *grid[8:56:6].tolist(),  # exactly on (tied) scores
        *((grid[9:50:8] + grid[10:51:8]) / 2.0).tolist(),  # exactly on midpoints
        2.0,  # an empty last range
    ]
    expected = screen(df, "g", "s", "r", "w", variance=variance)
    actual = screen_partitioned(df, "g", "s", "r", "w", ranges=cuts, variance=variance)
    assert_same(expected, actual, ["g"])


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**31 - 1),
    rows=st.integers(2, 400),
    groups=st.integers(1, 9),
    weighted=st.booleans(),
    response=st.sampled_from(["binary", "continuous"]),
    variance=st.sampled_from(["auto", "bernoulli", "empirical"]),
    cuts=st.lists(st.floats(-0.1, 1.1, allow_nan=False), max_size=63),
)
def test_random_cuts_match_screen(seed, rows, groups, weighted, response, variance, cuts):
    if variance == "bernoulli" and response != "binary":
        variance = "empirical"
    df = make_data(seed, rows=rows, groups=min(groups, rows), weighted=weighted, response=response)
    weight = "w" if weighted else None
    expected = screen(df, "g", "s", "r", weight, variance=variance)
    actual = screen_partitioned(df, "g", "s", "r", weight, ranges=cuts, variance=variance)
    assert_same(expected, actual, ["g"])


@pytest.mark.slow
def test_several_keys_with_nulls():
    df = make_data(31, rows=1000).with_columns(
        h=pl.when(pl.col("r") == 1).then(None).otherwise(pl.col("s") > 0.5)
    )
    expected = screen(df, ["g", "h"], "s", "r", "w")
    for ranges in (1, 4, 64):
        actual = screen_partitioned(df, ["g", "h"], "s", "r", "w", ranges=ranges)
        assert_same(expected, actual, ["g", "h"])


@pytest.mark.slow
def test_pure_bins_give_sigma_zero_in_every_range_split(pure_bins):
    # Every bin is pure, so sigma is exactly 0 and the rows carry notes,
    # however the score axis is cut (fractional weights, so running totals
    # are inexact and only the exact counts can tell).
    df = pure_bins(44, levels=60)
    expected = screen(df, "g", "s", "r", "w")
    assert expected["sigma"].to_list() == [0.0, 0.0, 0.0]
    for ranges in (1, 3, 7, 64):
        actual = screen_partitioned(df, "g", "s", "r", "w", ranges=ranges)
        assert actual["sigma"].to_list() == [0.0, 0.0, 0.0], ranges
        assert_same(expected, actual, ["g"])


@pytest.mark.slow
def test_row_order_does_not_matter():
    df = make_data(41)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    expected = screen(df, "g", "s", "r", "w")
    assert_same(expected, screen_partitioned(shuffled, "g", "s", "r", "w", ranges=9), ["g"])


@pytest.mark.slow
def test_lazy_input_and_streaming_engine():
    df = make_data(51)
    expected = screen(df, "g", "s", "r", "w")
    actual = screen_partitioned(df.lazy(), "g", "s", "r", "w", ranges=6, engine="streaming")
    assert_same(expected, actual, ["g"])


@pytest.mark.slow
def test_parquet_adapter(tmp_path):
    df = make_data(61, rows=3000, groups=12)
    for part, start in enumerate(range(0, df.height, 1000)):
        df.slice(start, 1000).write_parquet(tmp_path / f"part-{part}.parquet", row_group_size=250)
    expected = screen(df, "g", "s", "r", "w")
    for ranges in (None, 1, 7, [0.25, 0.5, 0.75]):
        actual = screen_parquet(str(tmp_path / "*.parquet"), "g", "s", "r", "w", ranges=ranges)
        assert_same(expected, actual, ["g"])


def test_cell_summaries_merge_over_batches():
    df = make_data(71)
    frame = prepare(df, score="s", response="r", weight="w", by="g").frame
    cuts = quantile_cuts(df, 5)
    whole = cell_summaries(frame, ["g"], cuts).collect()
    parts = [cell_summaries(frame.slice(i, 300), ["g"], cuts) for i in range(0, df.height, 300)]
    merged = merge_cell_summaries(parts, ["g"]).collect()
    order = [RANGE, "g"]
    left = whole.sort(order)
    right = merged.select(whole.columns).sort(order)
    assert left.select(pl.exclude(pl.Float64)).equals(right.select(pl.exclude(pl.Float64)))
    for column in [c for c, t in whole.schema.items() if t == pl.Float64]:
        assert_allclose(right[column].to_numpy(), left[column].to_numpy(), rtol=1e-14)


def test_cut_points_from_counts():
    df = make_data(81, rows=2000)
    frame = prepare(df, score="s", response="r", by="g").frame
    assert cut_points(frame, 1) == []
    cuts = cut_points(frame, 8)
    assert cuts == sorted(set(cuts))
    assert 1 <= len(cuts) <= 7
    assert cut_points(frame, [0.5, 0.2, 0.5]) == [0.2, 0.5]


@pytest.mark.parametrize("ranges", [0, -3, [0.1, float("nan")], "8", 2.5])
def test_bad_ranges_are_rejected(ranges):
    df = make_data(91, rows=50)
    with pytest.raises(InvalidParameterError):
        screen_partitioned(df, "g", "s", "r", "w", ranges=ranges)


def test_bad_values_raise_like_screen():
    df = make_data(92, rows=50).with_columns(
        s=pl.when(pl.int_range(pl.len()) == 3).then(float("nan")).otherwise(pl.col("s"))
    )
    with pytest.raises(InvalidValuesError, match="NaN"):
        screen_partitioned(df, "g", "s", "r", "w", ranges=4)


@pytest.mark.slow
@pytest.mark.parametrize("ranges", [1, 9])
def test_rare_outcome_small_groups_get_the_in_process_finite_sample_pvalues(ranges, tmp_path):
    # A rare outcome in small weighted groups: the in-process screen simulates some
    # groups' p-values; the partitioned screens gather those groups' rows and the
    # population's sums between their midpoints, and give the same p-values and
    # p_method (the draws are seeded by the scores; assert_same compares p_method).
    df = rare_groups(7)
    expected = screen(df, "g", "s", "r", "w")
    simulated = expected.filter(pl.col("p_method") == "simulated")
    assert simulated.height >= 3
    actual = screen_partitioned(df, "g", "s", "r", "w", ranges=ranges)
    assert_same(expected, actual, ["g"])
    mine = actual.filter(pl.col("p_method") == "simulated").sort("g")
    for column in ("kuiper_p", "ks_p"):  # the Monte Carlo p-values exactly
        assert mine[column].to_list() == simulated.sort("g")[column].to_list()
    path = tmp_path / "rare.parquet"
    df.write_parquet(path, row_group_size=1000)
    assert_same(expected, screen_parquet(path, "g", "s", "r", "w", ranges=ranges), ["g"])
