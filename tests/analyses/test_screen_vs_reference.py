"""``cumdev.screen`` and the p-value functions against the naive reference.

Every group's statistics must agree with ``reference.subpop_vs_full`` (the
group as subpopulation, every row of the frame as full population) to a
relative error of 1e-9; p-values with the direct high-precision summation of
the spec-4 series; q-values with a plain Benjamini-Hochberg.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import reference as ref
from numpy.testing import assert_allclose
from reference_location import expected_location

import polars_cumdev
from polars_cumdev.method.statistics import NOT_LOCATED

RTOL = 1e-9
TINY = 1e-15  # absolute slack, only matters where the true value is 0

STATS = ("kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z", "kuiper_p", "ks_p", "kuiper_q")

# (seed, response kind, weight kind, score kind, variance argument)
CASES = [
    (1, "bernoulli", "float", "grid", "auto"),
    (2, "bernoulli", "none", "grid", "bernoulli"),
    (3, "bernoulli", "int", "mixed", "empirical"),
    (4, "bernoulli", "float", "continuous", "bernoulli"),
    (5, "count", "float", "grid", "auto"),
    (6, "count", "none", "mixed", "empirical"),
    (7, "continuous", "int", "grid", "empirical"),
    (8, "continuous", "float", "continuous", "auto"),
    (9, "continuous", "none", "grid", "auto"),
]


def close(actual, expected, what: str) -> None:
    assert_allclose(
        np.asarray(actual, dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=RTOL,
        atol=TINY,
        err_msg=what,
    )


def group_masks(df: pl.DataFrame, by: list[str]):
    """(key tuple, boolean mask) for every distinct combination of ``by``."""
    keys = df.select(by).unique().rows()
    for key in keys:
        mask = np.ones(df.height, dtype=bool)
        for column, value in zip(by, key, strict=True):
            mask &= df[column].to_numpy() == value
        yield key, mask


def check_rule(row: dict, searched: dict, q: float, what: str) -> None:
    """The significance rule: ``row`` (level 0.05) states the stretch of ``searched``
    (the same group at level 1) only when the reference's BH q is at most 0.05."""
    names = ("from_score", "to_score", "share", "deviation")
    if q <= 0.05:
        assert [row[c] for c in names] == [searched[c] for c in names], what
        assert row["note"] == searched["note"], what
        return
    assert all(row[c] is None for c in names), f"{what}: a stretch stated with q = {q}"
    assert row["note"].startswith("not significant: q = "), f"{what}: note {row['note']!r}"
    assert row["note"].endswith(" > 0.05"), f"{what}: note {row['note']!r}"
    assert abs(float(row["note"].split("= ")[1].split(" ")[0]) - q) <= 0.05 * q, what  # two digits


def check_location(row: dict, expect: dict, what: str) -> None:
    """The located stretch against the naive O(n^2) transcription, on the reference's curve."""
    threshold = expect["kuiper"] - 2.0 * expect["sigma"]
    wanted = expected_location(expect["A"], expect["C"], expect["S"], threshold)
    if wanted is None:
        assert row["from_score"] is None and row["deviation"] is None, what
        assert row["note"] == NOT_LOCATED, f"{what}: note {row['note']!r}"
        return
    for name, value in wanted.items():
        close(row[name], value, f"{what}: {name}")
    assert row["note"] is None, f"{what}: unexpected note {row['note']!r}"


def check_screen(df: pl.DataFrame, out: pl.DataFrame, by, weight, variance) -> None:
    """Hold every row of ``out`` to the reference."""
    by = [by] if isinstance(by, str) else list(by)
    assert isinstance(out, pl.DataFrame)
    missing = set(by) | {"n", "n_scores", "variance", "note", *STATS}
    missing -= set(out.columns)
    assert not missing, f"screen output lacks columns {sorted(missing)}"
    s = df["s"].to_numpy().astype(np.float64)
    r = df["r"].to_numpy().astype(np.float64)
    w = None if weight is None else df[weight].to_numpy().astype(np.float64)
    resolved = ref.resolve_variance(variance, r)

    expected_keys = sorted(df.select(by).unique().rows())
    assert sorted(out.select(by).rows()) == expected_keys
    assert out.height == len(expected_keys)
    assert set(out["variance"].to_list()) == {resolved}

    rows = {tuple(row[c] for c in by): row for row in out.iter_rows(named=True)}
    # The search itself at level 1 (every stretch stated), the rule at the default 0.05.
    searched = df.cumdev.screen(
        by=by, score="s", response="r", weight=weight, variance=variance, level=1.0
    )
    everything = {tuple(row[c] for c in by): row for row in searched.iter_rows(named=True)}
    p_all = [np.nan if x is None else x for x in out["kuiper_p"].to_list()]
    q_ref = dict(zip(out.select(by).rows(), ref.bh_qvalues(p_all), strict=True))
    for key, mask in group_masks(df, by):
        row = rows[key]
        what = f"group {key}"
        expect = ref.subpop_vs_full(s, r, w, mask, variance)
        assert row["n"] == int(mask.sum()), what
        assert row["n_scores"] == expect["n"], what
        for name in ("kuiper", "ks", "delta", "sigma"):
            if expect["n"] == 1 and row[name] is None:
                continue  # statistics of a single-score group may be withheld
            assert row[name] is not None, f"{what}: {name} is null"
            close(row[name], expect[name], f"{what}: {name}")
        if expect["n"] == 1 or expect["sigma"] == 0.0:
            for name in ("kuiper_z", "ks_z", "kuiper_p", "ks_p", "kuiper_q"):
                assert row[name] is None, f"{what}: {name} should be null"
            assert row["note"], f"{what}: a null statistic needs a note"
            continue
        close(row["kuiper_z"], expect["kuiper"] / expect["sigma"], f"{what}: kuiper_z")
        close(row["ks_z"], expect["ks"] / expect["sigma"], f"{what}: ks_z")
        # p-values as functions of the library's own z (so only the
        # p-value arithmetic is being tested here)
        if row["p_method"] == "asymptotic":  # else the exact null's (test_finite_sample_pvalues)
            close(row["kuiper_p"], ref.kuiper_pvalue_naive(row["kuiper_z"]), f"{what}: kuiper_p")
            close(row["ks_p"], ref.ks_pvalue_naive(row["ks_z"]), f"{what}: ks_p")
        check_location(everything[key], expect, what)
        check_rule(row, everything[key], q_ref[key], what)

    # Benjamini-Hochberg over the groups that have a p-value.
    for p_name, q_name in (("kuiper_p", "kuiper_q"), ("ks_p", "ks_q")):
        if q_name not in out.columns:
            continue
        p = [np.nan if x is None else x for x in out[p_name].to_list()]
        q = [np.nan if x is None else x for x in out[q_name].to_list()]
        close(q, ref.bh_qvalues(p), q_name)

    # Sorted by kuiper_z, largest first, nulls last.
    z = out["kuiper_z"].to_list()
    present = [x for x in z if x is not None]
    assert z[: len(present)] == present, "nulls must come last"
    assert present == sorted(present, reverse=True), "rows must be sorted by kuiper_z descending"


@pytest.mark.parametrize(("seed", "response", "weights", "scores", "variance"), CASES)
@pytest.mark.slow
def test_screen_matches_reference(make_frame, seed, response, weights, scores, variance):
    df = make_frame(seed, 900, response=response, weights=weights, scores=scores)
    weight = None if weights == "none" else "w"
    out = df.cumdev.screen(by="g", score="s", response="r", weight=weight, variance=variance)
    check_screen(df, out, "g", weight, variance)


@pytest.mark.slow
def test_screen_auto_picks_bernoulli_only_for_binary_responses(make_frame):
    binary = make_frame(21, 500, response="bernoulli", weights="float")
    out = binary.cumdev.screen(by="g", score="s", response="r", weight="w")
    assert set(out["variance"].to_list()) == {"bernoulli"}
    explicit = binary.cumdev.screen(
        by="g", score="s", response="r", weight="w", variance="bernoulli"
    )
    close(
        out.sort("g")["kuiper_z"].fill_null(np.nan).to_numpy(),
        explicit.sort("g")["kuiper_z"].fill_null(np.nan).to_numpy(),
        "auto == bernoulli",
    )
    # One non-binary response anywhere in the frame switches auto to empirical.
    nudged = binary.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(0.5).otherwise(pl.col("r")).alias("r")
    )
    out = nudged.cumdev.screen(by="g", score="s", response="r", weight="w")
    assert set(out["variance"].to_list()) == {"empirical"}
    check_screen(nudged, out, "g", "w", "auto")


def test_screen_unweighted_equals_unit_weights(make_frame):
    df = make_frame(22, 600, response="count", weights="none")
    out = df.cumdev.screen(by="g", score="s", response="r").sort("g")
    ones = df.with_columns(pl.lit(1.0).alias("one"))
    unit = ones.cumdev.screen(by="g", score="s", response="r", weight="one").sort("g")
    for name in ("kuiper", "ks", "delta", "sigma", "kuiper_z"):
        close(
            out[name].fill_null(np.nan).to_numpy(),
            unit[name].fill_null(np.nan).to_numpy(),
            name,
        )


def test_screen_by_two_columns(make_frame):
    df = make_frame(23, 1200, response="continuous", weights="float")
    out = df.cumdev.screen(by=["g", "h"], score="s", response="r", weight="w")
    check_screen(df, out, ["g", "h"], "w", "auto")


@pytest.mark.slow
def test_screen_lazy_gives_lazy_and_same_numbers(make_frame):
    df = make_frame(24, 900, response="bernoulli", weights="int", scores="mixed")
    eager = df.cumdev.screen(by="g", score="s", response="r", weight="w")
    lazy = df.lazy().cumdev.screen(by="g", score="s", response="r", weight="w")
    assert isinstance(lazy, pl.LazyFrame)
    for engine in ("auto", "streaming"):
        collected = lazy.collect(engine=engine)
        assert collected.columns == eager.columns
        assert collected["g"].to_list() == eager["g"].to_list()
        check_screen(df, collected, "g", "w", "auto")
        for name in STATS:
            close(
                collected[name].fill_null(np.nan).to_numpy(),
                eager[name].fill_null(np.nan).to_numpy(),
                f"{engine}: {name}",
            )


def test_screen_lazy_from_a_longer_query(make_frame):
    # The frame reaching screen is itself a lazy query (filter + derived column).
    df = make_frame(25, 900, response="count", weights="float")
    query = df.lazy().filter(pl.col("s") < 0.9).with_columns((pl.col("r") * 2).alias("r2"))
    out = query.cumdev.screen(by="g", score="s", response="r2", weight="w").collect()
    sub = df.filter(pl.col("s") < 0.9).with_columns((pl.col("r") * 2).alias("r"))
    check_screen(sub, out, "g", "w", "auto")


def test_screen_sigma_zero_keeps_rows_with_notes(make_frame):
    # Constant responses: every bin has Rt = 1 (Bernoulli) so sigma = 0 for
    # every group and the normalized statistics are undefined.
    df = make_frame(26, 300, response="bernoulli", weights="float").with_columns(
        pl.lit(1.0).alias("r")
    )
    out = df.cumdev.screen(by="g", score="s", response="r", weight="w")
    assert out.height == df["g"].n_unique()
    for row in out.iter_rows(named=True):
        assert row["sigma"] == 0.0
        assert row["kuiper"] == pytest.approx(0.0, abs=TINY)
        for name in ("kuiper_z", "ks_z", "kuiper_p", "ks_p", "kuiper_q"):
            assert row[name] is None
        assert row["note"]
    check_screen(df, out, "g", "w", "auto")
    # Same with the empirical variance (every V_k = 0).
    out = df.cumdev.screen(by="g", score="s", response="r", weight="w", variance="empirical")
    check_screen(df, out, "g", "w", "empirical")


def test_screen_single_score_group_has_note(make_frame):
    df = make_frame(27, 500, response="bernoulli", weights="float")
    out = df.cumdev.screen(by="g", score="s", response="r", weight="w")
    row = out.filter(pl.col("g") == "single").row(0, named=True)
    assert row["n_scores"] == 1
    assert row["kuiper_z"] is None and row["ks_z"] is None
    assert row["kuiper_p"] is None and row["kuiper_q"] is None
    assert row["note"]
    check_screen(df, out, "g", "w", "auto")


# --------------------------------------------------------------------------
# p-value functions
# --------------------------------------------------------------------------

Z_GRID = [0.05, 0.2, 0.4, 0.7, 0.9, 0.99, 1.0, 1.01, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0,
          6.0, 7.5, 8.0, 8.5, 10.0, 12.0, 15.0, 20.0, 25.0, 30.0]  # fmt: skip


@pytest.mark.parametrize(
    ("library", "naive"),
    [
        (polars_cumdev.ks_pvalue, ref.ks_pvalue_naive),
        (polars_cumdev.kuiper_pvalue, ref.kuiper_pvalue_naive),
    ],
    ids=["ks", "kuiper"],
)
@pytest.mark.slow
def test_pvalues_match_direct_summation(library, naive):
    for z in Z_GRID:
        p = library(z)
        assert isinstance(p, float), f"scalar in, float out (got {type(p).__name__})"
        close(p, naive(z), f"p at z={z}")
        assert 0.0 < p <= 1.0
    # log10 p-values, also far beyond float64 underflow of p itself.
    for z in [*Z_GRID, 40.0, 60.0]:
        close(library(z, log10=True), naive(z, log10=True), f"log10 p at z={z}")
    # arrays in, arrays out
    zs = np.array(Z_GRID)
    ps = library(zs)
    assert isinstance(ps, np.ndarray) and ps.shape == zs.shape
    close(ps, [naive(z) for z in Z_GRID], "array p")
    logs = library(zs, log10=True)
    assert isinstance(logs, np.ndarray)
    close(logs, [naive(z, log10=True) for z in Z_GRID], "array log10 p")


def test_pvalues_are_monotone_and_at_the_mean():
    zs = np.linspace(0.3, 12.0, 400)
    for library in (polars_cumdev.ks_pvalue, polars_cumdev.kuiper_pvalue):
        ps = np.asarray(library(zs))
        assert np.all(np.diff(ps) <= 0)  # p rounds to exactly 1 for small z
        assert np.all(np.diff(ps[zs >= 1.0]) < 0)
        assert np.all(ps > 0)
    # Sanity against the means of the limiting laws: p at the mean is ~0.4-0.5.
    assert 0.3 < polars_cumdev.ks_pvalue(math.sqrt(math.pi / 2)) < 0.6
    assert 0.3 < polars_cumdev.kuiper_pvalue(2 * math.sqrt(2 / math.pi)) < 0.6


def test_pure_bins_with_fractional_weights_have_sigma_zero(pure_bins):
    # Every bin holds the rows of one score only and is pure (all 0 or all 1):
    # Rt_k is exactly 0 or 1 and sigma is exactly 0. Fractional weights make
    # running-total differences inexact, which must not leak in.
    df = pure_bins(31)
    for variance in ("auto", "empirical"):
        out = df.cumdev.screen(by="g", score="s", response="r", weight="w", variance=variance)
        assert out["sigma"].to_list() == [0.0, 0.0, 0.0]
        assert out["kuiper_z"].null_count() == 3
        assert out["note"].null_count() == 0
        check_screen(df, out, "g", "w", variance)
    curve = df.cumdev.curve(pl.col("g") == "a", score="s", response="r", weight="w")
    assert curve["sigma"][0] == 0.0
    assert set(curve["full_mean"].drop_nulls().to_list()) == {0.0, 1.0}


@pytest.mark.slow
def test_bins_stay_accurate_deep_into_a_large_weighted_population():
    # Heavy-tailed weights, and responses with a spread of 1e4 at low scores
    # but of 1 at high scores: the running totals of W R^2 reach 1e12 before
    # the bins of the high scores start, so bin sums taken as differences of
    # running totals lose digits unless the running totals are compensated.
    # (Each bin on its own is well conditioned: its variance is not small
    # next to its squared mean.)
    rng = np.random.default_rng(32)
    m = 20_000
    s = rng.random(m)
    df = pl.DataFrame(
        {
            "g": np.where(s > 0.9, np.where(rng.random(m) < 0.05, "sub", "rest"), "rest"),
            "s": s,
            "r": rng.normal(size=m) * np.where(s < 0.5, 1e4, 1.0),
            "w": rng.lognormal(0.0, 1.0, m),
        }
    )
    out = df.cumdev.screen(by="g", score="s", response="r", weight="w", variance="empirical")
    check_screen(df, out, "g", "w", "empirical")


def test_log10_pvalues_stay_finite_where_p_underflows():
    # One group whose responses are all 1 while the rest follow the score:
    # its z is far beyond the point (about 38) where p underflows to 0.
    rng = np.random.default_rng(33)
    m = 40_000
    s = rng.random(m)
    g = np.where(rng.random(m) < 0.3, "strong", "rest")
    r = np.where(g == "strong", 1.0, (rng.random(m) < s).astype(np.float64))
    df = pl.DataFrame({"g": g, "s": s, "r": r})
    out = df.cumdev.screen(by="g", score="s", response="r")
    strong = out.filter(pl.col("g") == "strong").row(0, named=True)
    assert strong["kuiper_z"] > 60
    assert strong["kuiper_p"] == 0.0
    for row in out.iter_rows(named=True):
        for name, naive in (("kuiper", ref.kuiper_pvalue_naive), ("ks", ref.ks_pvalue_naive)):
            expected = naive(row[f"{name}_z"], log10=True)
            close(row[f"{name}_log10p"], expected, f"{row['g']}: {name}_log10p")
            assert math.isfinite(row[f"{name}_log10p"])
            if row[f"{name}_p"] > 0:
                close(10.0 ** row[f"{name}_log10p"], row[f"{name}_p"], f"{name}: 10^log10p")
