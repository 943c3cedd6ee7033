"""One small calibration of a DataFrame skips the plan: the same numbers, bit for bit.

``calibration(df, ...)`` with ``engine="auto"``, no ``by`` and a DataFrame
below the kernel's threshold computes its one-row summary from NumPy arrays
(:mod:`polars_cumdev.calibration.in_memory`) and then runs the shared
normalization. Every column must equal the lazy Polars plan's exactly (the
plan runs on the same frame given lazily): with and without ties (one, two
and three decimals), weights (with repeated values, so ties of equal weight
and different responses), 0/1 and soft responses, a significant case (the
stretch is located), a finite-sample case, and bad input named as the plan
names it. Frames of at most 1,500 rows: the whole file takes about 0.5 s.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_cumdev
from polars_cumdev.calibration import cumulative
from polars_cumdev.method import numpy_order
from polars_cumdev.method.numpy_order import _KeySort, canonical_order


def _frame(seed: int, n: int, decimals: int | None, shift: float = 0.0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    if decimals is not None:
        p = np.round(p, decimals)
    truth = np.clip(p + shift * np.sin(6 * p), 0.0, 1.0)
    y = (rng.uniform(size=n) < truth).astype(np.int64)
    w = np.round(rng.lognormal(0.0, 0.6, size=n), 1) + 0.05  # repeated weights
    soft = np.clip(truth + rng.normal(0.0, 0.1, size=n), 0.0, 1.0)
    return pl.DataFrame({"p": p, "y": y, "w": w, "soft": soft})


def _same(df: pl.DataFrame, response: str, weight: str | None) -> pl.DataFrame:
    fast = polars_cumdev.calibration(df, "p", response, weight)
    plan = polars_cumdev.calibration(df.lazy(), "p", response, weight, engine="polars")
    assert_frame_equal(fast, plan.collect(), check_exact=True)
    return fast


@pytest.mark.parametrize(
    ("decimals", "response", "weight"),
    [
        (None, "y", None),
        (None, "soft", "w"),
        (1, "y", "w"),
        (2, "y", None),
        (2, "soft", None),
        (3, "soft", "w"),
    ],
)
def test_in_memory_equals_the_plan(decimals: int | None, response: str, weight: str | None):
    _same(_frame(7, 1500, decimals), response, weight)


@pytest.mark.parametrize("decimals", [2, None])
def test_in_memory_equals_the_plan_where_the_key_sorts_beside(decimals: int | None):
    """60,000 weighted 0/1 rows: with ties the weight's key is sorted on a second thread
    (:mod:`polars_cumdev.method.numpy_order`); without, the probe finds no repeat."""
    _same(_frame(8, 60_000, decimals), "y", "w")


@pytest.mark.parametrize(("decimals", "weight"), [(2, "w"), (None, None)])
def test_located_stretch_equals_the_plan(decimals: int | None, weight: str | None) -> None:
    """Also without weights and ties: every weight 2^-e, no array of them built."""
    out = _same(_frame(8, 1500, decimals, shift=0.15), "y", weight)
    assert out["significant"].to_list() == [True]
    assert out["from_score"].is_not_null().all()


def test_finite_sample_pvalues_equal_the_plan() -> None:
    """Rare events: the summary is a candidate and its p-values are simulated."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.0, 0.02, size=300)
    df = pl.DataFrame({"p": p, "y": (rng.uniform(size=300) < 5 * p).astype(np.float64)})
    assert _same(df, "y", None)["p_method"].to_list() == ["simulated"]


def test_no_plan_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> pl.LazyFrame:
        raise AssertionError("the Polars stages were built for one small calibration")

    monkeypatch.setattr(cumulative, "_polars_summary", refuse)
    assert polars_cumdev.calibration(_frame(9, 200, 2), "p", "y", "w").height == 1
    with pytest.raises(AssertionError, match="Polars stages"):
        polars_cumdev.calibration(_frame(9, 200, 2), "p", "y", "w", engine="polars")


_FIRST_TWO = pl.int_range(pl.len()) < 2


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("p", 1.5, "'p'"),  # outside [0, 1]
        ("p", float("nan"), "'p'"),
        ("p", None, "'p'"),
        ("y", -1.0, "'y'"),
        ("w", 0.0, "'w'"),
        ("w", None, "'w'"),
        ("w", float("inf"), "'w'"),
        ("w", 1e-200, "'w'"),  # beyond the spread a double resolves beside the others
        ("p", "empty", "empty"),
    ],
)
def test_bad_values_named_in_memory(column: str, value: object, named: str) -> None:
    """The error of the first failed check, the plan's, whatever the bad values do to the
    arrays read from the frame (NaN, nulls, no row at all)."""
    df = _frame(4, 200, None)
    if value == "empty":
        df = df.clear()
    else:
        dtype = pl.Float64 if column != "y" else pl.Int64
        bad = pl.lit(value, dtype=pl.Float64).cast(dtype) if value is not None else None
        df = df.with_columns(pl.when(_FIRST_TWO).then(bad).otherwise(pl.col(column)).alias(column))
    with pytest.raises(polars_cumdev.CumdevError, match=named) as fast:
        polars_cumdev.calibration(df, "p", "y", "w")
    with pytest.raises(polars_cumdev.CumdevError) as plan:
        polars_cumdev.calibration(df, "p", "y", "w", engine="polars")
    assert type(fast.value) is type(plan.value) and str(fast.value) == str(plan.value)


def test_the_checks_error_comes_before_the_sorts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks' query runs while the arrays are sorted: where the sort fails on rows the
    checks refuse, the check's error is raised; where the checks pass, the sort's."""
    from polars_cumdev.calibration import in_memory

    def broken(*args: object) -> object:
        raise RuntimeError("the sort failed")

    monkeypatch.setattr(in_memory, "canonical_sort", broken)
    df = _frame(4, 200, None)
    bad = df.with_columns(pl.when(_FIRST_TWO).then(None).otherwise(pl.col("p")).alias("p"))
    with pytest.raises(polars_cumdev.InvalidValuesError, match="'p' has 2 null"):
        polars_cumdev.calibration(bad, "p", "y", "w")
    with pytest.raises(RuntimeError, match="the sort failed"):
        polars_cumdev.calibration(df, "p", "y", "w")


def test_the_checks_run_beside_only_on_the_main_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the main thread the checks' query runs in Polars' background while the arrays are
    sorted; on another thread (which could be one of Polars' own) it runs first. The same
    numbers and the same errors either way."""
    from concurrent.futures import ThreadPoolExecutor

    from polars_cumdev.calibration import in_memory

    asked: list[bool] = []
    counted = in_memory.counted

    def recorded(*args: object, background: bool = False) -> object:
        asked.append(background)
        return counted(*args, background=background)

    monkeypatch.setattr(in_memory, "counted", recorded)
    df = _frame(6, 500, 2)
    bad = df.with_columns(pl.when(_FIRST_TWO).then(0.0).otherwise(pl.col("w")).alias("w"))
    here = polars_cumdev.calibration(df, "p", "y", "w")
    with pytest.raises(polars_cumdev.InvalidValuesError) as error_here:
        polars_cumdev.calibration(bad, "p", "y", "w")
    with ThreadPoolExecutor(1) as pool:
        there = pool.submit(polars_cumdev.calibration, df, "p", "y", "w").result()
        with pytest.raises(polars_cumdev.InvalidValuesError) as error_there:
            pool.submit(polars_cumdev.calibration, bad, "p", "y", "w").result()
    assert asked == [True, True, False, False]
    assert_frame_equal(here, there, check_exact=True)
    assert str(error_here.value) == str(error_there.value)


def test_statistic_not_finite_named_in_memory() -> None:
    """normalize's finiteness check, called directly on the one-row summary in memory,
    raises what the plan's check raises (a total weight beyond the largest double)."""
    df = _frame(5, 200, None).with_columns(w=pl.lit(1e308))
    with pytest.raises(polars_cumdev.InvalidValuesError, match="weight") as fast:
        polars_cumdev.calibration(df, "p", "y", "w")
    with pytest.raises(polars_cumdev.InvalidValuesError) as plan:
        polars_cumdev.calibration(df.lazy(), "p", "y", "w", engine="polars").collect()
    assert str(fast.value) == str(plan.value)


@pytest.mark.parametrize("rows", [400, 60_000])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("binary", [False, True])
def test_canonical_order_sorts_ties_by_weight_then_response(
    weighted: bool, binary: bool, rows: int, monkeypatch: pytest.MonkeyPatch
):
    """Rows the order leaves unsorted are interchangeable: equal, or (no weights, 0/1
    responses) in exact sums. Checked against a sort by the three keys. 60,000 rows:
    weighted 0/1 rows there sort their key on a second thread (counted)."""
    started = []
    monkeypatch.setattr(numpy_order, "_KeySort", lambda w, r: started.append(w) or _KeySort(w, r))
    rng = np.random.default_rng(5)
    s = np.round(rng.uniform(size=rows), 1)
    r = (
        rng.integers(0, 2, size=rows).astype(float)
        if binary
        else np.round(rng.uniform(size=rows), 1)
    )
    w = np.round(rng.uniform(0.5, 1.0, size=rows), 1) if weighted else None
    order = canonical_order(s, w, r)
    assert len(started) == (rows >= numpy_order._PARALLEL_ROWS and weighted and binary)
    full = np.lexsort((r, np.ones(rows) if w is None else w, s))
    assert np.array_equal(s[order], s[full])
    if weighted:
        assert np.array_equal(w[order], w[full])
    if weighted or not binary:
        assert np.array_equal(r[order], r[full])
