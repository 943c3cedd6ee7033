"""Multicalibration: segments, per-segment statistics, family-wise p-values, parents.

Oracles: ``reference_mcgrad`` (a naive transcription of
multicalibration-mcgrad.md) for ``rules="mcgrad"`` with continuous scores, and
``calibration()`` on each segment's rows (itself checked against the naive
transcription of method.md) for the default rules with ties.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import reference_mcgrad as ref

import polars_cumdev as pc
from polars_cumdev.calibration import calibration
from polars_cumdev.errors import CumdevError
from polars_cumdev.multicalibration import multicalibration, segments, subpop, summary
from polars_cumdev.multicalibration.bootstrap import maxima
from polars_cumdev.multicalibration.family import coded_features, subset_ids

REL = 1e-9


def _close(a: float, b: float, rel: float = REL) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


def _data(
    seed: int, n: int = 1500, *, weights: bool, soft: bool, grid: bool = False, nulls: float = 0.05
):
    rng = np.random.default_rng(seed)
    s = rng.integers(1, 16, n) / 16.0 if grid else rng.uniform(0.02, 0.98, n)
    if soft:
        y = np.clip(s + rng.normal(0, 0.3, n), 0, 1)
    else:
        y = (rng.random(n) < np.clip(s + 0.05 * np.sin(7 * s), 0, 1)).astype(np.float64)
    a = rng.choice(["p", "q", "r", "t", "u"], n, p=[0.4, 0.25, 0.15, 0.12, 0.08]).astype(object)
    a[rng.random(n) < nulls] = None
    b = rng.integers(0, 4, n)
    c = rng.normal(size=n)
    c[rng.random(n) < 0.04] = np.nan
    d = np.round(rng.gamma(2.0, 1.0, n), 1)
    frame = pl.DataFrame(
        {
            "s": s,
            "y": y,
            "w": rng.uniform(0.2, 3.0, n),
            "a": pl.Series(a.tolist(), dtype=pl.String),
            "b": b,
            "c": c,
            "d": d,
        }
    )
    return frame, ("w" if weights else None)


def _rowsets(frame: pl.DataFrame, table: pl.DataFrame) -> list[frozenset]:
    indexed = frame.with_row_index("_i")
    return [
        frozenset(indexed.filter(subpop(row)).get_column("_i").to_list())
        for row in table.iter_rows(named=True)
    ]


@pytest.mark.parametrize(
    ("seed", "weights", "soft", "cap", "nulls"),
    [
        (1, True, False, None, 0.05),
        (2, False, False, None, 0.3),  # null among the kept values
        (3, True, True, None, 0.05),
        (4, True, False, 70, 0.05),
    ],
)
@pytest.mark.slow
def test_mcgrad_rules_match_the_transcription(seed, weights, soft, cap, nulls):
    frame, weight = _data(seed, weights=weights, soft=soft, nulls=nulls)
    family = segments(["a", "b"], ["c", "d"], rules="mcgrad", max_segments=cap, chunk=20)
    table = multicalibration(frame, "s", "y", weight, segments=family)
    expected = ref.mcgrad(
        frame["s"].to_numpy(),
        frame["y"].to_numpy(),
        None if weight is None else frame["w"].to_numpy(),
        [frame["a"].to_list(), frame["b"].to_list()],
        [frame["c"].to_list(), frame["d"].to_list()],
        K=cap,
        c=20,
    )
    by_rows = {seg["rows"]: seg for seg in expected["segments"]}
    ours = _rowsets(frame, table)
    assert len(ours) == len(by_rows) == table.height
    assert set(ours) == set(by_rows)
    if cap is not None:
        assert table.height == 80  # c' ceil(K / c') = 20 * 4: MCGrad's over-take
        assert table["dropped"][0] > 0
    checked_p = 0
    for rows, row in zip(ours, table.iter_rows(named=True), strict=True):
        seg = by_rows[rows]
        assert row["n"] == len(rows)
        assert row["depth"] == len(seg["subset"])
        assert _close(row["ecce_r"], seg["ecce"])
        assert _close(row["sigma"], seg["sigma"])
        assert _close(row["ecce_r_z"], seg["z"])
        # MCGrad's 1 - F has an absolute error ~1e-16; its p-values are asymptotic ones
        if seg["p"] > 1e-6 and row["p_method"] == "asymptotic":
            assert _close(row["ecce_r_p"], seg["p"])
            checked_p += 1
    assert checked_p > 10
    got = summary(table).row(0, named=True)
    for name in ("mce", "mce_sigma", "mce_relative", "mde", "mde_relative", "global_ecce"):
        assert _close(got[name], expected[name]), name
    assert _close(got["global_ecce_sigma"], expected["global_ecce_sigma"])
    if expected["mce_pvalue"] > 1e-6:
        assert _close(got["mce_pvalue"], expected["mce_pvalue"])


@pytest.mark.parametrize("weights", [True, False])
@pytest.mark.slow
def test_default_rules_equal_calibration_of_each_segment(weights):
    frame, weight = _data(5, weights=weights, soft=True, grid=True)
    family = segments(["a", "b"], ["c"], depth=2, levels=3, min_rows=30)
    table = multicalibration(frame, "s", "y", weight, segments=family)
    assert table.height > 20
    columns = ["n", "n_scores", "weight", "ecce_r", "ecce_mad", "delta", "sigma", "ecce_r_z"]
    columns += ["ecce_mad_z", "ecce_r_p", "ecce_mad_p"]
    for row in table.iter_rows(named=True):
        part = frame.filter(subpop(row))
        one = calibration(part, "s", "y", weight, engine="polars").row(0, named=True)
        for name in columns:
            assert _close(float(row[name]), float(one[name]), 1e-9), (row["condition"], name)
        wsum = part["w"].sum() if weight else part.height
        mean = (part["y"] * (part["w"] if weight else 1.0)).sum() / wsum
        assert _close(row["response_mean"], mean)
    # the p_family column is Holm's adjustment of the ecce_r_p column, written out
    expected = ref.holm(table["ecce_r_p"].to_list())
    assert all(_close(a, b) for a, b in zip(table["p_family"], expected, strict=True))


@pytest.mark.slow
def test_default_levels_are_deterministic_and_described():
    # counts: u 30, v 30, w 30 (tie broken by value), x 10; nulls their own level
    values = ["w"] * 30 + ["u"] * 30 + ["v"] * 30 + ["x"] * 10 + [None] * 12
    rng = np.random.default_rng(0)
    n = len(values)
    frame = pl.DataFrame({"s": rng.uniform(0.1, 0.9, n), "y": rng.integers(0, 2, n), "g": values})
    family = segments(["g"], depth=1, levels=3, min_rows=1)
    table = multicalibration(frame, "s", "y", segments=family)
    assert sorted(table["g"].drop_nulls().to_list()) == ["(missing)", "(other)", "u", "v"]
    assert table.filter(pl.col("g") == "(other)")["n"][0] == 40
    assert table.filter(pl.col("g") == "(missing)")["n"][0] == 12
    assert table.filter(pl.col("depth") == 0)["n"][0] == n  # the empty conjunction
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    again = multicalibration(shuffled, "s", "y", segments=family)
    assert again.sort("condition").select("g", "n").equals(table.sort("condition").select("g", "n"))


@pytest.mark.slow
def test_row_order_does_not_matter():
    frame, weight = _data(6, weights=True, soft=False, grid=True)
    family = segments(["a", "b"], ["c"], depth=3)
    first = multicalibration(frame, "s", "y", weight, segments=family)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=11)
    second = multicalibration(shuffled, "s", "y", weight, segments=family)
    cols = ["condition", "n", "ecce_r", "sigma", "p_family"]
    a, b = first.sort("condition").select(cols), second.sort("condition").select(cols)
    assert a["condition"].equals(b["condition"])
    for name in cols[1:]:
        assert np.allclose(a[name].to_numpy(), b[name].to_numpy(), rtol=1e-12, atol=0)


def _planted(seed: int, n: int = 20000) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 0.95, n)
    a = rng.choice(["x", "y", "z"], n)
    b = rng.choice(["1", "2", "3"], n)
    c = rng.normal(size=n)
    p = np.where((a == "x") & (b == "2"), np.clip(s + 0.12, 0, 1), s)
    y = (rng.random(n) < p).astype(np.int8)
    return pl.DataFrame({"s": s, "y": y, "a": a, "b": b, "c": c})


@pytest.mark.parametrize("method", ["holm", "bootstrap"])
@pytest.mark.slow
def test_planted_intersection_ranks_first(method):
    frame = _planted(7)
    family = segments(["a", "b"], ["c"], depth=3)
    table = multicalibration(
        frame.lazy(), "s", "y", segments=family, method=method, resamples=199, seed=1
    ).collect()
    top = table.row(0, named=True)
    assert (top["a"], top["b"], top["c"], top["depth"]) == ("x", "2", None, 2)
    assert top["p_family"] < 0.01
    assert top["finding"] == "new"
    assert top["from_score"] is not None  # significant: the stretch is stated
    # inherited variants: its children are significant but weaker than it
    children = table.filter((pl.col("a") == "x") & (pl.col("b") == "2") & pl.col("c").is_not_null())
    assert (children["parent_z"] <= top["ecce_r_z"] + 1e-12).all()
    assert set(children.filter(pl.col("p_family") <= 0.05)["finding"]) <= {"inherited"}
    # its parents (diluted views) are "broader", pointing at it
    for parent in (pl.col("a") == "x", pl.col("b") == "2"):
        row = table.filter(parent & (pl.col("depth") == 1)).row(0, named=True)
        if row["p_family"] <= 0.05:
            assert row["finding"] == "broader" and row["child"] == top["condition"]
    # nothing located where the family-wise p does not support it
    quiet = table.filter(pl.col("p_family") > 0.05)
    assert quiet["from_score"].null_count() == quiet.height
    got = summary(table).row(0, named=True)
    assert got["max_z"] == top["ecce_r_z"] and got["significant"] >= 1


@pytest.mark.slow
def test_bootstrap_walk_reproduces_the_observed_z():
    frame, weight = _data(8, weights=True, soft=False, grid=True)
    family = segments(["a", "b"], ["c", "d"], depth=2)
    table = multicalibration(frame, "s", "y", weight, segments=family)
    ordered = frame.sort("s")
    coded = coded_features(ordered, family)
    subsets = family.subsets()
    numbers, zs = [], []
    for subset in subsets:
        ids, size = subset_ids(coded, subset, ordered.height)
        counts = np.bincount(ids, minlength=size)
        numbers.append(np.flatnonzero(counts >= family.min_rows))
    w = ordered["w"].to_numpy()
    s = ordered["s"].to_numpy()
    # roots = W_g sigma_g from the definition (50), by segment
    roots = []
    for subset, nums in zip(subsets, numbers, strict=True):
        ids, _ = subset_ids(coded, subset, ordered.height)
        for g in nums:
            m = ids == g
            roots.append(math.sqrt(np.sum(w[m] ** 2 * s[m] * (1 - s[m]))))
    zs = maxima(
        coded, subsets, numbers, np.array(roots), s, w, True, 1.0, 0, 0,
        response=ordered["y"].to_numpy(),
    )  # fmt: skip
    assert np.allclose(np.sort(zs), np.sort(table["ecce_r_z"].to_numpy()), rtol=1e-10)


def test_bad_input_is_named():
    frame, _ = _data(9, weights=False, soft=True)
    with pytest.raises(CumdevError, match="'nope'"):
        multicalibration(frame, "s", "y", segments=segments(["nope"]))
    with pytest.raises(CumdevError, match="numerical feature 'a'"):
        multicalibration(frame, "s", "y", segments=segments(numerical=["a"]))
    with pytest.raises(CumdevError, match="0 and 1"):
        multicalibration(frame, "s", "y", segments=segments(["a"]), method="bootstrap")
    with pytest.raises(CumdevError, match="level"):
        multicalibration(frame, "s", "y", segments=segments(["a"]), level=2)
    with pytest.raises(CumdevError, match="depth"):
        segments(["a"], depth=-1)
    # Issue 25, item 14: a huge count was NumPy's raw "Maximum allowed dimension exceeded".
    with pytest.raises(CumdevError, match="`resamples` must be at most 100,000,000"):
        multicalibration(frame, "s", "y", segments=segments(["a"]), resamples=10**30)


@pytest.mark.slow
def test_uncapped_family_counts_and_cap_drops_smallest():
    frame, _ = _data(10, weights=False, soft=False)
    family = segments(["a", "b"], ["c", "d"], depth=3, min_rows=1)
    full = multicalibration(frame, "s", "y", segments=family)
    capped_family = segments(["a", "b"], ["c", "d"], depth=3, min_rows=1, max_segments=50)
    capped = multicalibration(frame, "s", "y", segments=capped_family)
    assert capped.height == 50 and capped["dropped"][0] == full.height - 50
    assert capped["n"].min() >= full["n"].sort(descending=True)[49]


@pytest.mark.parametrize("weights", [True, False])
@pytest.mark.slow
def test_screen_by_segments_equals_screen_of_each_segment(weights):
    frame, weight = _data(12, n=1200, weights=weights, soft=False, grid=True)
    family = segments(["a", "b"], ["c"], depth=2, min_rows=40)
    table = pc.screen(frame, family, "s", "y", weight)
    assert table.height > 15 and table["depth"].min() == 1  # the full population is the reference
    columns = ["n", "n_scores", "weight", "kuiper", "ks", "delta", "sigma", "kuiper_z", "kuiper_p"]
    for row in table.iter_rows(named=True):
        marked = frame.with_columns(subpop(row).alias("_member"))
        one = pc.screen(marked, "_member", "s", "y", weight, engine="polars")
        one = one.filter(pl.col("_member")).row(0, named=True)
        for name in columns:
            assert _close(float(row[name]), float(one[name]), 1e-9), (row["condition"], name)
    expected = ref.holm(table["kuiper_p"].to_list())
    assert all(_close(a, b) for a, b in zip(table["p_family"], expected, strict=True))
    quiet = table.filter(pl.col("p_family") > 0.05)
    assert quiet["from_score"].null_count() == quiet.height


@pytest.mark.slow
def test_feature_levels_override_levels():
    frame, _ = _data(13, weights=False, soft=False)
    family = segments(["a"], ["c"], depth=1, min_rows=1, feature_levels={"a": 10})
    table = multicalibration(frame, "s", "y", segments=family)
    assert set(table["a"].drop_nulls()) == {"p", "q", "r", "t", "u", "(missing)"}
    assert table.filter(pl.col("c").is_not_null()).height == 4  # 3 quantile bins + (missing)
    with pytest.raises(CumdevError, match="not a feature"):
        segments(["a"], feature_levels={"b": 4})


@pytest.mark.slow
def test_bundled_example_finds_the_built_in_counties():
    from polars_cumdev.datasets import census_scored

    family = segments(
        ["county"], ["vehicles", "children", "log10_income"], depth=2, feature_levels={"county": 41}
    )
    table = census_scored().cumdev.multicalibration(
        "score", "has_internet", "WGTP", segments=family
    )
    new = table.filter(pl.col("finding") == "new")
    assert set(new["county"]) == {"Marlow", "Cedar"}
    assert (new["depth"] == 1).all()


def test_locate_false_skips_only_the_located_stretch():
    """``locate=False`` (what recalibration's rounds use): every column the same bits except the
    located stretch (null) and its note; a non-boolean is a clear error."""
    from polars_cumdev.method.location import LOCATION_COLUMNS

    rng = np.random.default_rng(5)
    n = 4000
    a, x = rng.integers(0, 3, n), rng.normal(size=n)
    p = rng.random(n)
    y = (rng.random(n) < np.clip(p + 0.2 * (a == 1), 0, 1)).astype(float)
    frame = pl.DataFrame({"a": a, "x": x, "p": p, "y": y})
    family = segments(["a"], ["x"], depth=2, levels=3)
    full = multicalibration(frame, "p", "y", segments=family)
    fast = multicalibration(frame, "p", "y", segments=family, locate=False)
    assert full.get_column("from_score").is_not_null().any()
    assert fast.select(pl.col(LOCATION_COLUMNS).is_null().all()).row(0) == (True,) * 4
    same = [c for c in full.columns if c not in (*LOCATION_COLUMNS, "note")]
    assert fast.select(same).equals(full.select(same))
    with pytest.raises(CumdevError, match="locate"):
        multicalibration(frame, "p", "y", segments=family, locate="no")
