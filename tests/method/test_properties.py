"""Invariances the method guarantees, checked with Hypothesis.

Data are drawn on a coarse dyadic grid so that exact ties are frequent and
sums of weights/responses stay well conditioned.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import reference as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import polars_cumdev  # noqa: F401  (registers the namespace)

RTOL = 1e-9
TINY = 1e-15

SETTINGS = settings(
    deadline=None,
    max_examples=40,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SCORE_GRID = [i / 8 for i in range(9)]
STATS = ("kuiper", "ks", "delta", "sigma", "kuiper_z", "ks_z")
LOCATION = ("from_score", "to_score", "share", "deviation")


def close(actual, expected, what: str, rtol: float = RTOL) -> None:
    assert_allclose(
        np.asarray(actual, dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=rtol,
        atol=TINY,
        err_msg=what,
    )


@st.composite
def frames(draw, binary: bool | None = None) -> pl.DataFrame:
    """Small frames: groups a/b/c (a always present), grid scores, weights w."""
    n = draw(st.integers(4, 60))
    rows = st.lists
    s = draw(rows(st.sampled_from(SCORE_GRID), min_size=n, max_size=n))
    g = ["a", *draw(rows(st.sampled_from(["a", "b", "c"]), min_size=n - 1, max_size=n - 1))]
    if binary is None:
        binary = draw(st.booleans())
    values = st.sampled_from([0.0, 1.0]) if binary else st.integers(0, 9).map(float)
    r = draw(rows(values, min_size=n, max_size=n))
    w = draw(
        rows(
            st.floats(0.125, 8.0, allow_nan=False, allow_infinity=False),
            min_size=n,
            max_size=n,
        )
    )
    return pl.DataFrame({"g": g, "s": s, "r": r, "w": w})


def screen(df, weight="w", variance="auto", response="r") -> pl.DataFrame:
    return df.cumdev.screen(
        by="g", score="s", response=response, weight=weight, variance=variance
    ).sort("g")


def numbers(out: pl.DataFrame, name: str) -> np.ndarray:
    return out[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


# --------------------------------------------------------------------------
# Library invariances
# --------------------------------------------------------------------------


@pytest.mark.slow
@SETTINGS
@given(df=frames(), seed=st.integers(0, 2**32 - 1))
def test_row_order_does_not_matter(df, seed):
    """The same bits whatever the row order (issue 25, item 9), on both engines."""
    permuted = df[np.random.default_rng(seed).permutation(df.height).tolist()]
    for engine in ("polars", "kernel"):
        before = df.cumdev.screen("g", "s", "r", "w", engine=engine).sort("g")
        after = permuted.cumdev.screen("g", "s", "r", "w", engine=engine).sort("g")
        assert before.equals(after), engine


@pytest.mark.slow
@SETTINGS
@given(df=frames(), factor=st.sampled_from([1e-3, 0.37, 2.0, 10.0, 1234.5]))
def test_scaling_all_weights_changes_nothing(df, factor):
    scaled = df.with_columns(pl.col("w") * factor)
    before, after = screen(df), screen(scaled)
    for name in (*STATS, *LOCATION):
        close(numbers(after, name), numbers(before, name), name)


@pytest.mark.slow
@SETTINGS
@given(df=frames(binary=False), shift=st.integers(-40, 40).map(lambda x: x / 4))
def test_adding_a_constant_to_responses_empirical(df, shift):
    moved = df.with_columns(pl.col("r") + shift)
    before = screen(df, variance="empirical")
    after = screen(moved, variance="empirical")
    for name in ("kuiper", "ks", "delta", "sigma"):
        close(numbers(after, name), numbers(before, name), name)


@pytest.mark.slow
@SETTINGS
@given(df=frames(), group=st.sampled_from(["a", "b", "c"]))
def test_remark_1_kuiper_is_invariant_to_where_accumulation_starts(df, group):
    if group not in df["g"].to_list():
        group = "a"
    cur = df.cumdev.curve(subpop=pl.col("g") == group, score="s", response="r", weight="w")
    row = screen(df).filter(pl.col("g") == group).row(0, named=True)
    c = cur["cumdiff"].to_numpy()
    a = np.diff(cur["a"].to_numpy())
    rprime = cur["response_mean"][1:].to_numpy() if "response_mean" in cur.columns else None
    rt = cur["full_mean"][1:].to_numpy()
    n = c.size - 1
    for start in range(n + 1):
        shifted = c - c[start]
        close(shifted.max() - shifted.min(), row["kuiper"], f"D^({start}) from the curve")
        if rprime is None:
            continue
        # Equations (14)-(15) summed directly: F^(l)_k - Ft^(l)_k.
        direct = np.empty(n + 1)
        for k in range(n + 1):
            forward = sum(a[j - 1] * (rprime[j - 1] - rt[j - 1]) for j in range(start + 1, k + 1))
            backward = sum(a[j - 1] * (rprime[j - 1] - rt[j - 1]) for j in range(k + 1, start + 1))
            direct[k] = forward - backward
        close(direct.max() - direct.min(), row["kuiper"], f"D^({start}) by (14)-(15)", 1e-8)


# --------------------------------------------------------------------------
# Merging ties (reference and library)
# --------------------------------------------------------------------------


def premerge(df: pl.DataFrame, group: str) -> pl.DataFrame:
    """Replace each set of tied rows of ``group`` by one row (summed weight,
    weighted-average response); every other row is kept as it is."""
    members = df.filter(pl.col("g") == group)
    merged = (
        members.group_by("s", maintain_order=True)
        .agg(
            pl.lit(group).alias("g"),
            ((pl.col("w") * pl.col("r")).sum() / pl.col("w").sum()).alias("r"),
            pl.col("w").sum().alias("w"),
        )
        .select(df.columns)
    )
    return pl.concat([df.filter(pl.col("g") != group), merged])


def arrays(df: pl.DataFrame, group: str):
    return (
        df["s"].to_numpy(),
        df["r"].to_numpy(),
        df["w"].to_numpy(),
        df["g"].to_numpy() == group,
    )


@pytest.mark.slow
@SETTINGS
@given(df=frames(binary=True))
def test_merging_ties_by_hand_changes_only_the_tie_factor(df):
    merged = premerge(df, "a")
    before = ref.subpop_vs_full(*arrays(df, "a"), "bernoulli")
    after = ref.subpop_vs_full(*arrays(merged, "a"), "bernoulli")
    # The merged data have the same bin sums of W and W R, hence the same
    # Rt_k, the same points and the same curve.
    close(after["S"], before["S"], "S'")
    close(after["W"], before["W"], "W'")
    close(after["R"], before["R"], "R'")
    close(after["Rt"], before["Rt"], "Rt")
    close(after["C"], before["C"], "C")
    for name in ("kuiper", "ks", "delta"):
        close(after[name], before[name], name)
    # Pre-merged points have a single row each: f = 1.
    close(after["f"], np.ones(after["n"]), "f after merging")
    # sigma (Bernoulli) with the tie factor taken out of the original.
    a, rt, f = before["a"], before["Rt"], before["f"]
    close(after["sigma"] ** 2, np.sum(a**2 * rt * (1 - rt)), "sigma^2 without f")
    close(before["sigma"] ** 2, np.sum(a**2 * rt * (1 - rt) * f), "sigma^2 with f")

    # The library obeys the same identity.
    lib_before = screen(df, variance="bernoulli").filter(pl.col("g") == "a").row(0, named=True)
    lib_after = screen(merged, variance="bernoulli").filter(pl.col("g") == "a").row(0, named=True)
    for name in ("kuiper", "ks", "delta"):
        close(lib_after[name], lib_before[name], f"library {name}")
    close(lib_after["sigma"], after["sigma"], "library sigma after merging")


@SETTINGS
@given(df=frames(binary=False))
@pytest.mark.slow
def test_merging_ties_empirical_curve_unchanged(df):
    # With the empirical variance the bins' V_k change (the pre-merged row
    # carries less spread), but the curve itself cannot.
    merged = premerge(df, "a")
    before = ref.subpop_vs_full(*arrays(df, "a"), "empirical")
    after = ref.subpop_vs_full(*arrays(merged, "a"), "empirical")
    close(after["C"], before["C"], "C")
    close(after["A"], before["A"], "A")
    for name in ("kuiper", "ks", "delta"):
        close(after[name], before[name], name)
