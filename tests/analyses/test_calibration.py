"""Calibration (method.md 2): ECCE-R, ECCE-MAD and sigma against the naive reference."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import reference as ref
from numpy.testing import assert_allclose
from scipy import stats

import polars_cumdev
from polars_cumdev.method.statistics import NOT_LOCATED

RTOL = 1e-9


def predictions(seed: int, m: int = 1500, *, weighted: bool = True, soft: bool = False):
    """Probabilities on a coarse grid (many ties), miscalibrated responses, groups."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 41, size=m) / 40.0
    truth = np.clip(s + 0.08 * np.sin(6 * s), 0, 1)
    r = truth if soft else (rng.uniform(size=m) < truth).astype(np.float64)
    if soft:
        r = np.clip(r + rng.normal(0, 0.05, size=m), 0, 1)
    w = rng.lognormal(0, 0.7, size=m) if weighted else np.ones(m)
    g = rng.choice(["x", "y", "z"], size=m, p=[0.6, 0.3, 0.1])
    return pl.DataFrame({"s": s, "r": r, "w": w, "g": g})


def expected(df: pl.DataFrame) -> dict:
    return ref.calibration(df["s"].to_numpy(), df["r"].to_numpy(), df["w"].to_numpy())


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("soft", [False, True])
def test_overall_statistics_match_reference(seed: int, soft: bool) -> None:
    df = predictions(seed, soft=soft)
    got = df.cumdev.calibration("s", "r", "w").row(0, named=True)
    want = expected(df)
    for name in ("ecce_r", "ecce_mad", "delta", "sigma"):
        assert_allclose(got[name], want[name], rtol=RTOL, err_msg=name)
    assert_allclose(got["ecce_r_z"], want["kuiper"] / want["sigma"], rtol=RTOL)
    assert_allclose(got["ecce_mad_z"], want["ks"] / want["sigma"], rtol=RTOL)
    assert_allclose(got["ecce_r_p"], ref.kuiper_pvalue_naive(got["ecce_r_z"]), rtol=RTOL)
    assert_allclose(got["ecce_mad_p"], ref.ks_pvalue_naive(got["ecce_mad_z"]), rtol=RTOL)
    assert got["n"] == df.height
    assert got["n_scores"] == df["s"].n_unique()


@pytest.mark.slow
def test_a_single_distinct_score_still_has_z_when_sigma_is_positive() -> None:
    # method.md 2 leaves z undefined only when sigma = 0; one merged point with
    # 0 < S' < 1 has sigma > 0. A group predicted 0 (sigma = 0) gets a note.
    df = pl.DataFrame(
        {
            "g": ["one", "one", "one", "zero", "zero"],
            "s": [0.3, 0.3, 0.3, 0.0, 0.0],
            "r": [0.0, 1.0, 1.0, 0.0, 0.0],
            "w": [1.0, 2.0, 0.5, 1.0, 1.0],
        }
    )
    frame = df.cumdev.calibration("s", "r", "w", by="g", level=1.0)  # every stretch stated
    got = {row["g"]: row for row in frame.to_dicts()}
    want = ref.calibration(np.full(3, 0.3), np.array([0.0, 1.0, 1.0]), np.array([1.0, 2.0, 0.5]))
    one = got["one"]
    assert one["n_scores"] == 1
    assert one["note"] == (None if one["ecce_r_z"] > 2.0 else NOT_LOCATED)
    assert_allclose(one["ecce_r_z"], want["kuiper"] / want["sigma"], rtol=RTOL)
    # three rows: p-values from the exact null (tests/analyses/test_finite_sample_pvalues.py)
    assert one["p_method"] == "simulated"
    zero = got["zero"]
    assert zero["sigma"] == 0.0 and zero["ecce_r_z"] is None and zero["note"]


def test_unweighted_equals_unit_weights() -> None:
    df = predictions(5, weighted=False)
    a = df.cumdev.calibration("s", "r").row(0, named=True)
    b = df.cumdev.calibration("s", "r", "w").row(0, named=True)
    for name in ("ecce_r", "ecce_mad", "sigma", "ecce_r_p"):
        assert_allclose(a[name], b[name], rtol=1e-12, err_msg=name)


@pytest.mark.slow
def test_per_group_matches_each_group_alone_and_is_lazy() -> None:
    df = predictions(3)
    lazy = df.lazy().cumdev.calibration("s", "r", "w", by="g")
    assert isinstance(lazy, pl.LazyFrame)
    out = lazy.collect(engine="streaming")
    assert out["g"].to_list() == out.sort("ecce_r_z", descending=True)["g"].to_list()
    for row in out.iter_rows(named=True):
        want = expected(df.filter(pl.col("g") == row["g"]))
        assert_allclose(row["ecce_r"], want["ecce_r"], rtol=RTOL)
        assert_allclose(row["ecce_mad"], want["ecce_mad"], rtol=RTOL)
        assert_allclose(row["sigma"], want["sigma"], rtol=RTOL)
    q = ref.bh_qvalues(out["ecce_r_p"].to_numpy())
    assert_allclose(out["ecce_r_q"].to_numpy(), q, rtol=RTOL)


@pytest.mark.parametrize("fraction", [1.0, 0.5, 0.23])
def test_curve_matches_reference(fraction: float) -> None:
    df = predictions(4)
    got = df.cumdev.calibration_curve("s", "r", "w", fraction=fraction)
    want = ref.calibration(df["s"].to_numpy(), df["r"].to_numpy(), df["w"].to_numpy(), fraction)
    assert got.columns[:6] == ["k", "a", "k_over_n", "score", "cumdiff", "full_mean"]
    assert got.height == want["kept"] + 1
    assert_allclose(got["a"].to_numpy(), want["A"], rtol=RTOL, atol=1e-15)
    assert_allclose(got["cumdiff"].to_numpy(), want["C"], rtol=RTOL, atol=1e-15)
    assert_allclose(got["score"].to_numpy()[1:], want["S"][: want["kept"]], rtol=0)
    assert_allclose(got["sigma"].to_numpy(), want["sigma"], rtol=RTOL)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [("s", 1.5, "score column 's'"), ("s", -0.1, "score column 's'"), ("r", 2.0, "response")],
)
def test_values_outside_the_unit_interval_are_rejected(column, value, message) -> None:
    df = predictions(0).with_columns(
        pl.when(pl.int_range(pl.len()) < 3).then(value).otherwise(pl.col(column)).alias(column)
    )
    with pytest.raises(polars_cumdev.InvalidValuesError, match=message) as info:
        df.cumdev.calibration("s", "r", "w")
    assert "3 value(s) outside [0, 1]" in str(info.value)
    with pytest.raises(polars_cumdev.CumdevError):
        df.lazy().cumdev.calibration_curve("s", "r", "w").collect()


@pytest.mark.slow
def test_perfect_calibration_statistics_shrink_like_one_over_root_n() -> None:
    rng = np.random.default_rng(11)
    sizes = (1_000, 16_000)
    values = []
    for m in sizes:
        runs = []
        for _ in range(8):
            s = rng.uniform(size=m)
            r = (rng.uniform(size=m) < s).astype(np.float64)
            runs.append(pl.DataFrame({"s": s, "r": r}).cumdev.calibration("s", "r")["ecce_r"][0])
        values.append(np.mean(runs))
    # 16 times the data: the ECCE-R should shrink about 4-fold (not hit a floor).
    ratio = values[0] / values[1]
    assert 2.5 < ratio < 6.5, ratio


@pytest.mark.slow
def test_ecce_r_pvalue_is_uniform_under_perfect_calibration() -> None:
    rng = np.random.default_rng(2024)
    p_values = []
    for _ in range(400):
        s = rng.uniform(size=2_000)
        r = (rng.uniform(size=s.size) < s).astype(np.float64)
        p_values.append(pl.DataFrame({"s": s, "r": r}).cumdev.calibration("s", "r")["ecce_r_p"][0])
    # A Kolmogorov-Smirnov test of the 400 p-values against the uniform law. The
    # asymptotic p-value is slightly conservative at finite n (discrete walks miss
    # the extremes between steps), so the p-values lean towards 1; the test allows
    # that small lean but would catch a wrong sigma (a factor of sqrt(2) either way
    # moves the KS distance far past 0.1).
    result = stats.kstest(p_values, "uniform")
    assert result.statistic < 0.1, result


@pytest.mark.parametrize("fraction", [1.0, 0.5])
@pytest.mark.parametrize("lazy", [False, True])
def test_curve_of_one_group_selected_with_subpop(fraction: float, lazy: bool) -> None:
    """``subpop=`` selects the group, as in curve, compare_curve and paired_curve: the naive
    transcription of the group's rows alone, whether given as an expression or a column."""
    df = predictions(5).with_columns((pl.col("g") == "y").alias("is_y"))
    group = df.filter(pl.col("is_y"))
    want = ref.calibration(
        group["s"].to_numpy(), group["r"].to_numpy(), group["w"].to_numpy(), fraction
    )
    frame = df.lazy() if lazy else df
    for subpop in (pl.col("g") == "y", "is_y"):
        got = frame.cumdev.calibration_curve("s", "r", "w", subpop=subpop, fraction=fraction)
        got = got.collect() if lazy else got
        assert got.height == want["kept"] + 1
        assert_allclose(got["a"].to_numpy(), want["A"], rtol=RTOL, atol=1e-15)
        assert_allclose(got["cumdiff"].to_numpy(), want["C"], rtol=RTOL, atol=1e-15)
        assert_allclose(got["sigma"].to_numpy(), want["sigma"], rtol=RTOL)
    with pytest.raises(polars_cumdev.EmptySubpopulationError, match="selects no rows"):
        df.cumdev.calibration_curve("s", "r", "w", subpop=pl.col("g") == "nowhere")
    with pytest.raises(polars_cumdev.ColumnTypeError, match="boolean"):
        df.cumdev.calibration_curve("s", "r", "w", subpop="g")
