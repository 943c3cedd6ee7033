"""``screen(by=segments(...))`` gives the finite-sample p-values of ``screen(by=)`` (issue 36).

A family of one feature at depth 1 holds exactly the groups of ``screen(by=feature)``, so
each segment must get that group's p-values and ``p_method``: the same null (the full
population's bin means at the segment's scores, held fixed), the same criterion and the
same draws. The in-process screen's simulated p-values are themselves checked against a
naive transcription of the redraws (tests/analyses/test_finite_sample_pvalues.py). On the
code before this test the segment screen said "asymptotic" for every row.
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


def test_continuous_responses_stay_asymptotic():
    df = rare_groups(3).with_columns(pl.col("r") * 0.5 + 0.25)
    both = _both(df, "w")
    assert set(both["p_method_seg"]) == {"asymptotic"}
