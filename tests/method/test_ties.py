"""The tie merge (method.md 1.1) against the naive transcription, and its exact cases.

``merge_ties`` takes each tie's sums as differences of compensated running
sums over all groups' rows; these tests check that the differences are as
good as summing the tie directly, that a score occurring once keeps its own
weight and response bit for bit, and that the result does not depend on
where the groups' rows sit in the frame.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import reference as ref

from polars_cumdev.method import _names as nm
from polars_cumdev.method.ties import merge_ties, sort_by_score


def _rows(rng: np.random.Generator, n: int) -> pl.DataFrame:
    keys = rng.choice(["a", "b", "c", None], size=n, p=[0.5, 0.3, 0.15, 0.05])
    return pl.DataFrame(
        {
            "g": pl.Series(keys, dtype=pl.String),
            nm.SCORE: rng.integers(0, 40, size=n) / 8.0,
            nm.RESPONSE: np.where(
                rng.random(n) < 0.3, rng.normal(2.0, 1.0, n), rng.random(n) < 0.5
            ),
            nm.WEIGHT: rng.lognormal(0.0, 1.0, size=n),
        },
        schema_overrides={nm.RESPONSE: pl.Float64},
    )


def _merged(rows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return merge_ties(sort_by_score(rows.lazy()), keys).collect()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow
def test_merged_points_match_the_transcription_per_group(seed: int) -> None:
    rows = _rows(np.random.default_rng(seed), 3_000)
    merged = _merged(rows, ["g"])
    for (key,), group in rows.group_by("g"):
        s, w, r, f, count = ref.merge_ties(
            group[nm.SCORE].to_numpy(), group[nm.RESPONSE].to_numpy(), group[nm.WEIGHT].to_numpy()
        )
        got = merged.filter(pl.col("g").eq_missing(key))
        np.testing.assert_array_equal(got[nm.SCORE].to_numpy(), s)
        np.testing.assert_array_equal(got[nm.ROWS].to_numpy(), count)
        for column, expected in ((nm.WEIGHT, w), (nm.RESPONSE, r), (nm.TIE, f)):
            np.testing.assert_allclose(got[column].to_numpy(), expected, rtol=1e-13, atol=0)


def test_each_group_is_contiguous_and_increasing() -> None:
    merged = _merged(_rows(np.random.default_rng(7), 2_000), ["g"])
    runs = merged.select(pl.col("g").rle_id()).to_series()
    assert runs.n_unique() == merged["g"].n_unique()  # one run per group
    increasing = merged.select((pl.col(nm.SCORE).diff().over("g") > 0).fill_null(True).all())
    assert increasing.item()


def test_single_rows_and_constant_ties_are_exact() -> None:
    # A large running total in front: every later tie is a small difference of
    # large running sums, where rounding would show.
    big = pl.DataFrame(
        {
            "g": ["z"] * 3,
            nm.SCORE: [0.0, 0.0, 0.5],
            nm.RESPONSE: [0.3, 0.7, 1.0],
            nm.WEIGHT: [1e12, 3e11, 7e10],
        }
    )
    small = pl.DataFrame(
        {
            "g": ["a", "a", "a", "a", "b"],
            nm.SCORE: [1.0, 2.0, 2.0, 3.0, 2.0],
            nm.RESPONSE: [0.1, 1.0, 1.0, 0.7, 0.9],
            nm.WEIGHT: [0.1, 0.3, 0.7, 1e-9, 0.2],
        }
    )
    merged = _merged(pl.concat([big, small]), ["g"]).filter(pl.col("g") != "z")
    a = merged.filter(pl.col("g") == "a")
    assert a[nm.WEIGHT].to_list()[0] == 0.1 and a[nm.RESPONSE].to_list()[0] == 0.1
    assert a[nm.WEIGHT].to_list()[2] == 1e-9 and a[nm.RESPONSE].to_list()[2] == 0.7
    assert a[nm.TIE].to_list()[0] == 1.0 and a[nm.TIE].to_list()[2] == 1.0
    assert a[nm.RESPONSE].to_list()[1] == 1.0  # the tie of two ones
    assert a[nm.WEIGHT].to_list()[1] == pytest.approx(1.0, rel=1e-15)
    assert merged.filter(pl.col("g") == "b")[nm.WEIGHT].item() == 0.2


@pytest.mark.slow
def test_tie_sums_deep_into_a_large_frame_are_accurate() -> None:
    rng = np.random.default_rng(11)
    n = 400_000
    rows = pl.DataFrame(
        {
            "g": rng.integers(0, 3, size=n),
            nm.SCORE: rng.integers(0, 50_000, size=n) / 7.0,
            nm.RESPONSE: rng.normal(0.0, 1.0, size=n),
            nm.WEIGHT: rng.lognormal(3.0, 2.0, size=n),
        }
    )
    merged = _merged(rows, ["g"]).filter(pl.col(nm.ROWS) > 1).tail(200)
    exact = (
        rows.with_columns((pl.col(nm.WEIGHT) * pl.col(nm.RESPONSE)).alias("wr"))
        .group_by("g", nm.SCORE)
        .agg(pl.col(nm.WEIGHT), pl.col("wr"))
    )
    joined = merged.join(exact, on=["g", nm.SCORE])
    for w, r, ws, wrs in joined.select(nm.WEIGHT, nm.RESPONSE, nm.WEIGHT + "_right", "wr").rows():
        total = math.fsum(ws)
        assert w == pytest.approx(total, rel=4e-16)
        assert r == pytest.approx(math.fsum(wrs) / total, rel=1e-13, abs=1e-13)


def test_row_order_changes_nothing_but_the_last_bits() -> None:
    rows = _rows(np.random.default_rng(3), 2_000)
    one = _merged(rows, ["g"])
    two = _merged(rows.sample(fraction=1.0, shuffle=True, seed=5), ["g"])
    assert one.select("g", nm.SCORE, nm.ROWS).equals(two.select("g", nm.SCORE, nm.ROWS))
    for column in (nm.WEIGHT, nm.RESPONSE, nm.TIE):
        np.testing.assert_allclose(one[column].to_numpy(), two[column].to_numpy(), rtol=1e-14)


@pytest.mark.parametrize("ties", [True, False])
def test_any_group_order_gives_the_same_points(ties: bool) -> None:
    # The screen regroups string keys by their categorical code (issue 22): the groups
    # may come in another order, each group's points the same bits, contiguous.
    rows = _rows(np.random.default_rng(11), 2_000)
    if not ties:  # every score distinct: the merge's no-tie path
        rows = rows.with_columns(pl.Series(nm.SCORE, np.random.default_rng(12).random(2_000)))
    ordered = sort_by_score(rows.lazy())
    plain = merge_ties(ordered, ["g"]).collect()
    coded = merge_ties(ordered, ["g"], any_group_order=True).collect()
    assert coded.select(pl.col("g").rle_id().max()).item() == 3  # 4 groups, each contiguous
    assert coded.sort("g", nm.SCORE, nulls_last=True).equals(
        plain.sort("g", nm.SCORE, nulls_last=True)
    )
    if not ties:  # each point is its row, exactly
        assert (coded[nm.ROWS] == 1).all() and (coded[nm.TIE] == 1.0).all()
        back = rows.sort("g", nm.SCORE, nulls_last=True)
        mine = coded.sort("g", nm.SCORE, nulls_last=True)
        for column in (nm.SCORE, nm.WEIGHT, nm.RESPONSE):
            assert mine[column].equals(back[column])
