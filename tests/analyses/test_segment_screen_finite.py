"""``screen(by=segments(...))`` gives the finite-sample p-values of ``screen(by=)`` (issue 36).

A family of one feature at depth 1 holds exactly the groups of ``screen(by=feature)``, so
each segment must get that group's p-values and ``p_method``: the same null (the full
population's bin means at the segment's scores, held fixed), the same criterion and the
same draws. The in-process screen's simulated p-values are themselves checked against a
naive transcription of the redraws (tests/analyses/test_finite_sample_pvalues.py), the
resampled ones (real responses, soft labels) against reference_resampled
(tests/analyses/test_screen_resampled.py). On the code before these tests the segment screen
said "asymptotic" for every row.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from engine_cases import rare_groups

import polars_cumdev as pc
from polars_cumdev.multicalibration.screens import screen_segments


def _both(df: pl.DataFrame, weight: str | None) -> pl.DataFrame:
    family = pc.segments(["g"], depth=1, min_rows=1, levels=df["g"].n_unique())
    segmented = screen_segments(df, family, "s", "r", weight).collect()
    grouped = pc.screen(df, "g", "s", "r", weight)
    grouped = grouped.collect() if isinstance(grouped, pl.LazyFrame) else grouped
    assert segmented.height == grouped.height
    columns = ["g", "kuiper_p", "ks_p", "p_method"]
    return grouped.select(columns).join(segmented.select(columns), on="g", suffix="_seg")


@pytest.mark.slow
@pytest.mark.parametrize("weight", ["w", None])
@pytest.mark.parametrize("seed", [3, 8])
def test_one_feature_segments_get_the_grouped_screens_pvalues(seed, weight):
    both = _both(rare_groups(seed), weight)
    assert (both["p_method"] == "simulated").sum() >= 2  # the case exercises the redraws
    assert both["p_method"].to_list() == both["p_method_seg"].to_list()
    for column in ("kuiper_p", "ks_p"):
        np.testing.assert_allclose(both[f"{column}_seg"], both[column], rtol=1e-12, atol=0)


def _real(seed: int, kind: str) -> pl.DataFrame:
    """40 groups of 10-30 rows, uniform scores, weights 0.5 / 1 / 2.5: log-normal responses
    (sigma 1.5) scaled by the score, or soft labels near 0 (Beta(0.3, b), mean 0.01-0.03),
    as tests/analyses/test_screen_resampled.py draws them; every fifth group's responses
    doubled, so that some groups are candidates. ``"ties"``: :func:`rare_groups` (scores
    rounded to 1/1000, Zipf-sized groups, log-normal weights) with responses 0.25 and 0.75."""
    if kind == "ties":
        return rare_groups(seed).with_columns(pl.col("r") * 0.5 + 0.25)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(10, 31, 40)
    g = np.repeat(np.arange(40), sizes)
    s = rng.random(g.size)
    if kind == "lognormal":
        r = (0.5 + s) * rng.lognormal(0.0, 1.5, g.size)
    else:
        r = rng.beta(0.3, 30.0 * (1.5 - s), g.size)
    r = np.where(g % 5 == 0, 2.0 * r, r)
    w = rng.choice([0.5, 1.0, 2.5], g.size)
    return pl.DataFrame({"g": [f"g{k:02d}" for k in g], "s": s, "r": r, "w": w})


@pytest.mark.parametrize("weight", ["w", None])
@pytest.mark.parametrize(("kind", "seed"), [("lognormal", 5), ("soft", 8), ("ties", 3)])
def test_real_responses_get_the_grouped_screens_resampled_pvalues(kind, seed, weight):
    """Real responses and soft labels: the segments are resampled as the groups are (the same
    bins, criterion, seed and draws), so p-values and p_method agree to 1e-12. On the code
    before this test the segment screen said "asymptotic" for every row."""
    both = _both(_real(seed, kind), weight)
    assert (both["p_method"] == "resampled").sum() >= 2  # the case exercises the redraws
    assert "asymptotic" in set(both["p_method"])  # and the rows left asymptotic
    assert both["p_method"].to_list() == both["p_method_seg"].to_list()
    for column in ("kuiper_p", "ks_p"):
        np.testing.assert_allclose(both[f"{column}_seg"], both[column], rtol=1e-12, atol=0)


def test_resampled_segments_do_not_depend_on_the_rows_order():
    """A depth-2 family (a row in several candidate segments, resampled at both depths):
    shuffled rows and weights doubled give the same p-values and p_method, exactly (each
    segment's draws are seeded by its sorted scores, picked in proportion to weight)."""
    df = _real(3, "ties").with_columns(
        (pl.col("g").str.slice(1, 2).cast(pl.Int64) % 8).alias("a"),
        (pl.col("g").str.slice(1, 2).cast(pl.Int64) // 8 % 3).alias("b"),
    )
    family = pc.segments(["a", "b"], depth=2, min_rows=1, levels=10)
    columns = ["a", "b", "depth", "kuiper_p", "ks_p", "p_method"]
    first = screen_segments(df, family, "s", "r", "w").collect().select(columns)
    moved = df.sample(fraction=1.0, shuffle=True, seed=4).with_columns(pl.col("w") * 2.0)
    again = screen_segments(moved, family, "s", "r", "w").collect().select(columns)
    drawn = first.filter(pl.col("p_method") == "resampled")
    assert set(drawn["depth"]) == {1, 2}  # the case exercises the redraws at both depths
    both = first.join(again, on=["a", "b", "depth"], nulls_equal=True, suffix="_again")
    assert both.height == first.height == again.height
    assert both["p_method"].to_list() == both["p_method_again"].to_list()
    for column in ("kuiper_p", "ks_p"):
        assert both[column].to_list() == both[f"{column}_again"].to_list()
