"""``cumdev.curve`` (the drill-down frame) against the naive reference."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import reference as ref
from numpy.testing import assert_allclose

import polars_cumdev  # noqa: F401  (registers the namespace)

RTOL = 1e-9
TINY = 1e-15

CURVE_COLUMNS = ("k", "a", "k_over_n", "score", "cumdiff", "full_mean", "sigma")


def close(actual, expected, what: str) -> None:
    assert_allclose(
        np.asarray(actual, dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=RTOL,
        atol=TINY,
        err_msg=what,
    )


def check_curve(df, out, mask, weight, variance, fraction) -> dict:
    """Hold the curve frame ``out`` to the reference; return the reference."""
    assert isinstance(out, pl.DataFrame)
    missing = set(CURVE_COLUMNS) - set(out.columns)
    assert not missing, f"curve output lacks columns {sorted(missing)}"
    s = df["s"].to_numpy().astype(np.float64)
    r = df["r"].to_numpy().astype(np.float64)
    w = None if weight is None else df[weight].to_numpy().astype(np.float64)
    expect = ref.subpop_vs_full(s, r, w, mask, variance, fraction=fraction)
    kept = expect["kept"]
    assert kept == math.floor(expect["n"] * fraction)

    assert out.height == kept + 1, "one origin row plus one row per kept point"
    assert out["k"].to_list() == list(range(kept + 1))
    close(out["a"].to_numpy(), expect["A"], "a (A_k)")
    close(out["k_over_n"].to_numpy(), np.arange(kept + 1) / kept, "k_over_n")
    close(out["cumdiff"].to_numpy(), expect["C"], "cumdiff (C_k)")
    assert out["score"][0] is None and out["full_mean"][0] is None
    # scores are copied, not computed: they must be exact
    assert out["score"][1:].to_list() == expect["S"][:kept].tolist()
    close(out["full_mean"][1:].to_numpy(), expect["Rt"][:kept], "full_mean (Rt_k)")
    if "response_mean" in out.columns:
        close(out["response_mean"][1:].to_numpy(), expect["R"][:kept], "response_mean (R'_k)")
    if "weight" in out.columns:
        close(out["weight"][1:].to_numpy(), expect["W"][:kept], "weight (W'_k)")
    sigma = out["sigma"].to_numpy()
    assert np.all(sigma == sigma[0]), "sigma is the same on every row"
    close(sigma[0], expect["sigma"], "sigma")
    return expect


# (seed, response, weights, scores, group, variance)
CASES = [
    (31, "bernoulli", "float", "grid", "mid", "auto"),
    (32, "bernoulli", "none", "grid", "small", "bernoulli"),
    (33, "bernoulli", "int", "mixed", "big", "empirical"),
    (34, "count", "float", "grid", "tiny", "auto"),
    (35, "count", "none", "continuous", "big", "auto"),
    (36, "continuous", "int", "mixed", "mid", "empirical"),
    (37, "continuous", "float", "grid", "small", "auto"),
]


@pytest.mark.parametrize("fraction", [1.0, 0.5, 0.3])
@pytest.mark.parametrize(("seed", "response", "weights", "scores", "group", "variance"), CASES)
@pytest.mark.slow
def test_curve_matches_reference(
    make_frame, seed, response, weights, scores, group, variance, fraction
):
    df = make_frame(seed, 900, response=response, weights=weights, scores=scores)
    weight = None if weights == "none" else "w"
    mask = df["g"].to_numpy() == group
    out = df.cumdev.curve(
        subpop=pl.col("g") == group,
        score="s",
        response="r",
        weight=weight,
        variance=variance,
        fraction=fraction,
    )
    check_curve(df, out, mask, weight, variance, fraction)


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_curve_two_distinct_scores(make_frame, fraction):
    # Group "pair" has two distinct scores: one midpoint; q = 1/2 keeps one point.
    df = make_frame(42, 500, response="continuous", weights="float")
    out = df.cumdev.curve(
        subpop=pl.col("g") == "pair", score="s", response="r", weight="w", fraction=fraction
    )
    expect = check_curve(df, out, df["g"].to_numpy() == "pair", "w", "auto", fraction)
    assert expect["n"] == 2


def test_curve_single_distinct_score(make_frame):
    df = make_frame(38, 400, response="bernoulli", weights="float")
    out = df.cumdev.curve(subpop=pl.col("g") == "single", score="s", response="r", weight="w")
    expect = check_curve(df, out, df["g"].to_numpy() == "single", "w", "auto", 1.0)
    assert expect["n"] == 1 and out.height == 2


def test_curve_subpop_as_boolean_column(make_frame):
    df = make_frame(39, 700, response="count", weights="float").with_columns(
        ((pl.col("g") == "small") | (pl.col("h") == "x") & (pl.col("g") == "mid")).alias("chosen")
    )
    mask = df["chosen"].to_numpy()
    for fraction in (1.0, 0.5):
        out = df.cumdev.curve(subpop="chosen", score="s", response="r", weight="w",
                              fraction=fraction)  # fmt: skip
        check_curve(df, out, mask, "w", "auto", fraction)


@pytest.mark.slow
def test_curve_lazy_gives_lazy_and_same_numbers(make_frame):
    df = make_frame(40, 800, response="continuous", weights="int", scores="mixed")
    mask = df["g"].to_numpy() == "mid"
    kwargs = {"score": "s", "response": "r", "weight": "w", "fraction": 0.5}
    eager = df.cumdev.curve(subpop=pl.col("g") == "mid", **kwargs)
    lazy = df.lazy().cumdev.curve(subpop=pl.col("g") == "mid", **kwargs)
    assert isinstance(lazy, pl.LazyFrame)
    for engine in ("auto", "streaming"):
        collected = lazy.collect(engine=engine)
        assert collected.columns == eager.columns
        check_curve(df, collected, mask, "w", "auto", 0.5)


def test_curve_agrees_with_screen(make_frame):
    # The curve of a group and that group's screen row describe the same C_k.
    df = make_frame(41, 900, response="bernoulli", weights="float", scores="mixed")
    screen = df.cumdev.screen(by="g", score="s", response="r", weight="w")
    for group in ("big", "small", "tiny"):
        row = screen.filter(pl.col("g") == group).row(0, named=True)
        cur = df.cumdev.curve(subpop=pl.col("g") == group, score="s", response="r", weight="w")
        c = cur["cumdiff"].to_numpy()
        close(c.max() - c.min(), row["kuiper"], f"{group}: kuiper")
        close(np.abs(c[1:]).max(), row["ks"], f"{group}: ks")
        close(c[-1], row["delta"], f"{group}: delta")
        close(cur["sigma"][0], row["sigma"], f"{group}: sigma")
