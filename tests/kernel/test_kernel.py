"""Issue 13: the compiled kernel against its oracle, the lazy Polars plan.

Both engines must give the same statistics to 1e-12 (they differ only in the
order of a few additions), on random data with ties, weights, non-binary
responses, keys of every kind, and the extreme inputs of issue 12; and the
kernel must stay a node of a lazy plan (pushdown, streaming).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import build_frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_cumdev
from polars_cumdev.errors import InvalidParameterError
from polars_cumdev.method import compiled
from polars_cumdev.subpopulation import screen

RTOL = 1e-12
EXACT = ("n", "n_scores", "variance", "note")
FLOATS = (
    "weight",
    "kuiper",
    "ks",
    "delta",
    "sigma",
    "kuiper_z",
    "ks_z",
    "kuiper_log10p",
    "ks_log10p",
)


def assert_same(polars: pl.DataFrame, kernel: pl.DataFrame, keys, floats=FLOATS, exact=EXACT):
    """Same rows (by key), same exact columns, floats equal to 1e-12 relative."""
    polars, kernel = polars.sort(keys, nulls_last=True), kernel.sort(keys, nulls_last=True)
    assert polars.select(keys).equals(kernel.select(keys))
    for name in exact:
        assert polars[name].to_list() == kernel[name].to_list(), name
    for name in floats:
        a, b = polars[name], kernel[name]
        assert a.is_null().to_list() == b.is_null().to_list(), name
        x, y = a.drop_nulls().to_numpy(), b.drop_nulls().to_numpy()
        scale = np.maximum(np.abs(x), 1e-300)
        worst = float(np.max(np.abs(x - y) / scale)) if x.size else 0.0
        assert worst <= RTOL or np.allclose(x, y, rtol=RTOL, atol=1e-15), (name, worst)


def both(df, **kwargs) -> tuple[pl.DataFrame, pl.DataFrame]:
    options = dict(by="g", score="s", response="r", weight="w") | kwargs
    return (
        df.cumdev.screen(**options, engine="polars"),
        df.cumdev.screen(**options, engine="kernel"),
    )


# The second seed repeats the 27 combinations: the full suite runs it, the fast subset not.
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("response", ["bernoulli", "count", "continuous"])
@pytest.mark.parametrize("scores", ["grid", "mixed", "continuous"])
@pytest.mark.parametrize("weights", ["none", "float", "int"])
def test_kernel_screen_equals_the_plan(seed, response, scores, weights):
    df = build_frame(seed, 1500, response=response, weights=weights, scores=scores)
    weight = None if weights == "none" else "w"
    for variance in ("auto", "empirical"):
        polars, kernel = both(df, weight=weight, variance=variance)
        assert_same(polars, kernel, ["g"])


@pytest.mark.slow
def test_kernel_screen_with_two_keys_and_null_keys():
    df = build_frame(4, 3000, response="continuous", scores="mixed")
    df = df.with_columns(pl.when(pl.col("s") > 0.9).then(None).otherwise(pl.col("g")).alias("g"))
    polars, kernel = both(df, by=["g", "h"])
    assert_same(polars, kernel, ["g", "h"])
    polars, kernel = both(df)
    assert polars["g"].null_count() == 1
    assert_same(polars, kernel, ["g"])


@pytest.mark.parametrize(
    "cast",
    [
        pl.Int32,
        pl.UInt8,
        pl.Int64,
        pl.Categorical,
        pl.Float64,
        pl.Boolean,
        pl.Date,
    ],
)
@pytest.mark.slow
def test_kernel_screen_with_keys_of_every_kind(cast):
    df = build_frame(5, 2000, response="bernoulli", scores="mixed")
    codes = {"big": 0, "mid": 1, "small": 2, "tiny": 3, "pair": 4, "single": 5}
    key = pl.col("g").replace_strict(codes, return_dtype=pl.Int64)
    if cast == pl.Boolean:
        key = key > 2
    elif cast == pl.Categorical:
        key = pl.col("g").cast(pl.Categorical)
    elif cast == pl.Int64:
        key = key * 10**15 - 7  # a range too wide to map by offset
    else:
        key = key.cast(cast)
    polars, kernel = both(df.with_columns(key.alias("k")), by="k")
    assert_same(polars, kernel, ["k"])


@pytest.mark.slow
def test_kernel_curve_equals_the_plan():
    df = build_frame(6, 4000, response="continuous", weights="float", scores="mixed")
    for group in ("big", "small", "single", "pair"):
        options = dict(subpop=pl.col("g") == group, score="s", response="r", weight="w")
        for fraction in (1.0, 0.3) if group in ("big", "small") else (1.0,):
            a = df.cumdev.curve(**options, fraction=fraction, engine="polars")
            b = df.cumdev.curve(**options, fraction=fraction, engine="kernel")
            assert a.columns == b.columns and a.height == b.height
            for name in a.columns:
                x = a[name].cast(pl.Float64).fill_null(0.0).to_numpy()
                y = b[name].cast(pl.Float64).fill_null(0.0).to_numpy()
                np.testing.assert_allclose(y, x, rtol=RTOL, atol=1e-15, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("by", [None, "g", ["g", "h"]])
def test_kernel_calibration_by_group_equals_the_plan(by):
    df = build_frame(7, 3000, response="bernoulli", weights="float", scores="mixed")
    a = df.cumdev.calibration("s", "r", "w", by=by, engine="polars")
    b = df.cumdev.calibration("s", "r", "w", by=by, engine="kernel")
    keys = [by] if isinstance(by, str) else list(by or [])
    if keys:
        a, b = a.sort(keys), b.sort(keys)
    for name in ("n", "n_scores", "note"):
        assert a[name].to_list() == b[name].to_list()
    for name in ("weight", "ecce_r", "ecce_mad", "delta", "sigma", "ecce_r_z", "ecce_mad_z"):
        np.testing.assert_allclose(b[name], a[name], rtol=RTOL, atol=1e-15, err_msg=name)


@pytest.mark.slow
def test_kernel_on_extreme_inputs_equals_the_plan():
    df = build_frame(3, 600, response="continuous", weights="float", scores="grid")
    for w in (
        np.where(np.arange(df.height) % 2 == 0, 1e30, df["w"].to_numpy()),
        np.full(df.height, 1e305),
        np.full(df.height, 5e-324),
    ):
        polars, kernel = both(df.with_columns(w=pl.Series(w)))
        assert_same(polars, kernel, ["g"])
    eps = 2.0**-52
    adjacent = df.with_columns(
        pl.when(pl.col("s") < 0.5).then(1.0 + eps).otherwise(1.0 + 2 * eps).alias("s")
    )
    polars, kernel = both(adjacent)
    assert_same(polars, kernel, ["g"])


def _uneven(binary: bool) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    n_heavy, n_light = 200, 100
    response = rng.integers(0, 2, 300) if binary else rng.normal(0.0, 1.0, 300)
    return pl.DataFrame(
        {
            "g": ["b"] * n_heavy + ["a"] * n_light,
            "s": np.r_[-np.arange(n_heavy, 0, -1.0), np.arange(n_light, dtype=float)],
            "r": response.astype(float),
            "w": np.r_[1e30 * rng.lognormal(0, 1, n_heavy), rng.uniform(0.5, 2, n_light)],
        }
    )


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.slow
def test_kernel_reports_the_same_unresolved_statistics(binary):
    polars, kernel = both(_uneven(binary))
    assert_same(polars, kernel, ["g"])
    assert any("weight column 'w'" in (note or "") for note in kernel["note"].to_list())


@settings(
    deadline=None, max_examples=40, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**31),
    rows=st.integers(2, 300),
    levels=st.sampled_from([2, 5, 40, 10_000]),
    binary=st.booleans(),
    spread=st.sampled_from([0.0, 1.0, 3.0]),
)
@pytest.mark.slow
def test_kernel_equals_the_plan_on_random_small_data(seed, rows, levels, binary, spread):
    rng = np.random.default_rng(seed)
    df = pl.DataFrame(
        {
            "g": rng.integers(0, 4, rows),
            "s": rng.integers(0, levels, rows) / levels,
            "r": rng.integers(0, 2, rows) * 1.0 if binary else rng.normal(0, 1, rows),
            "w": rng.lognormal(0.0, spread, rows),
        }
    )
    polars, kernel = both(df)
    assert_same(polars, kernel, ["g"])


@pytest.mark.slow
def test_kernel_node_keeps_the_plan_lazy():
    df = build_frame(8, 3000, response="bernoulli", scores="mixed")
    lazy = df.lazy().with_columns(pl.col("s") * 2).filter(pl.col("g") != "tiny")
    query = lazy.cumdev.screen(by="g", score="s", response="r", weight="w", engine="kernel")
    assert isinstance(query, pl.LazyFrame)
    plan = query.explain()
    assert "FILTER" in plan or "SELECTION" in plan
    eager = df.with_columns(pl.col("s") * 2).filter(pl.col("g") != "tiny")
    expected = eager.cumdev.screen(by="g", score="s", response="r", weight="w", engine="polars")
    for engine in ("in-memory", "streaming"):
        assert_same(expected, query.collect(engine=engine), ["g"])


@pytest.mark.slow
def test_auto_picks_the_plan_for_small_lazy_frames_at_run_time(monkeypatch):
    df = build_frame(9, 2000, response="continuous", scores="mixed")
    calls = []
    real = compiled.kernel

    def spy():
        calls.append(1)
        return real()

    monkeypatch.setattr(compiled, "kernel", spy)
    lazy = df.lazy().cumdev.screen(by="g", score="s", response="r", weight="w").collect()
    assert calls == []
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 100)
    again = df.lazy().cumdev.screen(by="g", score="s", response="r", weight="w").collect()
    assert calls  # the kernel ran
    assert_same(lazy, again, ["g"])


def test_auto_picks_by_height_for_data_frames(monkeypatch):
    assert compiled.choose("auto", pl.DataFrame({"a": [1]})) == "polars"
    monkeypatch.setattr(compiled, "KERNEL_ROWS", 1)
    assert compiled.choose("auto", pl.DataFrame({"a": [1]})) == "kernel"
    assert compiled.choose("auto", pl.LazyFrame({"a": [1]})) == "at run time"
    assert compiled.choose("polars", pl.DataFrame({"a": [1]})) == "polars"


def test_unknown_engine_is_refused():
    df = build_frame(1, 100)
    with pytest.raises(InvalidParameterError, match="engine"):
        df.cumdev.screen(by="g", score="s", response="r", engine="numba")


BAD_INPUTS = {
    "NaN score": lambda df: df.with_columns(
        pl.when(pl.int_range(pl.len()) == 3).then(float("nan")).otherwise(pl.col("s")).alias("s")
    ),
    "null weight": lambda df: df.with_columns(
        pl.when(pl.int_range(pl.len()) == 5).then(None).otherwise(pl.col("w")).alias("w")
    ),
    "negative weight": lambda df: df.with_columns(-pl.col("w")),
    "infinite response": lambda df: df.with_columns(pl.col("r") / 0.0),
    "empty frame": lambda df: df.clear(),
    "weights spread": lambda df: df.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(1e-200).otherwise(1e200).alias("w")
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.slow
def test_bad_input_raises_the_same_error_under_both_engines(case):
    df = BAD_INPUTS[case](build_frame(2, 400, response="bernoulli"))
    errors = []
    for engine in ("polars", "kernel"):
        for lazy in (False, True):
            frame = df.lazy() if lazy else df
            with pytest.raises(polars_cumdev.CumdevError) as caught:
                out = frame.cumdev.screen(
                    by="g", score="s", response="r", weight="w", engine=engine
                )
                if lazy:
                    out.collect()
            errors.append((type(caught.value), str(caught.value)))
    assert len(set(errors)) == 1, errors


def test_bad_subpopulation_raises_the_same_error_under_both_engines():
    df = build_frame(2, 400, response="bernoulli")
    for subpop in (pl.col("g") == "nobody", pl.when(pl.col("s") > 0.5).then(True)):
        errors = set()
        for engine in ("polars", "kernel"):
            with pytest.raises(polars_cumdev.CumdevError) as caught:
                df.cumdev.curve(subpop, "s", "r", "w", engine=engine)
            errors.add((type(caught.value), str(caught.value)))
        assert len(errors) == 1, errors


def test_the_kernel_gives_the_same_bits_under_both_polars_engines():
    df = build_frame(11, 20_000, response="continuous", weights="float", scores="mixed")
    query = df.lazy().cumdev.screen(by="g", score="s", response="r", weight="w", engine="kernel")
    assert query.collect(engine="in-memory").equals(query.collect(engine="streaming"))


@pytest.mark.slow
def test_the_plan_gives_the_same_bits_on_every_run():
    df = build_frame(12, 20_000, response="continuous", weights="float", scores="mixed")
    query = df.lazy().cumdev.screen(by="g", score="s", response="r", weight="w", engine="polars")
    for engine in ("in-memory", "streaming"):
        first = query.collect(engine=engine)
        assert all(query.collect(engine=engine).equals(first) for _ in range(3))


@pytest.mark.parametrize("ranges", [1, 3, 8])
@pytest.mark.parametrize("response", ["bernoulli", "continuous"])
@pytest.mark.slow
def test_compiled_range_steps_give_the_one_pass_screen(monkeypatch, ranges, response):
    from polars_cumdev.engines.partitioned import screen_partitioned

    monkeypatch.setattr(compiled, "KERNEL_ROWS", 1)  # every range through the kernel
    df = build_frame(13, 3000, response=response, weights="float", scores="mixed")
    one = screen(df, "g", "s", "r", "w", engine="polars")
    parts = screen_partitioned(df, "g", "s", "r", "w", ranges=ranges)
    assert_same(one, parts, ["g"], exact=("n", "n_scores", "variance"))
    uneven = _uneven(binary=response == "bernoulli")
    one = screen(uneven, "g", "s", "r", "w", engine="polars")
    parts = screen_partitioned(uneven, "g", "s", "r", "w", ranges=ranges)
    assert_same(one, parts, ["g"], exact=("n", "n_scores", "variance"))


@pytest.mark.slow
@pytest.mark.parametrize("zeros", ["plus", "minus", "mixed"])
def test_compiled_range_steps_with_signed_zero_scores(monkeypatch, zeros):
    # A range whose scores hold -0.0 is sorted by Polars; the others ride the bucket sort.
    from polars_cumdev.engines.partitioned import screen_partitioned

    monkeypatch.setattr(compiled, "KERNEL_ROWS", 1)  # every range through the kernel
    rng = np.random.default_rng(17)
    n = 1500
    s = np.round(rng.normal(size=n), 1)
    signs = {"plus": 0.0, "minus": -0.0, "mixed": np.where(rng.random(n) < 0.5, -0.0, 0.0)}
    s = np.where(s == 0.0, signs[zeros], s)
    df = pl.DataFrame(
        {
            "g": rng.integers(0, 4, n),
            "s": s,
            "r": (rng.random(n) < 0.4).astype(np.float64),
            "w": rng.integers(1, 4, n).astype(np.float64),
        }
    )
    one = screen(df, "g", "s", "r", "w", engine="polars")
    for ranges in (1, 4):
        parts = screen_partitioned(df, "g", "s", "r", "w", ranges=ranges)
        assert_same(one, parts, ["g"], exact=("n", "n_scores", "variance"))
