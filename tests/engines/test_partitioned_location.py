"""The range-partitioned screen locates the deviation as the one-pass screen does.

The located stretch (``from_score``, ``to_score``, ``share``, ``deviation``)
of :func:`polars_cumdev.engines.partitioned.screen_partitioned` (and of
:func:`~polars_cumdev.engines.partitioned.screen_parquet`) must equal that of
``screen(...)`` to 1e-9 relative, for any cut points: data with
planted deviations that span many ranges (a stretch crossing ranges wins),
that sit inside one narrow score window (one range), groups with no
deviation (nulls), a group with a single score, ties, unit and random
weights, binary and continuous responses. The expected values come from the
in-process screen, whose search is tested against a brute force in
``tests/method/test_location.py``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from engine_cases import assert_same, planted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polars_cumdev.engines.partitioned import screen_parquet, screen_partitioned
from polars_cumdev.method.location import LOCATION_COLUMNS
from polars_cumdev.subpopulation import screen

CASES = [
    (1, "binary", True),
    (2, "binary", False),
    (3, "continuous", True),
    (4, "continuous", False),
]


def expected(df: pl.DataFrame, level: float = 1.0) -> pl.DataFrame:
    # Level 1: every stretch the search finds is stated (these tests are about the search).
    weight = "w" if "w" in df.columns else None
    # finite-sample p-values included: the range-partitioned screen simulates the same groups
    return screen(df, "g", "s", "r", weight, level=level)


def test_planted_data_has_the_cases():
    # The data must exercise what the tests claim: located groups, one whose
    # stretch spans several of 7 quantile ranges, one inside a single range,
    # and unlocated groups.
    df = planted(1)
    out = expected(df)
    located = out.filter(pl.col("share").is_not_null())["g"].to_list()
    assert {"wide", "narrow", "drop"} <= set(located)
    assert out.filter(pl.col("share").is_null()).height >= 2
    cuts = np.quantile(df["s"].to_numpy(), np.arange(1, 7) / 7)
    wide = out.filter(pl.col("g") == "wide").row(0, named=True)
    assert ((cuts > wide["from_score"]) & (cuts < wide["to_score"])).sum() >= 2
    narrow = out.filter(pl.col("g") == "narrow").row(0, named=True)
    assert not ((cuts > narrow["from_score"]) & (cuts < narrow["to_score"])).any()


@pytest.mark.parametrize(("seed", "response", "weighted"), CASES)
# 1 and 7 ranges in the fast subset; 2 and 64 in the full suite.
@pytest.mark.slow
@pytest.mark.parametrize(
    "ranges",
    [1, pytest.param(2, marks=pytest.mark.slow), 7, pytest.param(64, marks=pytest.mark.slow)],
)
def test_located_like_screen(seed, response, weighted, ranges):
    df = planted(seed, weighted=weighted, response=response)
    weight = "w" if weighted else None
    out = screen_partitioned(df, "g", "s", "r", weight, ranges=ranges, level=1.0)
    assert_same(expected(df), out, ["g"])


@pytest.mark.slow
def test_significance_rule_like_screen():
    # At the default level the second pass locates only the significant groups,
    # and the result is the in-process screen's, rule included.
    df = planted(1)
    want = expected(df, level=0.05)
    assert want.filter(pl.col("kuiper_q") > 0.05).height >= 1
    lines: list[str] = []
    got = screen_partitioned(df, "g", "s", "r", "w", ranges=7, progress=lines.append)
    assert_same(want, got, ["g"])
    quiet = got.filter(pl.col("kuiper_q") > 0.05)
    assert quiet["share"].null_count() == quiet.height
    assert quiet["note"].str.starts_with("not significant: q = ").all()
    located = got.filter(pl.col("share").is_not_null()).height
    assert any(line.endswith(f"pass 2: {located} groups located") for line in lines), lines


@pytest.mark.slow
def test_located_with_several_keys_and_nulls():
    df = planted(5).with_columns(
        pl.when(pl.col("g") == "drop").then(None).otherwise(pl.col("g")).alias("g"),
        (pl.int_range(pl.len()) % 2).alias("h"),
    )
    want = screen(df, ["g", "h"], "s", "r", "w")
    assert want.filter(pl.col("g").is_null())["share"].null_count() < 2
    got = screen_partitioned(df, ["g", "h"], "s", "r", "w", ranges=9)
    assert_same(want, got, ["g", "h"])


@pytest.mark.slow
def test_parquet_adapter_locates(tmp_path):
    df = planted(6)
    df.write_parquet(tmp_path / "a.parquet", row_group_size=500)
    out = screen_parquet(tmp_path / "a.parquet", "g", "s", "r", "w", ranges=11, level=1.0)
    assert out.select("share").null_count().item() < out.height
    assert_same(expected(df), out, ["g"])


@pytest.mark.slow
def test_nothing_located_when_no_group_deviates():
    df = planted(8).filter(pl.col("g").is_in(["null", "other", "flat"]))
    want = expected(df)
    assert want.select(LOCATION_COLUMNS).null_count().row(0) == (want.height,) * 4
    assert_same(want, screen_partitioned(df, "g", "s", "r", "w", ranges=5, level=1.0), ["g"])


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(50, 3000),
    weighted=st.booleans(),
    response=st.sampled_from(["binary", "continuous"]),
    cuts=st.lists(st.floats(0.0, 1.0), max_size=40),
)
def test_random_cuts_locate_like_screen(seed, rows, weighted, response, cuts):
    df = planted(seed, rows=rows, weighted=weighted, response=response)
    out = screen_partitioned(df, "g", "s", "r", "w" if weighted else None, ranges=cuts, level=1.0)
    assert_same(expected(df), out, ["g"])


# --------------------------------------------------------------------------
# The search of a piece of a curve: explicit start point, the sign given
# --------------------------------------------------------------------------


def naive_piece(a0, c0, sign, a, c, limit):
    """Every pair (i, j), 0 = the start point: the shortest valid, earliest end, latest start."""
    a = [a0, *a]
    v = [sign * c0, *[sign * x for x in c]]
    best = None
    for j in range(1, len(v)):
        for i in range(j - 1, -1, -1):
            if v[j] - v[i] >= limit:
                if best is None or a[j] - a[i] < best[0]:
                    best = (a[j] - a[i], i - 1, j - 1)
                break
    return (-1, -1) if best is None else best[1:]


@settings(max_examples=200, deadline=None, database=None)
@given(
    pieces=st.lists(
        st.tuples(
            st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]), min_size=1, max_size=25),
            st.floats(-3.0, 3.0),
            st.sampled_from([1.0, -1.0]),
            st.sampled_from([0.4, 1.0, 2.5, 0.0]),
        ),
        min_size=1,
        max_size=5,
    )
)
@pytest.mark.slow
def test_piece_search_equals_the_naive_one(pieces):
    from polars_cumdev.kernel.location import stretches_from
    from polars_cumdev.method.location import stretches_numpy

    starts, a, c, a0, c0, signs, limits, expected = [0], [], [], [], [], [], [], []
    for steps, start, sign, limit in pieces:
        n = len(steps)
        ai = list(0.5 + np.arange(1, n + 1) / 8.0)  # exact, equally spaced: ties of length
        ci = list(start + np.cumsum(steps) / 4.0)
        starts.append(starts[-1] + n)
        a += ai
        c += ci
        a0.append(0.5)
        c0.append(start)
        signs.append(sign)
        limits.append(limit)
        expected.append(naive_piece(0.5, start, sign, ai, ci, limit) if limit > 0 else (-1, -1))
    arrays = (np.array(starts), np.array(a), np.array(c))
    origins = (np.array(a0), np.array(c0), np.array(signs))
    lower, upper = stretches_from(*arrays, *origins, np.array(limits))
    assert list(zip(lower.tolist(), upper.tolist(), strict=True)) == expected
    lower, upper = stretches_numpy(*arrays, np.array(limits), origins)
    assert list(zip(lower.tolist(), upper.tolist(), strict=True)) == expected


@pytest.mark.slow
def test_compiled_range_step_locates_alike(monkeypatch):
    # The compiled range step (run by the cluster engines) reports the positions of
    # its interior extremes, from which the sign is found, as the Polars step does;
    # the compiled prefix table gives the second pass the same curves.
    from functools import partial

    import polars_cumdev.engines.partitioned.drivers as drivers
    from polars_cumdev.engines.partitioned import range_points, range_step

    monkeypatch.setattr(drivers, "range_step", partial(range_step, compiled=True))
    # and the second pass's running sums by the kernel's prefix table
    monkeypatch.setattr(drivers, "range_points", partial(range_points, compiled=True))
    for seed, weighted in ((9, True), (10, False)):
        df = planted(seed, weighted=weighted)
        weight = "w" if weighted else None
        for ranges in (1, 5):
            out = screen_partitioned(df, "g", "s", "r", weight, ranges=ranges, level=1.0)
            assert_same(expected(df), out, ["g"])
