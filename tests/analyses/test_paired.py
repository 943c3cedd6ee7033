"""Paired samples (paired-and-covariates.md 1) against the naive reference, and invariants."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import reference as ref
import reference_location as ref_loc
import reference_paired as refp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

import polars_cumdev
from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    EmptySubpopulationError,
    InvalidParameterError,
    InvalidValuesError,
)
from polars_cumdev.paired import PAIRED_CURVE_COLUMNS, paired, paired_curve

RTOL = 1e-9


def pairs(seed: int, n: int = 1200, *, unit: bool = False, groups: int = 3) -> pl.DataFrame:
    """Scores on a coarse grid (many ties), two responses, weights, uneven groups."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 60, size=n) / 8.0
    drift = 0.3 * np.sin(s)
    if unit:
        q = np.clip(0.5 + 0.3 * rng.normal(size=n) + drift, 0.0, 1.0)
        r = rng.uniform(size=n)
        q[: n // 10] = np.round(q[: n // 10])  # some exact 0s and 1s
    else:
        q = rng.normal(size=n) * 3.0 + drift
        r = rng.standard_t(4, size=n) - 1.5
    w = rng.lognormal(0.0, 0.8, size=n)
    g = rng.choice([f"g{i}" for i in range(groups)], size=n, p=_shares(groups))
    return pl.DataFrame({"s": s, "q": q, "r": r, "w": w, "g": g})


def _shares(groups: int) -> np.ndarray:
    raw = np.arange(groups, 0, -1, dtype=np.float64)
    return raw / raw.sum()


def _expected_row(part: pl.DataFrame, variance: str, weighted: bool = True) -> dict:
    w = part["w"].to_numpy() if weighted else None
    return refp.paired(
        part["s"].to_numpy(), part["q"].to_numpy(), part["r"].to_numpy(), w, variance
    )


def _check_row(got: dict, want: dict) -> None:
    for name in ("weight", "kuiper", "ks", "delta", "sigma"):
        assert_allclose(got[name], want[name], rtol=RTOL, atol=1e-15, err_msg=name)
    assert got["n"] == want["n"]
    assert got["n_scores"] == want["n_scores"]
    assert_allclose(got["kuiper_z"], want["kuiper"] / want["sigma"], rtol=RTOL)
    assert_allclose(got["ks_z"], want["ks"] / want["sigma"], rtol=RTOL)
    assert_allclose(
        got["kuiper_p"], ref.kuiper_pvalue_naive(want["kuiper"] / want["sigma"]), rtol=1e-8
    )
    assert_allclose(got["ks_p"], ref.ks_pvalue_naive(want["ks"] / want["sigma"]), rtol=1e-8)
    assert_allclose(got["kuiper_log10p"], math.log10(got["kuiper_p"]), rtol=1e-9)
    location = ref_loc.expected_location(
        want["A"], want["C"], want["scores"], want["kuiper"] - 2.0 * want["sigma"]
    )
    if location is None:
        assert got["from_score"] is None and got["share"] is None
    else:
        # Stretches of equal length (common without weights) may be told
        # apart by the last bits of A: accept any shortest one that reaches T.
        i = want["scores"].index(got["from_score"])
        j = want["scores"].index(got["to_score"]) + 1
        a, c = want["A"], want["C"]
        assert_allclose(got["share"], location["share"], rtol=RTOL)
        assert_allclose(got["share"], a[j] - a[i], rtol=RTOL)
        assert_allclose(got["deviation"], (c[j] - c[i]) / (a[j] - a[i]), rtol=1e-8)
        rise = abs(c[j] - c[i])
        assert rise >= (want["kuiper"] - 2.0 * want["sigma"]) * (1.0 - 1e-12)
        if got["from_score"] == location["from_score"]:
            assert got["to_score"] == location["to_score"]
            assert_allclose(got["deviation"], location["deviation"], rtol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("variance", ["empirical", "bernoulli"])
def test_groups_match_reference(seed: int, variance: str) -> None:
    df = pairs(seed, unit=variance == "bernoulli")
    got = df.cumdev.paired("s", "q", "r", "w", by="g", variance=variance, level=1.0)
    assert got["variance"].to_list() == [variance] * got.height
    for row in got.iter_rows(named=True):
        _check_row(row, _expected_row(df.filter(pl.col("g") == row["g"]), variance))
    # ranked by kuiper_z, BH across the groups
    z = got["kuiper_z"].to_numpy()
    assert np.all(np.diff(z) <= 0)
    assert_allclose(got["kuiper_q"], ref.bh_qvalues(got["kuiper_p"].to_list()), rtol=1e-12)
    assert_allclose(got["ks_q"], ref.bh_qvalues(got["ks_p"].to_list()), rtol=1e-12)


@pytest.mark.parametrize("variance", ["empirical", "bernoulli"])
@pytest.mark.slow
def test_overall_unweighted_matches_reference(variance: str) -> None:
    df = pairs(5, unit=True)
    got = paired(df.lazy(), "s", "q", "r", variance=variance, level=1.0)
    assert isinstance(got, pl.LazyFrame)
    row = got.collect().row(0, named=True)
    _check_row(row, _expected_row(df, variance, weighted=False))
    curve = paired_curve(df.lazy(), "s", "q", "r", variance=variance)
    assert isinstance(curve, pl.LazyFrame)
    assert_allclose(curve.collect()["sigma"][0], row["sigma"], rtol=1e-12)


@pytest.mark.parametrize("fraction", [1.0, 0.37])
@pytest.mark.parametrize("variance", ["empirical", "bernoulli"])
def test_curve_matches_reference(fraction: float, variance: str) -> None:
    df = pairs(7, unit=True)
    got = df.cumdev.paired_curve("s", "q", "r", "w", variance=variance, fraction=fraction)
    assert got.columns == list(PAIRED_CURVE_COLUMNS)
    want = refp.paired(*(df[c].to_numpy() for c in "sqrw"), variance, fraction)
    assert got.height == want["n_scores"] + 1
    assert got["k"].to_list() == list(range(want["n_scores"] + 1))
    assert_allclose(got["a"], want["A"], rtol=RTOL, atol=1e-15)
    assert_allclose(got["cumdiff"], want["C"], rtol=RTOL, atol=1e-15)
    body = got.filter(pl.col("k") > 0)
    assert body["score"].to_list() == want["scores"]
    assert_allclose(body["first_mean"], want["first_mean"], rtol=RTOL)
    assert_allclose(body["second_mean"], want["second_mean"], rtol=RTOL)
    assert_allclose(body["weight"], want["weights"], rtol=RTOL)
    assert_allclose(got["sigma"], want["sigma"], rtol=RTOL)
    share = np.cumsum(want["sigma2_terms"]) / want["sigma"] ** 2
    assert_allclose(body["variance_share"], share, rtol=1e-9)
    # the flagged points are the located stretch of the reference
    found = ref_loc.shortest_stretch(
        want["A"][1:], want["C"][1:], want["kuiper"] - 2 * want["sigma"]
    )
    flagged = body.filter("located")["k"].to_list()
    if found is None:
        assert flagged == []
    else:
        assert flagged == list(range(found[0] + 1, found[1] + 1))


def test_curve_agrees_with_summary() -> None:
    df = pairs(3)
    row = df.cumdev.paired("s", "q", "r", "w").row(0, named=True)
    curve = df.cumdev.paired_curve("s", "q", "r", "w")
    c = curve["cumdiff"].to_numpy()
    assert_allclose(c.max() - c.min(), row["kuiper"], rtol=1e-12)
    assert_allclose(c[-1], row["delta"], rtol=1e-12)
    assert_allclose(curve["sigma"][0], row["sigma"], rtol=1e-12)


@pytest.mark.parametrize("score", ["s", ["s", "t"]])
def test_curve_of_a_group_is_the_one_the_table_ranked(score: str | list[str]) -> None:
    """subpop= selects the group after ordering: with covariates, the frame's Hilbert order."""
    df = pairs(4, groups=3).with_columns(t=pl.Series(np.random.default_rng(5).normal(size=1200)))
    table = df.cumdev.paired(score, "q", "r", "w", by="g")
    for row in table.iter_rows(named=True):
        mask = pl.col("g") == row["g"]
        curve = df.cumdev.paired_curve(score, "q", "r", "w", subpop=mask)
        c = curve["cumdiff"].to_numpy()
        assert_allclose(c.max() - c.min(), row["kuiper"], rtol=1e-12)
        assert_allclose(c[-1], row["delta"], rtol=1e-12)
        assert_allclose(curve["sigma"][0], row["sigma"], rtol=1e-12)
        assert curve.filter(pl.col("located"))["score"].min() == row["from_score"]
    if isinstance(score, list):
        # Ranking the covariates within the group instead gives another curve.
        mask = pl.col("g") == "g2"
        alone = df.filter(mask).cumdev.paired_curve(score, "q", "r", "w")["cumdiff"]
        chosen = df.cumdev.paired_curve(score, "q", "r", "w", subpop=mask)["cumdiff"]
        assert alone.len() == chosen.len()
        assert not np.allclose(alone.to_numpy(), chosen.to_numpy(), rtol=1e-6)


def test_curve_subpop_is_checked() -> None:
    df = pairs(6)
    with pytest.raises(EmptySubpopulationError, match="selects no rows"):
        df.cumdev.paired_curve("s", "q", "r", subpop=pl.col("g") == "nobody")
    with pytest.raises(ColumnTypeError, match="must be boolean"):
        df.cumdev.paired_curve("s", "q", "r", subpop=pl.col("s"))
    with pytest.raises(InvalidParameterError, match="keeps no point of subpop"):
        df.cumdev.paired_curve("s", "q", "r", subpop=pl.col("g") == "g0", fraction=1e-9)


def test_single_score_group_keeps_its_row() -> None:
    df = pairs(1).with_columns(
        pl.when(pl.col("g") == "g2").then(pl.lit(1.5)).otherwise(pl.col("s")).alias("s")
    )
    got = df.cumdev.paired("s", "q", "r", "w", by="g")
    assert got.height == 3
    single = got.filter(pl.col("g") == "g2").row(0, named=True)
    assert single["n_scores"] == 1
    assert single["kuiper_z"] is None and single["kuiper_p"] is None
    assert "one distinct score" in single["note"]
    assert got["g"].to_list()[-1] == "g2"  # nulls rank last
    # q-values are over the two groups with a p-value
    rest = got.filter(pl.col("kuiper_p").is_not_null())
    assert_allclose(got["kuiper_q"].drop_nulls(), ref.bh_qvalues(rest["kuiper_p"].to_list()))


def test_identical_responses_give_a_note() -> None:
    df = pairs(2).with_columns(pl.col("q").alias("r"))
    row = df.cumdev.paired("s", "q", "r").row(0, named=True)
    assert row["kuiper"] == 0.0 and row["sigma"] == 0.0
    assert row["kuiper_z"] is None
    assert "agree at every score" in row["note"]


def test_boolean_and_integer_responses() -> None:
    df = pl.DataFrame(
        {"s": [1, 2, 2, 3, 4], "q": [True, False, True, True, False], "r": [0, 0, 1, 1, 1]}
    )
    got = df.cumdev.paired("s", "q", "r").row(0, named=True)
    want = refp.paired([1, 2, 2, 3, 4], [1, 0, 1, 1, 0], [0, 0, 1, 1, 1], None, "empirical")
    assert_allclose(got["kuiper"], want["kuiper"], rtol=RTOL)
    assert_allclose(got["sigma"], want["sigma"], rtol=RTOL)


def test_bernoulli_refuses_outcomes() -> None:
    """variance="bernoulli" reads the responses as probabilities; on 0/1 outcomes its
    sigma collapses (issue 36: 40% of null comparisons rejected at 5%), so it is refused,
    naming both columns. One value strictly between 0 and 1 makes them probabilities."""
    df = pl.DataFrame(
        {"s": [1, 2, 2, 3, 4], "q": [True, False, True, True, False], "r": [0, 0, 1, 1, 1]}
    )
    with pytest.raises(InvalidValuesError, match="'q' and 'r' as probabilities"):
        df.cumdev.paired("s", "q", "r", variance="bernoulli")
    probabilities = df.with_columns(r=pl.Series([0.0, 0.0, 1.0, 1.0, 0.5]))
    got = probabilities.cumdev.paired("s", "q", "r", variance="bernoulli").row(0, named=True)
    want = refp.paired([1, 2, 2, 3, 4], [1, 0, 1, 1, 0], [0, 0, 1, 1, 0.5], None, "bernoulli")
    assert_allclose(got["sigma"], want["sigma"], rtol=RTOL)


# ---------------------------------------------------------------- invariants

_small = st.integers(min_value=0, max_value=2**32 - 1)


def _stats(frame: pl.DataFrame, first: str = "q", second: str = "r", **kw) -> pl.DataFrame:
    return frame.cumdev.paired("s", first, second, "w", by="g", **kw).sort("g")


@settings(max_examples=25, deadline=None)
@given(seed=_small, permutation=_small)
@pytest.mark.slow
def test_row_order_does_not_matter(seed: int, permutation: int) -> None:
    df = pairs(seed, n=300)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=permutation)
    a, b = _stats(df), _stats(shuffled)
    for name in ("kuiper", "ks", "delta", "sigma", "kuiper_p"):
        assert_allclose(a[name], b[name], rtol=1e-12, err_msg=name)


@settings(max_examples=25, deadline=None)
@given(seed=_small, factor=st.floats(min_value=1e-200, max_value=1e200))
@pytest.mark.slow
def test_scaling_weights_changes_nothing_but_the_total(seed: int, factor: float) -> None:
    df = pairs(seed, n=300)
    a = _stats(df)
    b = _stats(df.with_columns(pl.col("w") * factor))
    for name in ("kuiper", "ks", "delta", "sigma", "kuiper_p"):
        assert_allclose(a[name], b[name], rtol=1e-12, err_msg=name)
    assert_allclose(b["weight"], a["weight"] * factor, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=_small, variance=st.sampled_from(["empirical", "bernoulli"]))
@pytest.mark.slow
def test_swapping_first_and_second_negates_delta(seed: int, variance: str) -> None:
    df = pairs(seed, n=300, unit=True)
    a = _stats(df, variance=variance)
    b = _stats(df, "r", "q", variance=variance)
    assert_allclose(b["delta"], -a["delta"], rtol=1e-12, atol=1e-16)
    for name in ("kuiper", "ks", "sigma", "kuiper_p", "share"):
        assert_allclose(a[name], b[name], rtol=1e-12, err_msg=name)
    assert_allclose(b["deviation"], -a["deviation"], rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=_small)
@pytest.mark.slow
def test_merging_ties_by_hand(seed: int) -> None:
    df = pairs(seed, n=300)
    merged = df.group_by("g", "s").agg(
        (pl.col("q") * pl.col("w")).sum() / pl.col("w").sum(),
        (pl.col("r") * pl.col("w")).sum() / pl.col("w").sum(),
        pl.col("w").sum(),
    )
    a, b = _stats(df), _stats(merged)
    for name in ("kuiper", "ks", "delta", "sigma", "kuiper_p", "weight"):
        assert_allclose(a[name], b[name], rtol=1e-11, err_msg=name)
    assert b["n_scores"].to_list() == a["n_scores"].to_list()


# ---------------------------------------------------------------- bad input


def _frame() -> pl.DataFrame:
    return pl.DataFrame(
        {"s": [0.1, 0.2, 0.3], "q": [0.2, 0.5, 0.9], "r": [0.1, 0.4, 0.8], "w": [1.0, 2.0, 3.0]}
    )


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        ({"r": pl.lit(None, dtype=pl.Float64)}, InvalidValuesError, "'r' has 3 null"),
        ({"q": pl.lit(float("nan"))}, InvalidValuesError, "'q' has 3 NaN"),
        ({"r": pl.lit(float("inf"))}, InvalidValuesError, "'r' has 3 infinite"),
        ({"w": pl.lit(0.0)}, InvalidValuesError, "'w' has 3 non-positive"),
        ({"s": pl.lit(None, dtype=pl.Float64)}, InvalidValuesError, "'s' has 3 null"),
        ({"r": pl.lit("x")}, ColumnTypeError, "'r' has dtype String"),
        ({"q": pl.lit("x")}, ColumnTypeError, "'q' has dtype String"),
    ],
)
def test_bad_values_name_the_column(change: dict, error: type, words: str) -> None:
    frame = _frame().with_columns(**change)
    with pytest.raises(error, match=words):
        frame.cumdev.paired("s", "q", "r", "w")
    with pytest.raises(error, match=words):
        frame.cumdev.paired_curve("s", "q", "r", "w")


def test_missing_columns_are_named() -> None:
    with pytest.raises(ColumnNotFoundError, match="second response column 'zz'"):
        _frame().cumdev.paired("s", "q", "zz")
    with pytest.raises(ColumnNotFoundError, match="first response column 'zz'"):
        _frame().lazy().cumdev.paired("s", "zz", "r")
    with pytest.raises(ColumnNotFoundError, match="'g'"):
        _frame().cumdev.paired("s", "q", "r", by="g")


@pytest.mark.parametrize("column", ["q", "r"])
def test_bernoulli_needs_unit_interval(column: str) -> None:
    frame = _frame().with_columns(pl.col(column) * 2.0 - 0.5)
    with pytest.raises(InvalidValuesError, match=f"'{column}' has .* outside \\[0, 1\\]"):
        frame.cumdev.paired("s", "q", "r", variance="bernoulli")
    frame.cumdev.paired("s", "q", "r", variance="empirical")  # any reals are fine


def test_bad_parameters() -> None:
    with pytest.raises(InvalidParameterError, match="'empirical' or 'bernoulli'"):
        _frame().cumdev.paired("s", "q", "r", variance="gaussian")
    with pytest.raises(InvalidParameterError, match="fraction"):
        _frame().cumdev.paired_curve("s", "q", "r", fraction=0.0)
    with pytest.raises(InvalidParameterError, match="keeps no point"):
        _frame().cumdev.paired_curve("s", "q", "r", fraction=0.2)


# ---------------------------------------------------------------- power and size


def test_planted_difference_is_detected_and_located() -> None:
    rng = np.random.default_rng(11)
    n = 4000
    s = rng.uniform(size=2 * n)
    g = np.repeat(["planted", "null"], n)
    r = rng.normal(size=2 * n)
    q = rng.normal(size=2 * n) + np.where((g == "planted") & (s > 0.4) & (s < 0.6), 0.5, 0.0)
    df = pl.DataFrame({"s": s, "q": q, "r": r, "g": g})
    got = df.cumdev.paired("s", "q", "r", by="g")
    planted, null = got.row(0, named=True), got.row(1, named=True)
    assert planted["g"] == "planted"
    assert planted["kuiper_q"] < 1e-6
    assert null["kuiper_q"] > 0.05
    assert 0.3 < planted["from_score"] < 0.5 < planted["to_score"] < 0.7
    assert 0.25 < planted["deviation"] < 0.9


def _null_groups(groups: int, m: int, seed: int) -> tuple[np.random.Generator, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups, dtype=np.int32), m)
    s = rng.uniform(size=groups * m)
    w = rng.uniform(0.5, 2.0, size=groups * m)
    return rng, pl.DataFrame({"g": g, "s": s, "w": w})


@pytest.mark.slow
def test_pvalues_are_uniform_under_no_difference() -> None:
    # 2,000 independent groups of 4,000 pairs (the paper's n) in one query;
    # under the null Q and R have the same law at every score, and sigma is
    # the observed estimator. The asymptotic p-values lean slightly towards 1
    # at finite m (a discrete walk misses extremes between its steps); with
    # 4,000 steps that lean stays within the test (its statistic is ~0.03).
    rng, df = _null_groups(2_000, 4_000, 20231)
    df = df.with_columns(
        q=pl.Series(rng.normal(size=df.height)), r=pl.Series(rng.standard_t(5, size=df.height))
    )
    got = df.cumdev.paired("s", "q", "r", "w", by="g")
    assert got.height == 2_000
    for column in ("kuiper_p", "ks_p"):
        result = stats.kstest(got[column].to_numpy(), "uniform")
        assert result.pvalue > 1e-3, (column, result)


@pytest.mark.slow
def test_bernoulli_sigma_is_the_scale_of_draws() -> None:
    # variance="bernoulli" reads Q and R as probabilities: its sigma is the
    # standard deviation of C_m when 0/1 outcomes are drawn with them. So the
    # Kuiper statistic of drawn outcomes divided by the sigma of their
    # probabilities has the null law: its p-values are uniform.
    rng, df = _null_groups(1_000, 4_000, 7)
    p = 0.1 + 0.8 * df["s"].to_numpy() ** 2
    df = df.with_columns(
        p=pl.Series(p),
        q=pl.Series((rng.uniform(size=df.height) < p).astype(np.float64)),
        r=pl.Series((rng.uniform(size=df.height) < p).astype(np.float64)),
    )
    draws = df.cumdev.paired("s", "q", "r", "w", by="g").select("g", "kuiper", "delta")
    scale = df.cumdev.paired("s", "p", "p", "w", by="g", variance="bernoulli")
    joined = draws.join(scale.select("g", "sigma"), on="g")
    z = (joined["kuiper"] / joined["sigma"]).to_numpy()
    result = stats.kstest(polars_cumdev.kuiper_pvalue(z), "uniform")
    assert result.pvalue > 1e-3, result
    spread = np.std((joined["delta"] / joined["sigma"]).to_numpy())
    assert 0.93 < spread < 1.07, spread


def test_variance_is_called_empirical_as_in_screen() -> None:
    """One name for the variance estimated from the data: "empirical" (screen's); the old
    name "observed" still works, with a DeprecationWarning, and gives the same table."""
    frame = _frame()
    table = frame.cumdev.paired("s", "q", "r", variance="empirical")
    assert table["variance"].unique().to_list() == ["empirical"]
    with pytest.warns(DeprecationWarning, match="variance='empirical'"):
        old = frame.cumdev.paired("s", "q", "r", variance="observed")
    assert old.equals(table)
    with pytest.warns(DeprecationWarning):
        frame.cumdev.paired_curve("s", "q", "r", variance="observed")
