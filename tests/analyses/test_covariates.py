"""``score=[...]``: every entry point on Hilbert order, checked against an explicit score."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import covariate_data as data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_hilbert import naive_distance

import polars_cumdev as pc
from polars_cumdev.cli import main
from polars_cumdev.compare import compare, compare_all, compare_curve
from polars_cumdev.covariates.ordering import covariate_names
from polars_cumdev.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidParameterError,
    InvalidValuesError,
)

STATS = ["n", "n_scores", "weight", "kuiper", "ks", "delta", "sigma", "kuiper_z", "kuiper_p"]
LOCATION = ["share", "deviation", "note"]


def naive_order(df: pl.DataFrame, columns: list[str]) -> pl.Series:
    """Dense rank of the Hilbert distance, from rank coordinates, point by point."""
    d = len(columns)
    ranks = [df[c].rank("dense").cast(pl.Int64).to_numpy() - 1 for c in columns]
    distinct = [int(r.max()) + 1 for r in ranks]
    bits = min(63 // d, 32, max(1, (max(distinct) - 1).bit_length()))
    coords = [[(int(v) << bits) // m for v in r] for r, m in zip(ranks, distinct, strict=True)]
    h = [naive_distance(list(p), bits) for p in zip(*coords, strict=True)]
    return pl.Series("order", h).rank("dense").cast(pl.Int64)


@pytest.mark.parametrize("engine", ["polars", "kernel"])
@pytest.mark.slow
def test_one_covariate_reproduces_the_ordinary_screen(engine: str) -> None:
    df = data(corner=0.4)
    plain = pc.screen(df, "g", "x", "r", "w", engine=engine)
    listed = pc.screen(df, "g", ["x"], "r", "w", engine=engine)
    assert listed.select("g", *STATS, *LOCATION).equals(plain.select("g", *STATS, *LOCATION))
    assert listed["from_x"].to_list() == plain["from_score"].to_list()
    assert listed["to_x"].to_list() == plain["to_score"].to_list()
    assert set(listed["ordering"]) == {"hilbert(x)"}


def test_one_covariate_reproduces_the_ordinary_curve() -> None:
    df = data(corner=0.4)
    mask = pl.col("g") == "a"
    plain = pc.curve(df, mask, "y", "r", "w")
    listed = pc.curve(df, mask, ["y"], "r", "w")
    cols = ["k", "a", "cumdiff", "full_mean", "response_mean", "weight", "sigma", "located"]
    assert listed.select(cols).equals(plain.select(cols))
    assert listed["y"].to_list() == plain["score"].to_list()


@pytest.mark.slow
def test_screen_and_curve_equal_an_explicit_hilbert_score() -> None:
    df = data(corner=0.4)
    explicit = df.with_columns(naive_order(df, ["x", "y"])).lazy()  # lazy: same engine path
    want = pc.screen(explicit, "g", "order", "r", "w").collect()
    got = pc.screen(df, "g", ["x", "y"], "r", "w")
    assert got.select("g", *STATS, "from_score", "to_score").equals(
        want.select("g", *STATS, "from_score", "to_score")
    )
    mask = pl.col("g") == "b"
    want_c = pc.curve(explicit, mask, "order", "r", "w").collect()
    got_c = pc.curve(df, mask, ["x", "y"], "r", "w")
    cols = ["score", "cumdiff", "sigma"]
    assert got_c.select(cols).equals(want_c.select(cols))


def test_covariate_values_of_points_and_ends() -> None:
    df = data(corner=0.5)
    c = pc.curve(df, pl.col("g") == "a", ["x", "y"], "r", "w")
    assert covariate_names(c) == ["x", "y"]
    body = c.filter(pl.col("k") > 0)
    # each point's covariates are those of the rows of its Hilbert cell
    order = naive_order(df, ["x", "y"]).cast(pl.Float64)
    cells = (
        df.with_columns(order.alias("score"))
        .group_by("score")
        .agg((pl.col("x") * pl.col("w")).sum() / pl.col("w").sum(), pl.col("y").first())
    )
    joined = body.select("score", "x", "y").join(cells, on="score", suffix="_want")
    assert joined.height == body.height
    np.testing.assert_allclose(joined["x"], joined["x_want"], rtol=1e-12)
    np.testing.assert_array_equal(joined["y"], joined["y_want"])
    assert c.row(0, named=True)["x"] is None


@pytest.mark.slow
def test_comparisons_equal_an_explicit_hilbert_score() -> None:
    df = data(n=800, seed=3)
    explicit = df.with_columns(naive_order(df, ["x", "y"])).lazy()  # lazy: same engine path
    one, two = pl.col("g") == "a", pl.col("g") == "b"
    cols = ["kuiper", "ks", "sigma", "effect", "from_score", "to_score"]
    for run in (compare,):
        want = run(explicit, one, two, "order", "r", ties="dither").collect()
        got = run(df, one, two, ["x", "y"], "r", ties="dither")
        assert got.select(cols).equals(want.select(cols))
        assert got["ordering"].to_list() == ["hilbert(x, y)"]
    want = compare_all(explicit, "g", "c", "order", "r", ties="dither").collect()
    got = compare_all(df, "g", "c", ["x", "y"], "r", ties="dither")
    assert got.select("g", *cols).equals(want.select("g", *cols))
    assert {f"from_{c}" for c in "xy"} <= set(got.columns)
    want = compare_curve(explicit, one, two, "order", "r", ties="dither").collect()
    got = compare_curve(df, one, two, ["x", "y"], "r", ties="dither")
    assert got.select("score", "cumdiff").equals(want.select("score", "cumdiff"))
    assert got["x"].null_count() == 1  # only the origin


@pytest.mark.slow
def test_namespace_methods_take_lists() -> None:
    df = data()
    got = df.cumdev.screen("g", ["x", "y"], "r")
    assert got.equals(pc.screen(df, "g", ["x", "y"], "r"))
    lazy = df.lazy().cumdev.curve(pl.col("g") == "c", ["y", "x"], "r")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["ordering"][0] == "hilbert(y, x)"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 6])
def test_planted_corner_is_detected_and_located(seed: int) -> None:
    df = data(n=12000, seed=seed, corner=0.6, q=0.6, ties=False)
    out = pc.screen(df, "g", ["x", "y"], "r", "w")
    top = out.row(0, named=True)
    assert top["g"] == "a" and top["kuiper_p"] < 1e-6 and top["deviation"] > 0
    # The other groups lie below the full population there (which 'a' lifts),
    # but much less significantly.
    assert out.row(1, named=True)["kuiper_z"] < 0.7 * top["kuiper_z"]
    # Both ends of the located stretch lie at or in the corner.
    ex, ey = np.quantile(df["x"], 0.55), np.quantile(df["y"], 0.55)
    assert top["from_x"] > ex and top["from_y"] > ey
    assert top["to_x"] > ex and top["to_y"] > ey
    qx, qy = np.quantile(df["x"], 0.6), np.quantile(df["y"], 0.6)
    # The located points of the curve are mostly corner points, far above
    # the corner's share of the group.
    points = pc.curve(df, pl.col("g") == "a", ["x", "y"], "r", "w")
    inside = (pl.col("x") > qx) & (pl.col("y") > qy)
    base = points.filter(pl.col("k") > 0).select(inside.mean()).item()
    located = points.filter("located").select(inside.mean()).item()
    assert base < 0.2 and located > 0.6


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1))
@pytest.mark.slow
def test_row_order_does_not_matter(seed: int) -> None:
    df = data(n=300, seed=seed % 7, corner=0.3)
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
    a = pc.screen(df, "g", ["x", "y"], "r", "w").sort("g")
    b = pc.screen(shuffled, "g", ["x", "y"], "r", "w").sort("g")
    cols = ["g", "n_scores", "from_score", "to_score", "from_x", "to_y"]
    assert a.select(cols).equals(b.select(cols))
    np.testing.assert_allclose(a["kuiper"], b["kuiper"], rtol=1e-12)


def test_bad_covariates_are_named() -> None:
    df = data(n=50)
    with pytest.raises(ColumnNotFoundError, match="covariate column 'age'"):
        pc.screen(df, "g", ["x", "age"], "r")
    with pytest.raises(ColumnTypeError, match="covariate column 'g'"):
        pc.screen(df, "g", ["x", "g"], "r")
    with pytest.raises(InvalidParameterError, match="twice"):
        pc.screen(df, "g", ["x", "x"], "r")
    with pytest.raises(InvalidParameterError, match="one or more"):
        pc.screen(df, "g", [], "r")
    bad = df.with_columns(pl.when(pl.col("x") > 1).then(None).otherwise(pl.col("y")).alias("y"))
    with pytest.raises(InvalidValuesError, match=r"covariate column 'y' has .* null"):
        pc.screen(bad, "g", ["x", "y"], "r")
    nan = df.with_columns(pl.lit(float("nan")).alias("y"))
    with pytest.raises(InvalidValuesError, match="covariate column 'y' has 50 NaN"):
        pc.curve(nan, pl.col("g") == "a", ["x", "y"], "r")
    with pytest.raises(InvalidParameterError, match="clash"):
        pc.curve(df.rename({"y": "weight"}), pl.col("g") == "a", ["x", "weight"], "r")


@pytest.mark.slow
def test_cli_several_scores(tmp_path, capsys) -> None:
    path = tmp_path / "d.csv"
    data(n=400).write_csv(path)
    assert main(["screen", str(path), "--by", "g", "--score", "x,y", "--response", "r"]) == 0
    assert "hilbert(x, y)" in capsys.readouterr().err
    out = tmp_path / "c.csv"
    args = ["curve", str(path), "--subpop-column", "g", "--subpop-value", "a"]
    args += ["--score", "x", "--score", "y", "--response", "r", "--out", str(out)]
    assert main(args) == 0
    assert {"x", "y", "ordering"} <= set(pl.read_csv(out).columns)
    code = main(["calibration", str(path), "--score", "x,y", "--response", "r"])
    assert code == 2
    assert "one column" in capsys.readouterr().err


@pytest.mark.slow
def test_null_pvalues_are_uniform_on_hilbert_order() -> None:
    """2,000 groups of 1,000 rows, responses depending on (x, y) alike in every group.

    Each group's screen against the full population is one draw under the null
    hypothesis; the 2,000 p-values are tested against the uniform law. The
    asymptotic p-values lean slightly towards 1 at finite n (the walk is
    discrete), which a KS distance under 0.05 allows; a sigma off by a factor
    of 1.2 either way would not pass.
    """
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(2026)
    groups, size = 2000, 1000
    n = groups * size
    x = rng.normal(size=n)
    y = rng.uniform(size=n)
    p = 1.0 / (1.0 + np.exp(-(x + 2.0 * y - 1.0)))
    df = pl.DataFrame(
        {
            "x": x,
            "y": y,
            "g": np.repeat(np.arange(groups), size),
            "r": (rng.uniform(size=n) < p).astype(np.int8),
            "w": rng.uniform(0.5, 2.0, size=n),
        }
    )
    out = pc.screen(df, "g", ["x", "y"], "r", "w")
    assert out.height == groups
    for column in ("kuiper_p", "ks_p"):
        result = stats.kstest(out[column].to_numpy(), "uniform")
        assert result.statistic < 0.05 and result.pvalue > 0.01, (column, result)


@pytest.mark.slow
def test_paired_takes_lists() -> None:
    from polars_cumdev.paired import paired, paired_curve

    df = data(n=600, seed=4).with_columns(
        (pl.col("r") + 0.1 * pl.col("x")).alias("q"), pl.col("r").cast(pl.Float64).alias("s")
    )
    explicit = df.with_columns(naive_order(df, ["x", "y"])).lazy()
    want = paired(explicit, "order", "q", "s", "w").collect()
    got = paired(df, ["x", "y"], "q", "s", "w")
    cols = ["kuiper", "ks", "sigma", "from_score", "to_score"]
    assert got.select(cols).equals(want.select(cols))
    assert got["ordering"].to_list() == ["hilbert(x, y)"]
    curve = paired_curve(df, ["x", "y"], "q", "s", "w")
    want_curve = paired_curve(explicit, "order", "q", "s", "w").collect()
    assert curve.select("score", "cumdiff").equals(want_curve.select("score", "cumdiff"))
    assert {"x", "y"} <= set(curve.columns)
