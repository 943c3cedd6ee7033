"""CORP reliability diagram and Brier decomposition against the naive transcription."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import reference_corp as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

import polars_cumdev  # noqa: F401  (registers the namespace)
from polars_cumdev.corp.decomposition import CORP_COLUMNS, CORP_CURVE_COLUMNS, corp
from polars_cumdev.corp.isotonic import _nondecreasing, consistency_band, fit_segments
from polars_cumdev.errors import (
    EmptySubpopulationError,
    InvalidParameterError,
    InvalidValuesError,
)

RTOL = 1e-10
ATOL = 1e-13


def predictions(seed: int, m: int = 900, *, soft: bool = False, weighted: bool = True):
    """Scores on a coarse grid (many ties), miscalibrated outcomes, three groups."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 31, size=m) / 30.0
    truth = np.clip(s + 0.12 * np.sin(7 * s), 0.0, 1.0)
    if soft:
        r = np.clip(truth + rng.normal(0.0, 0.1, size=m), 0.0, 1.0)
    else:
        r = (rng.uniform(size=m) < truth).astype(np.float64)
    w = rng.lognormal(0.0, 0.7, size=m) if weighted else np.ones(m)
    g = rng.choice(["x", "y", "z"], size=m, p=[0.6, 0.3, 0.1])
    return pl.DataFrame({"s": s, "r": r, "w": w, "g": g})


def group_arrays(df: pl.DataFrame, key: str):
    part = df.filter(pl.col("g") == key)
    return part["s"].to_numpy(), part["r"].to_numpy(), part["w"].to_numpy()


# --------------------------------------------------------------------------- decomposition


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("soft", [False, True])
def test_decomposition_matches_the_definitions(seed: int, soft: bool) -> None:
    df = predictions(seed, soft=soft)
    got = df.cumdev.corp("s", "r", "w").row(0, named=True)
    want = ref.decomposition(df["s"], df["r"], df["w"])
    for name in ("brier", "mcb", "dsc", "unc", "base_rate"):
        assert_allclose(got[name], want[name], rtol=RTOL, atol=ATOL, err_msg=name)
    assert got["n"] == df.height
    assert got["n_scores"] == df["s"].n_unique()
    assert_allclose(got["weight"], df["w"].sum(), rtol=1e-13)
    assert got["blocks"] == np.unique(want["fitted"]).size


@pytest.mark.parametrize("soft", [False, True])
def test_decomposition_identity_per_group(soft: bool) -> None:
    df = predictions(3, soft=soft)
    table = df.cumdev.corp("s", "r", "w", by="g")
    gap = table["brier"] - (table["mcb"] - table["dsc"] + table["unc"])
    assert gap.abs().max() < 1e-12
    assert (table["mcb"] >= 0).all() and (table["dsc"] >= 0).all()
    assert (table["dsc"] <= table["unc"] + 1e-15).all()


@settings(
    deadline=None, max_examples=40, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    n=st.integers(1, 80),
    seed=st.integers(0, 2**32 - 1),
    grid=st.sampled_from([2, 5, 16, 1000]),
    binary=st.booleans(),
)
@pytest.mark.slow
def test_identity_and_reference_on_random_frames(
    n: int, seed: int, grid: int, binary: bool
) -> None:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, grid + 1, size=n) / grid
    r = (rng.random(n) < s).astype(float) if binary else rng.integers(0, 9, size=n) / 8
    w = rng.integers(1, 9, size=n) / 4.0
    got = corp(pl.DataFrame({"s": s, "r": r, "w": w}), "s", "r", "w").row(0, named=True)
    want = ref.decomposition(s, r, w)
    assert abs(got["brier"] - (got["mcb"] - got["dsc"] + got["unc"])) < 1e-12
    for name in ("brier", "mcb", "dsc", "unc"):
        assert_allclose(got[name], want[name], rtol=1e-9, atol=1e-13, err_msg=name)


def test_constant_forecast_at_the_base_rate_has_no_miscalibration_or_discrimination() -> None:
    # 1000 rows, 250 successes, every forecast 0.25: the forecast is the base rate.
    r = np.zeros(1000)
    r[::4] = 1.0
    df = pl.DataFrame({"s": np.full(1000, 0.25), "r": r})
    row = df.cumdev.corp("s", "r").row(0, named=True)
    assert row["mcb"] == 0.0 and row["dsc"] == 0.0
    assert row["brier"] == pytest.approx(0.1875, abs=1e-15) and row["unc"] == row["brier"]
    assert row["blocks"] == 1 and row["n_scores"] == 1


def test_constant_forecast_off_the_base_rate_is_all_miscalibration() -> None:
    r = np.zeros(1000)
    r[::4] = 1.0
    row = pl.DataFrame({"s": np.full(1000, 0.5), "r": r}).cumdev.corp("s", "r").row(0, named=True)
    assert row["dsc"] == 0.0
    assert row["mcb"] == pytest.approx((0.5 - 0.25) ** 2, abs=1e-15)


@pytest.mark.slow
def test_calibrated_forecasts_have_small_miscalibration() -> None:
    rng = np.random.default_rng(7)
    s = rng.uniform(size=200_000)
    r = (rng.uniform(size=s.size) < s).astype(float)
    row = pl.DataFrame({"s": s, "r": r}).cumdev.corp("s", "r").row(0, named=True)
    # DSC of the uniform calibrated forecast is Var(S) = 1/12; MCB is only the
    # overfitting of the isotonic regression, of order n^(-2/3).
    assert row["mcb"] < 1e-3
    assert row["dsc"] == pytest.approx(1.0 / 12.0, rel=0.02)
    assert row["unc"] == pytest.approx(0.25, rel=0.01)


def test_recalibrated_forecasts_are_calibrated_and_keep_their_discrimination() -> None:
    df = predictions(4)
    before = df.cumdev.corp("s", "r", "w").row(0, named=True)
    curve = df.cumdev.corp_curve("s", "r", "w", resamples=0)
    recalibrated = df.join(curve.select("score", "fitted"), left_on="s", right_on="score")
    after = recalibrated.cumdev.corp("fitted", "r", "w").row(0, named=True)
    assert abs(after["mcb"]) < 1e-15
    assert after["dsc"] == pytest.approx(before["dsc"], rel=1e-12)


def test_discrimination_depends_only_on_the_ranking() -> None:
    df = predictions(5)
    squared = df.with_columns(pl.col("s") ** 2)
    one, two = (d.cumdev.corp("s", "r", "w").row(0, named=True) for d in (df, squared))
    assert two["dsc"] == pytest.approx(one["dsc"], rel=1e-12)
    assert two["mcb"] != pytest.approx(one["mcb"], rel=1e-3)


# --------------------------------------------------------------------------- the fit


@pytest.mark.parametrize("seed", [0, 1])
def test_fitted_values_match_naive_pav_per_group(seed: int) -> None:
    df = predictions(seed)
    curve = df.cumdev.corp_curve("s", "r", "w", by="g", resamples=0)
    assert curve.columns == ["g", *CORP_CURVE_COLUMNS]
    for key in ("x", "y", "z"):
        s, r, w = group_arrays(df, key)
        scores, weights, responses = ref.merge_ties(s, r, w)
        mine = curve.filter(pl.col("g") == key)
        assert_array_equal(mine["score"].to_numpy(), scores)
        assert_allclose(mine["weight"].to_numpy(), weights, rtol=1e-13)
        assert_allclose(mine["response_mean"].to_numpy(), responses, rtol=1e-13)
        assert_allclose(mine["fitted"].to_numpy(), ref.pav(responses, weights), rtol=1e-12)
        assert (np.diff(mine["fitted"].to_numpy()) >= 0).all()


@pytest.mark.slow
def test_by_agrees_with_each_group_alone() -> None:
    df = predictions(6, soft=True)
    table = df.cumdev.corp("s", "r", "w", by="g")
    curve = df.cumdev.corp_curve("s", "r", "w", by="g", resamples=0)
    assert sorted(table["g"].to_list()) == ["x", "y", "z"]
    assert table["mcb"].to_list() == sorted(table["mcb"].to_list(), reverse=True)  # ranked
    for key in ("x", "y", "z"):
        alone = df.filter(pl.col("g") == key)
        want = alone.cumdev.corp("s", "r", "w").row(0, named=True)
        got = table.filter(pl.col("g") == key).drop("g").row(0, named=True)
        for name in CORP_COLUMNS:
            assert_allclose(got[name], want[name], rtol=1e-13, atol=1e-16, err_msg=name)
        fitted = alone.cumdev.corp_curve("s", "r", "w", resamples=0)["fitted"]
        assert_allclose(curve.filter(pl.col("g") == key)["fitted"], fitted, rtol=1e-14)


def test_results_do_not_depend_on_row_order() -> None:
    df = predictions(8)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    for one, two in (
        (df.cumdev.corp("s", "r", "w", by="g"), shuffled.cumdev.corp("s", "r", "w", by="g")),
        (
            df.cumdev.corp_curve("s", "r", "w", by="g", resamples=30),
            shuffled.cumdev.corp_curve("s", "r", "w", by="g", resamples=30),
        ),
    ):
        assert one.columns == two.columns
        for name in one.columns:
            if one.schema[name].is_float():
                assert_allclose(one[name], two[name], rtol=1e-13, atol=1e-16, err_msg=name)
            else:
                assert one[name].to_list() == two[name].to_list()


def test_lazy_in_lazy_out_and_streaming() -> None:
    lazy = predictions(9).lazy()
    for result in (
        lazy.cumdev.corp("s", "r", "w", by="g"),
        lazy.cumdev.corp_curve("s", "r", "w", by="g", resamples=20),
    ):
        assert isinstance(result, pl.LazyFrame)
        streamed = result.collect(engine="streaming")
        in_memory = result.collect(engine="in-memory")
        assert streamed.schema == in_memory.schema
        for name in streamed.columns:
            # The tie sums of merge_ties may be added in another order by each engine.
            if streamed.schema[name].is_float():
                assert_allclose(streamed[name], in_memory[name], rtol=1e-13, err_msg=name)
            else:
                assert streamed[name].to_list() == in_memory[name].to_list(), name


def test_unweighted_equals_unit_weights() -> None:
    df = predictions(10, weighted=False)
    one = df.cumdev.corp("s", "r", by="g")
    two = df.cumdev.corp("s", "r", "w", by="g")
    assert one.equals(two)


# ---------------------------------------------------------------- one call for all groups


def test_nondecreasing_repairs_rounding_dips_within_segments_only() -> None:
    values = np.array([0.2, 0.3, 0.3 - 1e-17, 0.3 - 2e-17, 0.5, 0.1, 0.05])
    segment = np.array([0, 0, 0, 0, 0, 1, 1])
    out = _nondecreasing(values.copy(), segment)
    assert_array_equal(out, [0.2, 0.3, 0.3, 0.3, 0.5, 0.1, 0.1])


@pytest.mark.slow
def test_segments_fitted_in_one_call_equal_separate_fits_and_what_the_offset_costs() -> None:
    """All groups in one SciPy call against one call per group.

    The offsets 2 s alone would cost precision growing with the number of
    segments (the raw lifted fit, minus its offsets, is measured here); the
    recomputed block means are as close to per-group fits as rounding allows.
    """
    from scipy.optimize import isotonic_regression

    rng = np.random.default_rng(11)
    segments, size = 4000, 25
    y = rng.integers(0, 8, size=segments * size) / 7.0 + rng.normal(0, 0.01, segments * size)
    y = np.clip(y, 0.0, 1.0)
    w = rng.lognormal(0.0, 1.0, size=y.size)
    ids = np.repeat(np.arange(segments), size)
    separate = np.concatenate(
        [
            isotonic_regression(y[ids == s], weights=w[ids == s]).x
            for s in range(segments)  # the per-group loop the library avoids
        ]
    )
    one_call = fit_segments(y, w, ids)
    raw = isotonic_regression(y + 2.0 * ids, weights=w).x - 2.0 * ids
    ours = np.abs(one_call - separate).max()
    offset_cost = np.abs(raw - separate).max()
    assert ours < 2e-15  # a few units in the last place: SciPy's own running means
    assert offset_cost > 1e-12  # lifting to ~8000 rounds at ~1e-12
    assert offset_cost < 2.0 * segments * 2.3e-16 * size  # grows with the offset, as predicted
    for s in (0, segments // 2, segments - 1):
        assert (np.diff(one_call[ids == s]) >= 0).all()


# --------------------------------------------------------------------------- consistency bands


@pytest.mark.parametrize("weights", ["continuous", "few"])
def test_band_matches_the_naive_resampling(weights: str) -> None:
    df = predictions(12, m=300)
    if weights == "few":  # classes of several rows (equal score and weight) next to single ones
        df = df.with_columns((pl.int_range(pl.len()) % 3 + 1.0).alias("w"))
    curve = df.cumdev.corp_curve("s", "r", "w", by="g", resamples=40, level=0.8, seed=5)
    groups = [group_arrays(df, key)[::2] for key in ("x", "y", "z")]  # (s, w)
    want = ref.band([(s, w) for s, w in groups], resamples=40, level=0.8, seed=5)
    for key, (low, high) in zip(("x", "y", "z"), want, strict=True):
        mine = curve.filter(pl.col("g") == key)
        assert_allclose(mine["lower"].to_numpy(), low, rtol=1e-12, atol=1e-15)
        assert_allclose(mine["upper"].to_numpy(), high, rtol=1e-12, atol=1e-15)
    assert (curve["level"] == 0.8).all() and (curve["resamples"] == 40).all()


def test_band_of_certain_scores_is_degenerate() -> None:
    # Scores 0 and 1 are certain outcomes under the hypothesis: many rows at
    # the bottom (drawn as a binomial), a single row at the top (a uniform).
    low, high = consistency_band(
        np.array([0.0, 1.0]),
        np.ones(2),
        np.array([5, 1]),
        np.array([0, 1]),
        np.zeros(2),
        resamples=30,
        level=0.9,
        seed=0,
    )
    assert_array_equal(low, [0.0, 1.0])
    assert_array_equal(high, [0.0, 1.0])


def test_band_shape_and_no_band() -> None:
    df = predictions(14)
    curve = df.cumdev.corp_curve("s", "r", "w", resamples=50)
    low, high = curve["lower"].to_numpy(), curve["upper"].to_numpy()
    assert (low <= high).all() and (low >= 0).all() and (high <= 1).all()
    assert (np.diff(low) >= -1e-15).all() and (np.diff(high) >= -1e-15).all()
    none = df.cumdev.corp_curve("s", "r", "w", resamples=0)
    assert none["lower"].null_count() == none.height and none["level"].null_count() == none.height
    assert_allclose(none["fitted"], curve["fitted"], rtol=0)


@pytest.mark.slow
def test_band_covers_the_fit_of_calibrated_forecasts_at_its_level() -> None:
    rng = np.random.default_rng(15)
    inside = []
    for _ in range(150):
        s = rng.integers(1, 10, size=400) / 10.0
        r = (rng.uniform(size=s.size) < s).astype(float)
        seed = int(rng.integers(0, 2**31))
        curve = pl.DataFrame({"s": s, "r": r}).cumdev.corp_curve("s", "r", level=0.9, seed=seed)
        fitted = curve["fitted"].to_numpy()
        inside.append((fitted >= curve["lower"].to_numpy()) & (fitted <= curve["upper"].to_numpy()))
    coverage = np.mean(inside, axis=0)
    # Pointwise coverage 0.9 up to Monte Carlo error (and the discreteness of
    # the fitted values, which makes "inside" a closed-interval event).
    assert 0.8 < coverage.min() and coverage.mean() < 0.99


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [("s", 1.5, "score column 's'"), ("r", -0.5, "response column 'r'")],
)
def test_values_outside_the_unit_interval_are_rejected(column, value, message) -> None:
    df = predictions(0).with_columns(
        pl.when(pl.int_range(pl.len()) == 3).then(value).otherwise(pl.col(column)).alias(column)
    )
    for call in (
        lambda: df.cumdev.corp("s", "r", "w"),
        lambda: df.cumdev.corp_curve("s", "r", "w", resamples=5),
    ):
        with pytest.raises(InvalidValuesError, match=message):
            call()


def test_bad_weights_and_empty_frames_raise_the_library_errors() -> None:
    df = predictions(0).with_columns(pl.lit(0.0).alias("w"))
    with pytest.raises(InvalidValuesError, match="weight column 'w'"):
        df.cumdev.corp_curve("s", "r", "w", by="g")
    with pytest.raises(EmptySubpopulationError):
        predictions(0).head(0).cumdev.corp("s", "r", "w")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"resamples": -1}, "resamples"),
        ({"resamples": 2.5}, "resamples"),
        ({"level": 1.0}, "level"),
        ({"level": True}, "level"),
        ({"seed": -3}, "seed"),
    ],
)
def test_bad_parameters(kwargs, message) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        predictions(0).cumdev.corp_curve("s", "r", "w", **kwargs)


def test_huge_and_tiny_weights_give_the_same_decomposition() -> None:
    # The total of 900 weights near 1e306 overflows unless they are rescaled first.
    df = predictions(16)
    base = df.cumdev.corp("s", "r", "w", by="g")
    base_curve = df.cumdev.corp_curve("s", "r", "w", resamples=10)
    for factor in (1e306, 1e-300):
        scaled = df.with_columns(pl.col("w") * factor)
        table = scaled.cumdev.corp("s", "r", "w", by="g")
        curve = scaled.cumdev.corp_curve("s", "r", "w", resamples=10)
        for name in ("brier", "mcb", "dsc", "unc", "base_rate"):
            assert_allclose(table[name], base[name], rtol=1e-12, err_msg=name)
        assert_allclose(table["weight"], base["weight"] * factor, rtol=1e-12)
        assert_allclose(curve["fitted"], base_curve["fitted"], rtol=1e-12)
        assert_allclose(curve["weight"], base_curve["weight"] * factor, rtol=1e-12)
