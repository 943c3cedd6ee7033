"""The paired examples: deterministic, and showing what their docstrings promise."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from polars_cumdev import datasets


def test_paired_synthetic_is_deterministic_with_ties() -> None:
    a, b = datasets.paired_synthetic(), datasets.paired_synthetic()
    assert a.equals(b)
    assert a.columns == [
        "score",
        "first",
        "second",
        "weight",
        "first_expected",
        "second_expected",
    ]
    assert a.height == 4_000 and a["score"].n_unique() == 1_000
    assert set(a["first"].unique()) <= {0, 1}
    assert not a.equals(datasets.paired_synthetic(seed=1))
    with pytest.raises(ValueError, match="`m`"):
        datasets.paired_synthetic(n=10, m=20)


def test_paired_synthetic_reproduces_the_papers_finding() -> None:
    # Figure ex0 of the paper: the Kuiper range is many sigma while the
    # average difference C_m is small next to it, and the exact curve is flat
    # around the median score.
    df = datasets.paired_synthetic()
    row = df.cumdev.paired("score", "first", "second", "weight").row(0, named=True)
    assert row["kuiper_z"] > 5.0
    assert row["kuiper_p"] < 1e-5
    assert abs(row["delta"]) < 0.25 * row["kuiper"]
    assert row["deviation"] > 0.0 and row["to_score"] < 0.45  # the rise comes first
    exact = df.cumdev.paired_curve(
        "score", "first_expected", "second_expected", "weight", variance="bernoulli"
    ).filter(pl.col("k") > 0)
    c = exact["cumdiff"].to_numpy()
    s = exact["score"].to_numpy()
    middle = c[(s > 0.45) & (s < 0.55)]
    assert np.ptp(middle) < 1e-12  # flat where the two populations agree
    assert c[s < 0.45].max() == pytest.approx(middle[0], abs=1e-12)  # rises to it
    assert abs(c[-1]) < 0.01 * np.ptp(c)


def test_paired_models_is_deterministic() -> None:
    a = datasets.paired_models(n=5_000)
    assert a.equals(datasets.paired_models(n=5_000))
    assert a.columns == ["county", "log10_income", "WGTP", "has_internet", "model_a", "model_b"]
    for column in ("model_a", "model_b"):
        assert a[column].min() > 0.0 and a[column].max() < 1.0


@pytest.mark.slow
def test_paired_models_finds_cedar_and_the_middle_incomes() -> None:
    df = datasets.paired_models()
    args = ("log10_income", "model_a", "model_b", "WGTP")
    by_county = df.cumdev.paired(*args, by="county", variance="bernoulli")
    top = by_county.row(0, named=True)
    assert top["county"] == "Cedar"
    assert top["kuiper_q"] < 1e-6 and top["deviation"] > 0.2
    assert top["from_score"] < np.median(df["log10_income"])
    overall = df.cumdev.paired(*args, variance="bernoulli").row(0, named=True)
    assert overall["kuiper_q"] < 1e-6
    assert 4.0 <= overall["from_score"] < overall["to_score"] <= 4.6
    assert overall["deviation"] > 0.0
